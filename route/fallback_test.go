package route

import (
	"errors"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

const exhaustChains = `
chains:
  strict:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 5s
    deadline: 12s
`

// TestExhaustedSaysWhenToComeBack: when every route fails, the chain ends
// with an ExhaustedError whose RetryAt is the soonest recovery (the HTTP
// API's Retry-After, or the chain's fallback answers instead: the
// end-to-end TestFallbacks); while both rest, no provider is called and the
// answer is immediate.
func TestExhaustedSaysWhenToComeBack(t *testing.T) {
	s := newStack(t, exhaustChains)
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 40 * time.Second})
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.HighDemand})
	got := s.ask("strict")
	var ex *ExhaustedError
	if !errors.As(got.err, &ex) {
		t.Fatalf("got %v, want an ExhaustedError", got)
	}
	// groq rests 40 s (its retry-after), cerebras 30 s (overloaded): the
	// soonest is 30 s.
	if !ex.RetryAt.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("RetryAt = %v, want t0+30s", ex.RetryAt)
	}
	// While both rest, no provider is called and the answer is immediate.
	n := len(s.emu.Records())
	if again := s.ask("strict"); !errors.As(again.err, &ex) || len(s.emu.Records()) != n || s.clk.Now() != t0 {
		t.Errorf("second request: %v, %d new calls, after %s", again, len(s.emu.Records())-n, s.clk.Now().Sub(t0))
	}
}

// TestChainDeadlineEndsTheWalk: routes that hang are cut, the first by its
// attempt timeout and the next by the chain's deadline, which ends the
// request there (no hang past it). A route cut by the chain's deadline,
// not by its own timeout, does not rest; the one that timed out on its own
// does.
func TestChainDeadlineEndsTheWalk(t *testing.T) {
	s := newStack(t, exhaustChains)
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Hang})
	done := s.askAsync("strict")
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.clk.Advance(5 * time.Second) // groq's attempt timeout
	s.waitCalls("cerebras", "gpt-oss-120b", 1)
	s.clk.Advance(7 * time.Second) // the chain's deadline, 12 s
	got := <-done
	var ex *ExhaustedError
	if !errors.As(got.err, &ex) {
		t.Fatalf("got %v, want an ExhaustedError", got)
	}
	if _, ok := s.rest("cerebras/gpt-oss-120b"); ok {
		t.Errorf("a route cut by the chain's deadline rests")
	}
	if r, ok := s.rest("groq/llama-3.3-70b-versatile"); !ok || r.Class != "timeout" {
		t.Errorf("groq rest = %+v, %v", r, ok)
	}
}
