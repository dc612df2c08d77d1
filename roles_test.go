package tollfree_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
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
	h := newHarnessEnv(t, "", plannerEnv)
	ch := h.plan.Chains["planner"]
	if ch == nil || !ch.SameModel || ch.Interactive {
		t.Fatalf("planner chain = %+v, want a same-model, non-interactive chain", ch)
	}
	h.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 90 * time.Second})
	h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.RateMinute})
	done := h.askAsync("planner")
	h.waitCalls("cerebras", "gpt-oss-120b", 1)
	// cerebras names no wait: it rests the minimum, 20 s, the soonest. Wait
	// until the chain sleeps on the clock until then.
	if err := h.clk.BlockUntilDeadline(t.Context(), t0.Add(20*time.Second)); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(19 * time.Second)
	notYet(t, done, "19 s")
	h.clk.Advance(time.Second)
	got := <-done
	if got.status != 200 || got.json(t)["model"] != "cerebras/gpt-oss-120b" {
		t.Fatalf("got %d %s", got.status, got.body)
	}
	if n := h.emu.Calls("cerebras", "gpt-oss-120b"); n != 2 {
		t.Errorf("cerebras calls = %d, want 2 (the limited call, then the one after the wait)", n)
	}
}

// TestRoleChainFailsAtOnceOverItsCap: a wait longer than the cap fails at
// once with an error naming each limited route and until when.
func TestRoleChainFailsAtOnceOverItsCap(t *testing.T) {
	h := newHarnessEnv(t, "", plannerEnv)
	h.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.RateDay, RetryAfter: 3 * time.Hour})
	h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.RateDay})
	got := h.ask("planner")
	if got.status != 503 {
		t.Fatalf("status = %d, want 503: %s", got.status, got.body)
	}
	msg := got.json(t)["error"].(map[string]any)["message"].(string)
	for _, want := range []string{"groq/openai/gpt-oss-120b", "cerebras/gpt-oss-120b", "until 2026-06-15T13:00:00Z", "wait cap"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
	if h.clk.Now() != t0 {
		t.Errorf("the chain waited %s", h.clk.Now().Sub(t0))
	}
}

// TestRoleConfigErrors: a role naming a different model, or with the wrong
// syntax, is a config error naming the variable.
func TestRoleConfigErrors(t *testing.T) {
	tests := []struct{ value, want string }{
		{"openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:cerebras:llama3.1-8b", "PLANNER_MODEL"},
		{"groq/openai/gpt-oss-120b", "PLANNER_MODEL"},
	}
	for _, tt := range tests {
		env := func(k string) string {
			if k == "PLANNER_MODEL" {
				return tt.value
			}
			return testKeys[k]
		}
		_, err := config.Parse("t.yaml", []byte("providers:\n  groq: {}\n  cerebras: {}\n"), env)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want one naming %s", tt.value, err, tt.want)
		}
	}
}
