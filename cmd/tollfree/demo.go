package main

import (
	"context"
	"errors"
	"io"
)

// demo is a placeholder until its subcommand is built.
func demo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("not built yet")
}
