package route

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// TestDeadlineBudgetedBackwards (issue 32): each attempt's timeout leaves
// the next route its first-token timeout out of what is left of the
// deadline, and when what is left is less than twice that, the two share
// it. Four routes of 8 s attempts under a 25 s deadline, the first three
// hung, the fourth answering in 3 s: the first two get their 8 s, the
// third 4.5 s of the 9 s left, and the fourth answers with 4.5 s to spare.
// The old router gave the third its whole 8 s and the fourth the last 1 s:
// the fourth was cut before its answer, and the request failed.
func TestDeadlineBudgetedBackwards(t *testing.T) {
	s := newStack(t, answerChain)
	hung := []struct {
		provider, model string
		cut             time.Duration // when its attempt is cut, from t0
	}{
		{"groq", "llama-3.3-70b-versatile", 8 * time.Second},
		{"groq", "llama-3.1-8b-instant", 16 * time.Second},
		{"gemini", "gemini-2.5-flash-lite", 20*time.Second + 500*time.Millisecond},
	}
	for _, h := range hung {
		s.emu.Script(h.provider, h.model, emulator.Step{Kind: emulator.Hang})
	}
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 3 * time.Second})
	done := s.askAsync("answer")
	for _, h := range hung {
		s.waitCalls(h.provider, h.model, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := s.clk.BlockUntilDeadline(ctx, t0.Add(h.cut))
		cancel()
		if err != nil {
			s.clk.Set(t0.Add(time.Hour)) // end the request, for the cleanup
			got := <-done
			t.Fatalf("the attempt on %s/%s is not cut at t0+%v (%v); the request ended with %v", h.provider, h.model, h.cut, err, got)
		}
		s.clk.Set(t0.Add(h.cut))
	}
	s.waitCalls("cerebras", "gpt-oss-120b", 1)
	answered := t0.Add(23*time.Second + 500*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.clk.BlockUntilDeadline(ctx, answered); err != nil {
		s.clk.Set(t0.Add(time.Hour))
		got := <-done
		t.Fatalf("the last route is not answering at t0+23.5s (%v); the request ended with %v", err, got)
	}
	s.clk.Set(answered)
	got := <-done
	if got.err != nil || got.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("got %v, want the last route's answer", got)
	}
	// The first two timed out on their own timeout and rest; the third was
	// cut short of it, to leave time for the fourth: it rests nothing.
	for _, h := range hung[:2] {
		if r, ok := s.rest(h.provider + "/" + h.model); !ok || r.Class != "timeout" {
			t.Errorf("%s/%s: rest %+v (found %v), want a timeout rest", h.provider, h.model, r, ok)
		}
	}
	if r, ok := s.rest("gemini/gemini-2.5-flash-lite"); ok {
		t.Errorf("the route cut at its share of the deadline rests: %+v", r)
	}
}
