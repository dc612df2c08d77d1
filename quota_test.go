package tollfree_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// TestHeadersKeepReservationsInFlight: rate-limit headers computed before
// the provider saw the calls tollfree had already reserved never erase those
// reservations (issue 10, item 3). Groq's x-ratelimit-remaining-requests is
// worked out when Groq takes a call, so a call answered later than the calls
// behind it reports a count that misses them. Nine calls of an rpd-10 route
// are held open by the emulator and answered last first: the first answer
// says 9 were used, the last says 1. Taking limit − remaining as the count
// left it at 1, and the route was called 11 times with a 429; it must be
// called exactly 10 times with none.
func TestHeadersKeepReservationsInFlight(t *testing.T) {
	h := harnessOf(t, startStackWith(t, stackOptions{
		providers: `
providers:
  groq: {preset: groq, base_url: EMU/groq/v1, api_key: ${GROQ_API_KEY}, models: {m1: {rpd: 10}, m2: {}}}
`,
		config: `
chains:
  capped:
    routes: [groq/m1, groq/m2]
    margin: 0
    attempt_timeout: 60s
    deadline: 120s
`,
	}))
	h.emu.AddModel("groq", emulator.Model{ID: "m1", Limits: emulator.Limits{RPD: 10}})
	h.emu.AddModel("groq", emulator.Model{ID: "m2"})
	const held = 9
	// The i-th call taken answers after (held−i) s + 0.5 s: the last taken
	// answers first. The half second keeps the deadlines apart from every
	// other timer of the stack.
	due := func(i int) time.Time { return t0.Add(time.Duration(held-i)*time.Second + 500*time.Millisecond) }
	for i := range held {
		h.emu.Script("groq", "m1", emulator.Step{Kind: emulator.Answer, Delay: due(i).Sub(t0)})
	}
	replies := make(chan reply, held)
	for range held {
		go func() { replies <- <-h.askAsync("capped") }()
	}
	h.waitCalls("groq", "m1", held)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range held {
		if err := h.clk.BlockUntilDeadline(ctx, due(i)); err != nil {
			t.Fatalf("call %d of groq/m1 is not waiting to answer: %v", i+1, err)
		}
	}
	for i := held - 1; i >= 0; i-- {
		h.clk.Set(due(i))
		r := <-replies // the gateway observed its headers before it answered
		if r.status != 200 || r.header.Get("X-Tollfree-Route") != "groq/m1" {
			t.Fatalf("held call %d: status %d, route %q: %s", i+1, r.status, r.header.Get("X-Tollfree-Route"), r.body)
		}
	}
	// Five more at once, each held open too if it reaches groq/m1: one call
	// is left of 10, so one reaches it and four go to groq/m2.
	last := due(0).Add(1250 * time.Millisecond)
	for range 5 {
		h.emu.Script("groq", "m1", emulator.Step{Kind: emulator.Answer, Delay: last.Sub(due(0))})
	}
	more := make(chan reply, 5)
	for range 5 {
		go func() { more <- <-h.askAsync("capped") }()
	}
	h.waitCalls("groq", "m2", 4)
	if err := h.clk.BlockUntilDeadline(ctx, last); err != nil {
		t.Fatalf("the tenth call of groq/m1 is not waiting to answer: %v", err)
	}
	h.clk.Set(last)
	routes := map[string]int{}
	for range 5 {
		r := <-more
		if r.status != 200 {
			t.Fatalf("after the held calls: status %d: %s", r.status, r.body)
		}
		routes[r.header.Get("X-Tollfree-Route")]++
	}
	if routes["groq/m1"] != 1 || routes["groq/m2"] != 4 {
		t.Errorf("the next 5 requests were answered by %v, want groq/m1 once (one call left of 10) and groq/m2 4 times", routes)
	}
	if n := h.emu.Calls("groq", "m1"); n != 10 {
		t.Errorf("groq/m1 was called %d times, want exactly its rpd of 10", n)
	}
	for _, rec := range h.emu.Records() {
		if strings.HasPrefix(rec.Behaviour, "limit_") {
			t.Errorf("the emulator answered a call of %s/%s with its own %s (a 429): the budget passed the cap", rec.Provider, rec.Model, rec.Behaviour)
		}
	}
}
