package main

import (
	"context"
	"errors"
	"io"
)

// simulate is a placeholder until its subcommand is built.
func simulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("not built yet")
}
