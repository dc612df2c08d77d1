// Package testenv owns what end-to-end tests need from the machine they run
// on: a Redis to share state through (the one on 127.0.0.1:6379 or
// REDIS_URL, or a private redis-server the test starts, kills and restarts),
// a namespace of keys that is deleted when the test ends, and the tollfree
// binary built once per test run. It is imported by tests only.
//
// A test that needs something the machine lacks is skipped with a message
// saying what to start, unless the environment variable CI is set: CI never
// skips (issue 5).
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// Unavailable skips tb with msg, or fails it when CI is set.
func Unavailable(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatal(msg + " (CI is set, so this fails instead of skipping)")
	}
	tb.Skip(msg)
}

func unavailablef(tb testing.TB, format string, args ...any) {
	tb.Helper()
	Unavailable(tb, fmt.Sprintf(format, args...))
}
