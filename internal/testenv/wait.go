package testenv

import (
	"testing"
	"time"
)

// WaitFor polls until cond holds, bounded by 10 s of real time: for real
// network events (a call reaching the emulator) only, never for a clock.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
