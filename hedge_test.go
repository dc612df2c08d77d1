package tollfree_test

import (
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

const hedgeChains = `
chains:
  fast:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
    hedge_delay: 3s
  careful:
    routes: [groq/llama-3.3-70b-versatile, gemini/gemini-2.5-flash, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
    hedge_delay: 3s
`

// noReply fails the test if a reply has already arrived.
func noReply(t *testing.T, ch <-chan reply, when string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s: a reply already arrived: %d %s", when, r.status, r.body)
	default:
	}
}

// TestHedgeRacesASlowRoute: the first route hangs; after the hedge delay the
// next route (plenty of quota) starts alongside and its answer wins, 3 s
// plus its own latency after the request; the hung attempt is cancelled,
// counted, logged as cancelled, and not rested.
func TestHedgeRacesASlowRoute(t *testing.T) {
	h := newHarness(t, hedgeChains)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 400 * time.Millisecond})
	done := h.askAsync("fast")
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	h.clk.Advance(3*time.Second - time.Millisecond)
	if n := h.emu.Calls("cerebras", "gpt-oss-120b"); n != 0 {
		t.Fatalf("hedged before the delay: %d calls", n)
	}
	h.clk.Advance(time.Millisecond)
	h.waitCalls("cerebras", "gpt-oss-120b", 1)
	h.clk.Advance(399 * time.Millisecond)
	noReply(t, done, "3.399 s")
	h.clk.Advance(time.Millisecond)
	got := <-done
	if got.status != 200 || got.json(t)["model"] != "cerebras/gpt-oss-120b" {
		t.Fatalf("got %d %s", got.status, got.body)
	}
	h.gw.Router().Close() // the loser is wound down and recorded
	atts := h.recs.forRequest(got.header.Get("X-Request-Id"))
	var winner, loser bool
	for _, a := range atts {
		switch {
		case a.Route == "cerebras/gpt-oss-120b" && a.Class.String() == "ok" && a.Hedge:
			winner = true
			// The answer came 3 s (the hedge delay) plus the route's 400 ms
			// after the request.
			if got := a.Start.Add(a.Latency).Sub(t0); got != 3400*time.Millisecond || a.Latency != 400*time.Millisecond {
				t.Errorf("answer at %s after the request (route latency %s), want 3.4s (400ms)", got, a.Latency)
			}
		case a.Route == "groq/llama-3.3-70b-versatile" && a.Class.String() == "cancelled":
			loser = true
		}
	}
	if !winner || !loser {
		t.Fatalf("attempts = %+v, want a hedged ok winner and a cancelled loser", atts)
	}
	if _, ok := h.rest("groq/llama-3.3-70b-versatile"); ok {
		t.Error("the loser of a hedge rests")
	}
	// Both calls count against their routes' quota.
	for _, id := range []string{"groq/llama-3.3-70b-versatile", "cerebras/gpt-oss-120b"} {
		left, err := h.gw.Budget().Left(t.Context(), h.plan.Routes[id])
		if err != nil {
			t.Fatal(err)
		}
		if left.Route.RPD.Used != 1 {
			t.Errorf("%s: %d requests counted today, want 1", id, left.Route.RPD.Used)
		}
	}
}

// TestHedgeNeverOntoAScarceRoute: a 20-a-day route is never started as a
// hedge; it gets its turn only when the hung route fails at its timeout.
// The hung route then rests, and the next request does not wait at all.
func TestHedgeNeverOntoAScarceRoute(t *testing.T) {
	h := newHarness(t, hedgeChains)
	if !h.plan.Routes["gemini/gemini-2.5-flash"].Scarce {
		t.Fatal("gemini/gemini-2.5-flash should be scarce (20 RPD)")
	}
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	done := h.askAsync("careful")
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	h.clk.Advance(5 * time.Second)
	noReply(t, done, "5 s")
	if n := h.emu.Calls("gemini", "gemini-2.5-flash") + h.emu.Calls("cerebras", "gpt-oss-120b"); n != 0 {
		t.Fatalf("a hedge started: %d calls", n)
	}
	h.clk.Advance(3 * time.Second) // groq's attempt timeout
	got := <-done
	if got.json(t)["model"] != "gemini/gemini-2.5-flash" {
		t.Fatalf("answered by %v, want the scarce route after the timeout", got.json(t)["model"])
	}
	if r, ok := h.rest("groq/llama-3.3-70b-versatile"); !ok || r.Class != "timeout" {
		t.Fatalf("hung route rest = %+v %v, want a timeout rest", r, ok)
	}
	// The hung route rests: the next request is answered without the clock
	// moving at all.
	start := h.clk.Now()
	next := h.ask("careful")
	if next.status != 200 || h.clk.Now() != start {
		t.Fatalf("next request: %d after %s", next.status, h.clk.Now().Sub(start))
	}
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 1 {
		t.Errorf("resting route called again: %d calls", n)
	}
}
