package tollfree_test

import (
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// TestLatencyAwareOrder: among healthy routes of the same rank, a
// latency-aware chain prefers the one that has been answering faster
// (seed 004's wish), while a route of a better rank still goes first.
func TestLatencyAwareOrder(t *testing.T) {
	h := newHarness(t, `
chains:
  quick:
    latency_aware: true
    routes:
      - {route: groq/llama-3.3-70b-versatile, rank: 1}
      - {route: cerebras/gpt-oss-120b, rank: 1}
    attempt_timeout: 8s
    deadline: 20s
`)
	// Request 1: groq answers, slowly.
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Delay: 2 * time.Second})
	done := h.askAsync("quick")
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	h.clk.Advance(2 * time.Second)
	if r := <-done; r.json(t)["model"] != "groq/llama-3.3-70b-versatile" {
		t.Fatalf("request 1 answered by %v", r.json(t)["model"])
	}
	// Request 2: groq is overloaded; cerebras answers, fast.
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 100 * time.Millisecond})
	done = h.askAsync("quick")
	h.waitCalls("cerebras", "gpt-oss-120b", 1)
	h.clk.Advance(100 * time.Millisecond)
	if r := <-done; r.json(t)["model"] != "cerebras/gpt-oss-120b" {
		t.Fatalf("request 2 answered by %v", r.json(t)["model"])
	}
	// Once groq's rest is over, both are healthy: the faster goes first.
	h.clk.Advance(31 * time.Second)
	if r := h.ask("quick"); r.json(t)["model"] != "cerebras/gpt-oss-120b" {
		t.Fatalf("request 3 answered by %v, want the faster route", r.json(t)["model"])
	}
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 2 {
		t.Errorf("groq calls = %d, want 2 (the slower route is not tried first)", n)
	}
}
