package route

import (
	"net/http"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// TestLatencyAwareOrder: among healthy routes of the same rank, a
// latency-aware chain prefers the one that has been answering faster
// (seed 004's wish), while a route of a better rank still goes first.
func TestLatencyAwareOrder(t *testing.T) {
	s := newStack(t, `
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
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Delay: 2 * time.Second})
	done := s.askAsync("quick")
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.clk.Advance(2 * time.Second)
	if r := <-done; r.route() != "groq/llama-3.3-70b-versatile" {
		t.Fatalf("request 1 answered by %v", r)
	}
	// Request 2: groq is overloaded; cerebras answers, fast.
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 100 * time.Millisecond})
	done = s.askAsync("quick")
	s.waitCalls("cerebras", "gpt-oss-120b", 1)
	s.clk.Advance(100 * time.Millisecond)
	if r := <-done; r.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("request 2 answered by %v", r)
	}
	// Once groq's rest is over, both are healthy: the faster goes first.
	s.clk.Advance(31 * time.Second)
	if r := s.ask("quick"); r.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("request 3 answered by %v, want the faster route", r)
	}
	if n := s.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 2 {
		t.Errorf("groq calls = %d, want 2 (the slower route is not tried first)", n)
	}
}

// TestLatencyAwareLearnsFromLostRaces: a route that hangs and keeps losing
// hedges is not rested (a lost race is no failure), but a latency-aware
// chain stops putting it first, so later requests no longer pay the hedge
// delay.
func TestLatencyAwareLearnsFromLostRaces(t *testing.T) {
	s := newStack(t, `
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
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Delay: 100 * time.Millisecond})
	done := s.askAsync("quick")
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.clk.Advance(100 * time.Millisecond)
	<-done
	// Now groq hangs: the hedge to cerebras wins after 3 s.
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 200 * time.Millisecond})
	done = s.askAsync("quick")
	s.waitCalls("groq", "llama-3.3-70b-versatile", 2)
	s.clk.Advance(3 * time.Second)
	s.waitCalls("cerebras", "gpt-oss-120b", 1)
	s.clk.Advance(200 * time.Millisecond)
	if r := <-done; r.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("hedged request answered by %v", r)
	}
	s.r.Close()
	if _, ok := s.rest("groq/llama-3.3-70b-versatile"); ok {
		t.Fatal("a lost race rested the route")
	}
	// groq's lost race (3.2 s of silence) now weighs on its average: the
	// next request goes to cerebras first and is answered without a hedge.
	if r := s.ask("quick"); r.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("next request answered by %v, want the route that did not hang", r)
	}
	if n := s.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 2 {
		t.Errorf("groq calls = %d, want 2", n)
	}
}

// TestLatencyAwareOrderSurvivesRestart: the latencies a router measured are
// kept in the store, so a new router on the same store (a restart, or a
// config reload) puts the faster route first before measuring anything.
func TestLatencyAwareOrderSurvivesRestart(t *testing.T) {
	s := newStack(t, `
chains:
  quick:
    latency_aware: true
    routes:
      - {route: groq/llama-3.3-70b-versatile, rank: 1}
      - {route: cerebras/gpt-oss-120b, rank: 1}
    attempt_timeout: 8s
    deadline: 20s
`)
	// groq answers slowly, then is overloaded; cerebras answers fast.
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Delay: 2 * time.Second})
	done := s.askAsync("quick")
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.clk.Advance(2 * time.Second)
	<-done
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 100 * time.Millisecond})
	done = s.askAsync("quick")
	s.waitCalls("cerebras", "gpt-oss-120b", 1)
	s.clk.Advance(100 * time.Millisecond)
	if r := <-done; r.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("request 2 answered by %v", r)
	}
	s.clk.Advance(31 * time.Second) // groq's rest is over

	// Restart: a new router on the same store.
	s.r.Close()
	r, err := New(Options{Plan: s.plan, Upstreams: upstreams(s.plan, &http.Client{Transport: s.seen}), Store: s.store, Budget: s.budget, Clock: s.clk, Recorder: s.recs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	s.r = r
	if r := s.ask("quick"); r.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("after a restart, answered by %v, want the faster route", r)
	}
	if n := s.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 2 {
		t.Errorf("groq calls = %d, want 2 (after a restart the slower route is not tried first)", n)
	}
}
