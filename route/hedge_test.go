package route

import (
	"strings"
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

// TestHedgeRacesASlowRoute: the first route hangs; after the hedge delay the
// next route (plenty of quota) starts alongside and its answer wins, 3 s
// plus its own latency after the request; the hung attempt is cancelled,
// counted, logged as a silent loser (it had sent nothing), and one such
// loss rests nothing.
func TestHedgeRacesASlowRoute(t *testing.T) {
	s := newStack(t, hedgeChains)
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 400 * time.Millisecond})
	done := s.askAsync("fast")
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.clk.Advance(3*time.Second - time.Millisecond)
	if n := s.emu.Calls("cerebras", "gpt-oss-120b"); n != 0 {
		t.Fatalf("hedged before the delay: %d calls", n)
	}
	s.clk.Advance(time.Millisecond)
	s.waitCalls("cerebras", "gpt-oss-120b", 1)
	s.clk.Advance(399 * time.Millisecond)
	noAnswer(t, done, "3.399 s")
	s.clk.Advance(time.Millisecond)
	got := <-done
	if got.err != nil || got.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("got %v", got)
	}
	s.r.Close() // the loser is wound down and recorded
	atts := s.recs.forRequest(got.id)
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
		case a.Route == "groq/llama-3.3-70b-versatile" && a.Class.String() == "silent_loser":
			loser = true
		}
	}
	if !winner || !loser {
		t.Fatalf("attempts = %+v, want a hedged ok winner and a silent loser", atts)
	}
	if _, ok := s.rest("groq/llama-3.3-70b-versatile"); ok {
		t.Error("the loser of a hedge rests")
	}
	// Both calls count against their routes' quota.
	for _, id := range []string{"groq/llama-3.3-70b-versatile", "cerebras/gpt-oss-120b"} {
		if n := s.rpdUsed(id); n != 1 {
			t.Errorf("%s: %d requests counted today, want 1", id, n)
		}
	}
}

// TestHedgeNeverOntoAScarceRoute: a 20-a-day route is never started as a
// hedge, and keeps its place for ordinary failover: the hedge looks past
// it, the plentiful route it starts fails, and the scarce route gets its
// turn only when the hung route fails at its timeout. The hung route then
// rests, and the next request does not wait at all.
func TestHedgeNeverOntoAScarceRoute(t *testing.T) {
	s := newStack(t, hedgeChains)
	if !s.plan.Routes["gemini/gemini-2.5-flash"].Scarce {
		t.Fatal("gemini/gemini-2.5-flash should be scarce (20 RPD)")
	}
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.HighDemand})
	done := s.askAsync("careful")
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.clk.Advance(3 * time.Second)
	if !s.callsReach("cerebras", "gpt-oss-120b", 1) {
		s.clk.Advance(time.Minute) // let the request end before failing
		<-done
		t.Fatal("no hedge past the scarce route at the hedge delay")
	}
	s.clk.Advance(2 * time.Second)
	noAnswer(t, done, "5 s")
	if n := s.emu.Calls("gemini", "gemini-2.5-flash"); n != 0 {
		t.Fatalf("the scarce route was hedged onto: %d calls", n)
	}
	s.clk.Advance(3 * time.Second) // groq's attempt timeout
	got := <-done
	if got.route() != "gemini/gemini-2.5-flash" {
		t.Fatalf("answered by %v, want the scarce route after the timeout", got)
	}
	for _, a := range s.recs.forRequest(got.id) {
		if a.Route == "gemini/gemini-2.5-flash" && a.Hedge {
			t.Errorf("the scarce route ran as a hedge: %+v", a)
		}
	}
	if r, ok := s.rest("groq/llama-3.3-70b-versatile"); !ok || r.Class != "timeout" {
		t.Fatalf("hung route rest = %+v %v, want a timeout rest", r, ok)
	}
	// The hung route rests: the next request is answered without the clock
	// moving at all.
	start := s.clk.Now()
	next := s.ask("careful")
	if next.err != nil || s.clk.Now() != start {
		t.Fatalf("next request: %v after %s", next, s.clk.Now().Sub(start))
	}
	if n := s.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 1 {
		t.Errorf("resting route called again: %d calls", n)
	}
}

