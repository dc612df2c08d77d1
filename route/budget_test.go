package route

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
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
	s := newStackWith(t, stackOptions{
		providers: `
providers:
  groq: {preset: groq, base_url: EMU/groq/v1, api_key: ${GROQ_API_KEY}, models: {m1: {rpd: 10}, m2: {}}}
`,
		chains: `
chains:
  capped:
    routes: [groq/m1, groq/m2]
    margin: 0
    attempt_timeout: 60s
    deadline: 120s
`,
	})
	s.emu.AddModel("groq", emulator.Model{ID: "m1", Limits: emulator.Limits{RPD: 10}})
	s.emu.AddModel("groq", emulator.Model{ID: "m2"})
	const held = 9
	// The i-th call taken answers after (held−i) s + 0.5 s: the last taken
	// answers first. The half second keeps the deadlines apart from every
	// other timer of the stack.
	due := func(i int) time.Time { return t0.Add(time.Duration(held-i)*time.Second + 500*time.Millisecond) }
	for i := range held {
		s.emu.Script("groq", "m1", emulator.Step{Kind: emulator.Answer, Delay: due(i).Sub(t0)})
	}
	answers := make(chan answer, held)
	for range held {
		go func() { answers <- <-s.askAsync("capped") }()
	}
	s.waitCalls("groq", "m1", held)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range held {
		if err := s.clk.BlockUntilDeadline(ctx, due(i)); err != nil {
			t.Fatalf("call %d of groq/m1 is not waiting to answer: %v", i+1, err)
		}
	}
	for i := held - 1; i >= 0; i-- {
		s.clk.Set(due(i))
		a := <-answers // the router observed its headers before it answered
		if a.err != nil || a.route() != "groq/m1" {
			t.Fatalf("held call %d: %v", i+1, a)
		}
	}
	// Five more at once, each held open too if it reaches groq/m1: one call
	// is left of 10, so one reaches it and four go to groq/m2.
	last := due(0).Add(1250 * time.Millisecond)
	for range 5 {
		s.emu.Script("groq", "m1", emulator.Step{Kind: emulator.Answer, Delay: last.Sub(due(0))})
	}
	more := make(chan answer, 5)
	for range 5 {
		go func() { more <- <-s.askAsync("capped") }()
	}
	s.waitCalls("groq", "m2", 4)
	if err := s.clk.BlockUntilDeadline(ctx, last); err != nil {
		t.Fatalf("the tenth call of groq/m1 is not waiting to answer: %v", err)
	}
	s.clk.Set(last)
	routes := map[string]int{}
	for range 5 {
		a := <-more
		if a.err != nil {
			t.Fatalf("after the held calls: %v", a)
		}
		routes[a.route()]++
	}
	if routes["groq/m1"] != 1 || routes["groq/m2"] != 4 {
		t.Errorf("the next 5 requests were answered by %v, want groq/m1 once (one call left of 10) and groq/m2 4 times", routes)
	}
	if n := s.emu.Calls("groq", "m1"); n != 10 {
		t.Errorf("groq/m1 was called %d times, want exactly its rpd of 10", n)
	}
	for _, rec := range s.emu.Records() {
		if strings.HasPrefix(rec.Behaviour, "limit_") {
			t.Errorf("the emulator answered a call of %s/%s with its own %s (a 429): the budget passed the cap", rec.Provider, rec.Model, rec.Behaviour)
		}
	}
}

// proxiedGeminiProviders names no preset for gemini and points it at a
// proxy (here the emulator): the provider's name picks the preset.
const proxiedGeminiProviders = `
providers:
  groq:   {preset: groq, base_url: EMU/groq/v1, api_key: ${GROQ_API_KEY}}
  gemini: {base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
`

// TestPresetKeptWithBaseURL: a provider named after a preset that sets
// base_url keeps the preset (issue 10, item 11): it speaks Gemini's native
// dialect, its route has the preset's daily limit (which the status shows
// as the quota book counts it: package status's TestSnapshotBudgets), and a
// per-day 429 rests it until midnight Pacific, the Gemini reset, not UTC.
func TestPresetKeptWithBaseURL(t *testing.T) {
	s := newStackWith(t, stackOptions{providers: proxiedGeminiProviders, chains: `
chains:
  gem:
    routes: [gemini/gemini-2.5-flash, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
`})
	if got := s.ask("gem"); got.err != nil || got.route() != "gemini/gemini-2.5-flash" {
		t.Fatalf("got %v, want an answer from gemini/gemini-2.5-flash over Gemini's own API", got)
	}
	if recs := s.emu.Records(); len(recs) != 1 || recs[0].Provider != "gemini" || recs[0].Status != 200 {
		t.Fatalf("emulator records = %+v, want one answered gemini call", recs)
	}
	left, err := s.budget.Left(context.Background(), s.plan.Routes["gemini/gemini-2.5-flash"])
	if err != nil {
		t.Fatal(err)
	}
	if rpd := left.Route.RPD; rpd.Limit != 20 || rpd.Used != 1 {
		t.Errorf("rpd = %d of %d, want 1 of the preset's 20", rpd.Used, rpd.Limit)
	}
	s.emu.Script("gemini", "gemini-2.5-flash", emulator.Step{Kind: emulator.RateDay})
	if got := s.ask("gem"); got.err != nil || got.route() != "groq/llama-3.1-8b-instant" {
		t.Fatalf("after gemini's per-day 429: %v", got)
	}
	if rest, ok := s.rest("gemini/gemini-2.5-flash"); !ok || rest.Class != "rate_day" || !rest.Until.Equal(emutest.LAMidnight) {
		t.Fatalf("rest = %+v (found %v), want rate_day until %s (midnight America/Los_Angeles)", rest, ok, emutest.LAMidnight)
	}
}
