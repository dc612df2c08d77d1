package main

import (
	"context"
	"errors"
	"io"
)

// logCmd is a placeholder until its subcommand is built.
func logCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("not built yet")
}
