package main

import (
	"context"
	"errors"
	"io"
)

// doctor is a placeholder until its subcommand is built.
func doctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("not built yet")
}
