package tollfree_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
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
// counted, logged as a silent loser (it had sent nothing), and one such
// loss rests nothing.
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
		case a.Route == "groq/llama-3.3-70b-versatile" && a.Class.String() == "silent_loser":
			loser = true
		}
	}
	if !winner || !loser {
		t.Fatalf("attempts = %+v, want a hedged ok winner and a silent loser", atts)
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
// hedge, and keeps its place for ordinary failover: the hedge looks past
// it, the plentiful route it starts fails, and the scarce route gets its
// turn only when the hung route fails at its timeout. The hung route then
// rests, and the next request does not wait at all.
func TestHedgeNeverOntoAScarceRoute(t *testing.T) {
	h := newHarness(t, hedgeChains)
	if !h.plan.Routes["gemini/gemini-2.5-flash"].Scarce {
		t.Fatal("gemini/gemini-2.5-flash should be scarce (20 RPD)")
	}
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.HighDemand})
	done := h.askAsync("careful")
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	h.clk.Advance(3 * time.Second)
	if !h.callsReach("cerebras", "gpt-oss-120b", 1) {
		h.clk.Advance(time.Minute) // let the request end before failing
		<-done
		t.Fatal("no hedge past the scarce route at the hedge delay")
	}
	h.clk.Advance(2 * time.Second)
	noReply(t, done, "5 s")
	if n := h.emu.Calls("gemini", "gemini-2.5-flash"); n != 0 {
		t.Fatalf("the scarce route was hedged onto: %d calls", n)
	}
	h.clk.Advance(3 * time.Second) // groq's attempt timeout
	got := <-done
	if got.json(t)["model"] != "gemini/gemini-2.5-flash" {
		t.Fatalf("answered by %v, want the scarce route after the timeout", got.json(t)["model"])
	}
	for _, a := range h.recs.forRequest(got.header.Get("X-Request-Id")) {
		if a.Route == "gemini/gemini-2.5-flash" && a.Hedge {
			t.Errorf("the scarce route ran as a hedge: %+v", a)
		}
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

// TestHedgeLooksPastAScarceRoute (issue 10, item 6): with [hung, scarce,
// plentiful], the hedge starts the plentiful route after the hedge delay
// instead of stopping at the scarce one and waiting out the hung route's
// whole timeout; the scarce route is not called.
func TestHedgeLooksPastAScarceRoute(t *testing.T) {
	h := newHarness(t, hedgeChains)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	done := h.askAsync("careful")
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	h.clk.Advance(3*time.Second - time.Millisecond)
	noReply(t, done, "2.999 s")
	if n := h.emu.Calls("cerebras", "gpt-oss-120b"); n != 0 {
		t.Fatalf("hedged before the delay: %d calls", n)
	}
	h.clk.Advance(time.Millisecond)
	if !h.callsReach("cerebras", "gpt-oss-120b", 1) {
		h.clk.Advance(time.Minute) // let the request end before failing
		<-done
		t.Fatalf("no hedge at the hedge delay: cerebras %d calls, gemini %d calls",
			h.emu.Calls("cerebras", "gpt-oss-120b"), h.emu.Calls("gemini", "gemini-2.5-flash"))
	}
	got := <-done
	if got.status != 200 || got.json(t)["model"] != "cerebras/gpt-oss-120b" {
		t.Fatalf("got %d %s, want cerebras/gpt-oss-120b's answer", got.status, got.body)
	}
	if d := h.clk.Now().Sub(t0); d != 3*time.Second {
		t.Errorf("answered %s after the request, want at the hedge delay (3s)", d)
	}
	if n := h.emu.Calls("gemini", "gemini-2.5-flash"); n != 0 {
		t.Errorf("the scarce route was called %d times", n)
	}
	var hedged bool
	for _, a := range h.recs.forRequest(got.header.Get("X-Request-Id")) {
		hedged = hedged || a.Route == "cerebras/gpt-oss-120b" && a.Hedge && a.Class.String() == "ok"
	}
	if !hedged {
		t.Errorf("attempts %+v, want cerebras/gpt-oss-120b's ok as a hedge", h.recs.forRequest(got.header.Get("X-Request-Id")))
	}
}

// callsReach is waitCalls that reports false, rather than failing the
// test, when the calls do not come: the caller can then let the request end
// before it fails (a handler left waiting on the fake clock would hold the
// test server's Close).
func (h *harness) callsReach(provider, model string, n int) bool {
	deadline := time.Now().Add(2 * time.Second)
	for h.emu.Calls(provider, model) < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// hedgeOver sends one request on chain "fast" whose first route (groq) is
// silent, lets the hedge delay pass so that cerebras answers, and waits
// until the loser has been wound down and recorded. n is groq's call count
// the request brings.
func hedgeOver(t *testing.T, h *harness, n int, before func()) reply {
	t.Helper()
	done := h.askAsync("fast")
	h.waitCalls("groq", "llama-3.3-70b-versatile", n)
	if before != nil {
		before()
	}
	h.clk.Advance(3 * time.Second)
	got := <-done
	if got.status != 200 || got.json(t)["model"] != "cerebras/gpt-oss-120b" {
		t.Fatalf("got %d %s, want cerebras/gpt-oss-120b's answer", got.status, got.body)
	}
	h.waitIdle()
	h.gw.Router().Close() // the loser is wound down and recorded
	return got
}

// classesOf lists the classes of a route's attempts, in the order recorded.
func classesOf(h *harness, route string) []string {
	var out []string
	for _, a := range h.recs.all() {
		if a.Route == route {
			out = append(out, a.Class.String())
		}
	}
	return out
}

// TestHedgeSilentLoserRests (issue 10, item 5): a route that hangs on every
// call and always loses the hedge is logged as a silent loser each time,
// and after two in a row rests as a timeout for the timeout rest (30 s);
// /status.json shows the rest and the silent losses, and the third request
// does not call it.
func TestHedgeSilentLoserRests(t *testing.T) {
	h := newHarness(t, hedgeChains)
	const hung = "groq/llama-3.3-70b-versatile"
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang}, emulator.Step{Kind: emulator.Hang}, emulator.Step{Kind: emulator.Hang})
	hedgeOver(t, h, 1, nil)
	if r, ok := h.rest(hung); ok {
		t.Fatalf("rested after one silent loss: %+v", r)
	}
	hedgeOver(t, h, 2, nil)
	if got, want := strings.Join(classesOf(h, hung), " "), "silent_loser silent_loser"; got != want {
		t.Errorf("%s's attempts: %s, want %s", hung, got, want)
	}
	r, ok := h.rest(hung)
	if !ok || r.Class != "timeout" || !r.Until.Equal(h.clk.Now().Add(30*time.Second)) {
		t.Fatalf("rest = %+v (found %v), want a timeout rest until now+30s", r, ok)
	}
	raw := h.get("/status.json")
	var snap struct {
		Routes []struct {
			ID           string `json:"id"`
			State        string `json:"state"`
			SilentLosses int    `json:"silent_losses"`
			LastError    string `json:"last_error"`
			Rest         *struct {
				Class string `json:"class"`
			} `json:"rest"`
		} `json:"routes"`
	}
	if err := json.Unmarshal(raw.body, &snap); err != nil {
		t.Fatalf("/status.json: %v: %s", err, raw.body)
	}
	found := false
	for _, rt := range snap.Routes {
		if rt.ID != hung {
			continue
		}
		found = true
		if rt.State != "resting" || rt.Rest == nil || rt.Rest.Class != "timeout" || rt.SilentLosses != 2 || rt.LastError != "silent_loser" {
			t.Errorf("/status.json shows %s as %+v (rest %+v), want resting (timeout) with 2 silent losses, last error silent_loser", hung, rt, rt.Rest)
		}
	}
	if !found {
		t.Fatalf("%s is not in /status.json", hung)
	}
	start := h.clk.Now()
	got := h.ask("fast")
	if got.status != 200 || got.json(t)["model"] != "cerebras/gpt-oss-120b" || h.clk.Now() != start {
		t.Fatalf("third request: %d %s after %s", got.status, got.body, h.clk.Now().Sub(start))
	}
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 2 {
		t.Errorf("the resting route was called: %d calls, want 2", n)
	}
}

