package main

// Placeholders for subcommands being written; each moves to its own file.

import (
	"context"
	"errors"
	"io"
)

var errNotYet = errors.New("not built yet")

func demo(ctx context.Context, args []string, stdout, stderr io.Writer) error     { return errNotYet }
func doctor(ctx context.Context, args []string, stdout, stderr io.Writer) error   { return errNotYet }
func simulate(ctx context.Context, args []string, stdout, stderr io.Writer) error { return errNotYet }
func logCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error   { return errNotYet }
