package main

import (
	"io"
	"os"
)

// progressTo returns w when it is a terminal, for progress that is
// rewritten in place ("\r"), and io.Discard otherwise: a log file or a
// pipe gets the results, never the bar.
func progressTo(w io.Writer) io.Writer {
	if isTerminal(w) {
		return w
	}
	return io.Discard
}

// isTerminal reports whether w is a character device (a terminal). The
// command line wraps its streams (secret.Writer), so it looks through
// anything that says what it wraps.
func isTerminal(w io.Writer) bool {
	for {
		switch x := w.(type) {
		case *os.File:
			fi, err := x.Stat()
			return err == nil && fi.Mode()&os.ModeCharDevice != 0
		case interface{ Unwrap() io.Writer }:
			w = x.Unwrap()
		default:
			return false
		}
	}
}
