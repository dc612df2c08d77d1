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

// TestLatencyAwareLearnsFromLostRaces: a route that hangs and keeps losing
// hedges is not rested (a lost race is no failure), but a latency-aware
// chain stops putting it first, so later requests no longer pay the hedge
// delay.
func TestLatencyAwareLearnsFromLostRaces(t *testing.T) {
	h := newHarness(t, `
chains:
  quick:
    latency_aware: true
    hedge_delay: 3s
    routes:
      - {route: groq/llama-3.3-70b-versatile, rank: 1}
      - {route: cerebras/gpt-oss-120b, rank: 1}
    attempt_timeout: 8s
    deadline: 20s
`)
	// Both measured once: groq fast, cerebras a little slower.
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Delay: 100 * time.Millisecond})
	done := h.askAsync("quick")
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	h.clk.Advance(100 * time.Millisecond)
	<-done
	// Now groq hangs: the hedge to cerebras wins after 3 s.
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 200 * time.Millisecond})
	done = h.askAsync("quick")
	h.waitCalls("groq", "llama-3.3-70b-versatile", 2)
	h.clk.Advance(3 * time.Second)
	h.waitCalls("cerebras", "gpt-oss-120b", 1)
	h.clk.Advance(200 * time.Millisecond)
	if r := <-done; r.json(t)["model"] != "cerebras/gpt-oss-120b" {
		t.Fatalf("hedged request answered by %v", r.json(t)["model"])
	}
	h.gw.Router().Close()
	if _, ok := h.rest("groq/llama-3.3-70b-versatile"); ok {
		t.Fatal("a lost race rested the route")
	}
	// groq's lost race (3.2 s of silence) now weighs on its average: the
	// next request goes to cerebras first and is answered without a hedge.
	if r := h.ask("quick"); r.json(t)["model"] != "cerebras/gpt-oss-120b" {
		t.Fatalf("next request answered by %v, want the route that did not hang", r.json(t)["model"])
	}
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 2 {
		t.Errorf("groq calls = %d, want 2", n)
	}
}
