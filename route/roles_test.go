package route

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

var plannerEnv = map[string]string{
	"PLANNER_MODEL": "openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:cerebras:gpt-oss-120b",
}

// TestRoleChainWaitsForItsSoonestRoute: a role from the environment is a
// same-model chain; when all its routes are limited it waits for the
// soonest retry-after (within its cap) and tries again, never switching to
// another model (seed 002).
func TestRoleChainWaitsForItsSoonestRoute(t *testing.T) {
	s := newStackWith(t, stackOptions{env: plannerEnv})
	ch := s.plan.Chains["planner"]
	if ch == nil || !ch.SameModel || ch.Interactive {
		t.Fatalf("planner chain = %+v, want a same-model, non-interactive chain", ch)
	}
	s.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 90 * time.Second})
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.RateMinute})
	done := s.askAsync("planner")
	s.waitCalls("cerebras", "gpt-oss-120b", 1)
	// cerebras names no wait: it rests the minimum, 20 s, the soonest. Wait
	// until the chain sleeps on the clock until then.
	if err := s.clk.BlockUntilDeadline(t.Context(), t0.Add(20*time.Second)); err != nil {
		t.Fatal(err)
	}
	s.clk.Advance(19 * time.Second)
	noAnswer(t, done, "19 s")
	s.clk.Advance(time.Second)
	got := <-done
	if got.err != nil || got.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("got %v", got)
	}
	if n := s.emu.Calls("cerebras", "gpt-oss-120b"); n != 2 {
		t.Errorf("cerebras calls = %d, want 2 (the limited call, then the one after the wait)", n)
	}
}

// TestRoleChainFailsAtOnceOverItsCap: a wait longer than the cap fails at
// once with an ExhaustedError naming each limited route and until when
// (the HTTP API's 503 carries its text: httpapi's TestServerOnlyEncodes).
func TestRoleChainFailsAtOnceOverItsCap(t *testing.T) {
	s := newStackWith(t, stackOptions{env: plannerEnv})
	s.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.RateDay, RetryAfter: 3 * time.Hour})
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.RateDay})
	got := s.ask("planner")
	var ex *ExhaustedError
	if !errors.As(got.err, &ex) {
		t.Fatalf("got %v, want an ExhaustedError", got)
	}
	msg := ex.Error()
	for _, want := range []string{"groq/openai/gpt-oss-120b", "cerebras/gpt-oss-120b", "until 2026-06-15T13:00:00Z", "wait cap"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
	if s.clk.Now() != t0 {
		t.Errorf("the chain waited %s", s.clk.Now().Sub(t0))
	}
}