// TestHedgeStrikesNeedSilenceInARow: an answer from the route, or a race it
// lost having started to answer (headers and half a body sent), clears its
// silent losses; a loser that had started is logged as cancelled. Silent
// losses that are never two in a row rest nothing.
func TestHedgeStrikesNeedSilenceInARow(t *testing.T) {
	// The fourth call has started answering when it loses: the test waits
	// for the gateway to hold its response headers before the hedge delay
	// passes, or the race would decide between cancelled and silent_loser.
	answered := &headerCounter{base: http.DefaultTransport.(*http.Transport).Clone()}
	h := harnessOf(t, startStackWith(t, stackOptions{config: hedgeChains, httpClient: &http.Client{Transport: answered}}))
	const hung = "groq/llama-3.3-70b-versatile"
	h.emu.Script("groq", "llama-3.3-70b-versatile",
		emulator.Step{Kind: emulator.Hang}, emulator.Step{Kind: emulator.Answer},
		emulator.Step{Kind: emulator.Hang}, emulator.Step{Kind: emulator.StreamStall},
		emulator.Step{Kind: emulator.Hang})
	hedgeOver(t, h, 1, nil)
	if got := h.ask("fast"); got.status != 200 || got.json(t)["model"] != hung {
		t.Fatalf("second request: %d %s, want %s's answer", got.status, got.body, hung)
	}
	hedgeOver(t, h, 3, nil)
	hedgeOver(t, h, 4, func() { answered.wait(t, "/groq/", 2) })
	hedgeOver(t, h, 5, nil)
	if got, want := strings.Join(classesOf(h, hung), " "), "silent_loser ok silent_loser cancelled silent_loser"; got != want {
		t.Errorf("%s's attempts: %s, want %s", hung, got, want)
	}
	if r, ok := h.rest(hung); ok {
		t.Errorf("rested: %+v, want no rest", r)
	}
}

// headerCounter is a transport that counts the responses whose headers
// reached the gateway, by path prefix.
type headerCounter struct {
	base http.RoundTripper
	mu   sync.Mutex
	n    map[string]int
}

func (c *headerCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		c.mu.Lock()
		if c.n == nil {
			c.n = make(map[string]int)
		}
		c.n[r.URL.Path]++
		c.mu.Unlock()
	}
	return resp, err
}

// wait waits until n responses to paths starting with prefix have reached
// the gateway, or fails after a bounded wait on the wall clock (a network
// event, not the fake clock's).
func (c *headerCounter) wait(t *testing.T, prefix string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		got := 0
		for p, k := range c.n {
			if strings.HasPrefix(p, prefix) {
				got += k
			}
		}
		c.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d responses to %s* reached the gateway, want %d", got, prefix, n)
		}
		time.Sleep(time.Millisecond)
	}
}