// TestHedgeLooksPastAScarceRoute (issue 10, item 6): with [hung, scarce,
// plentiful], the hedge starts the plentiful route after the hedge delay
// instead of stopping at the scarce one and waiting out the hung route's
// whole timeout; the scarce route is not called.
func TestHedgeLooksPastAScarceRoute(t *testing.T) {
	s := newStack(t, hedgeChains)
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	done := s.askAsync("careful")
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.clk.Advance(3*time.Second - time.Millisecond)
	noAnswer(t, done, "2.999 s")
	if n := s.emu.Calls("cerebras", "gpt-oss-120b"); n != 0 {
		t.Fatalf("hedged before the delay: %d calls", n)
	}
	s.clk.Advance(time.Millisecond)
	if !s.callsReach("cerebras", "gpt-oss-120b", 1) {
		s.clk.Advance(time.Minute) // let the request end before failing
		<-done
		t.Fatalf("no hedge at the hedge delay: cerebras %d calls, gemini %d calls",
			s.emu.Calls("cerebras", "gpt-oss-120b"), s.emu.Calls("gemini", "gemini-2.5-flash"))
	}
	got := <-done
	if got.err != nil || got.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("got %v, want cerebras/gpt-oss-120b's answer", got)
	}
	if d := s.clk.Now().Sub(t0); d != 3*time.Second {
		t.Errorf("answered %s after the request, want at the hedge delay (3s)", d)
	}
	if n := s.emu.Calls("gemini", "gemini-2.5-flash"); n != 0 {
		t.Errorf("the scarce route was called %d times", n)
	}
	var hedged bool
	for _, a := range s.recs.forRequest(got.id) {
		hedged = hedged || a.Route == "cerebras/gpt-oss-120b" && a.Hedge && a.Class.String() == "ok"
	}
	if !hedged {
		t.Errorf("attempts %+v, want cerebras/gpt-oss-120b's ok as a hedge", s.recs.forRequest(got.id))
	}
}

// hedgeOver sends one request on chain "fast" whose first route (groq) is
// silent, lets the hedge delay pass so that cerebras answers, and waits
// until the loser has been wound down and recorded. n is groq's call count
// the request brings, and answered how many of its calls have had their
// response headers by the time the clock moves: a call that stalls after
// its headers has then started to answer, every time (without the wait,
// the hedge could win before the headers reached groq's adapter, and the
// started loser passed for a silent one).
func hedgeOver(t *testing.T, s *stack, n, answered int) answer {
	t.Helper()
	done := s.askAsync("fast")
	s.waitCalls("groq", "llama-3.3-70b-versatile", n)
	s.waitHeaders("groq", answered)
	s.clk.Advance(3 * time.Second)
	got := <-done
	if got.err != nil || got.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("got %v, want cerebras/gpt-oss-120b's answer", got)
	}
	s.r.Close() // the loser is wound down and recorded
	return got
}

// TestHedgeSilentLoserRests (issue 10, item 5): a route that hangs on every
// call and always loses the hedge is logged as a silent loser each time,
// and after two in a row rests as a timeout for the timeout rest (30 s);
// the third request does not call it. (That the status shows the rest and
// the silent losses: the end-to-end TestStatusShowsSilentLosses.)
func TestHedgeSilentLoserRests(t *testing.T) {
	s := newStack(t, hedgeChains)
	const hung = "groq/llama-3.3-70b-versatile"
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang}, emulator.Step{Kind: emulator.Hang}, emulator.Step{Kind: emulator.Hang})
	hedgeOver(t, s, 1, 0)
	if r, ok := s.rest(hung); ok {
		t.Fatalf("rested after one silent loss: %+v", r)
	}
	hedgeOver(t, s, 2, 0)
	if got, want := strings.Join(s.recs.classesOf(hung), " "), "silent_loser silent_loser"; got != want {
		t.Errorf("%s's attempts: %s, want %s", hung, got, want)
	}
	r, ok := s.rest(hung)
	if !ok || r.Class != "timeout" || !r.Until.Equal(s.clk.Now().Add(30*time.Second)) {
		t.Fatalf("rest = %+v (found %v), want a timeout rest until now+30s", r, ok)
	}
	start := s.clk.Now()
	got := s.ask("fast")
	if got.err != nil || got.route() != "cerebras/gpt-oss-120b" || s.clk.Now() != start {
		t.Fatalf("third request: %v after %s", got, s.clk.Now().Sub(start))
	}
	if n := s.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 2 {
		t.Errorf("the resting route was called: %d calls, want 2", n)
	}
}

// TestHedgeStrikesNeedSilenceInARow: an answer from the route, or a race it
// lost having started to answer (headers and half a body sent), clears its
// silent losses; a loser that had started is logged as cancelled. Silent
// losses that are never two in a row rest nothing.
func TestHedgeStrikesNeedSilenceInARow(t *testing.T) {
	s := newStack(t, hedgeChains)
	const hung = "groq/llama-3.3-70b-versatile"
	s.emu.Script("groq", "llama-3.3-70b-versatile",
		emulator.Step{Kind: emulator.Hang}, emulator.Step{Kind: emulator.Answer},
		emulator.Step{Kind: emulator.Hang}, emulator.Step{Kind: emulator.StreamStall},
		emulator.Step{Kind: emulator.Hang})
	hedgeOver(t, s, 1, 0)
	if got := s.ask("fast"); got.err != nil || got.route() != hung {
		t.Fatalf("second request: %v, want %s's answer", got, hung)
	}
	hedgeOver(t, s, 3, 1)
	hedgeOver(t, s, 4, 2) // the stall's headers are in
	hedgeOver(t, s, 5, 2)
	if got, want := strings.Join(s.recs.classesOf(hung), " "), "silent_loser ok silent_loser cancelled silent_loser"; got != want {
		t.Errorf("%s's attempts: %s, want %s", hung, got, want)
	}
	if r, ok := s.rest(hung); ok {
		t.Errorf("rested: %+v, want no rest", r)
	}
}
