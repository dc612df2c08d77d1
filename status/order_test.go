package status

import (
	"slices"
	"testing"
	"time"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/status/live"
)

// withStats gives the fixture's source live figures, and returns a function
// that records an attempt of a route of class c, as the router does.
func (f *fixture) withStats() func(routeID string, c failure.Class) {
	st := live.New(f.plan)
	f.src = New(Options{Plan: f.plan, Store: f.store, Budget: f.book, Stats: st, Clock: f.clk})
	return func(routeID string, c failure.Class) {
		st.RecordAttempt(&route.Attempt{RequestID: "r", Chain: "answer", Route: routeID, Class: c, Start: f.clk.Now(), Latency: 3 * time.Second})
	}
}

func ids[T any](xs []T, id func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, id(x))
	}
	return out
}

// TestRoutesByUrgency: the page lists a failing route first, then the
// resting and exhausted ones, then the paused, the ready, and the disabled
// last, each group in the plan's order; /status.json keeps the plan's
// order.
func TestRoutesByUrgency(t *testing.T) {
	const (
		big   = "groq/llama-3.3-70b-versatile"
		lite  = "gemini/gemini-2.5-flash-lite"
		cere  = "cerebras/gpt-oss-120b"
		mis   = "mistral/mistral-small-latest"
		small = "groq/llama-3.1-8b-instant"
		flash = "gemini/gemini-2.5-flash"
	)
	f := newFixture(t, true)
	record := f.withStats()
	f.rest(lite, "overloaded", time.Minute) // resting
	f.spend(small, 2)                       // exhausted by its budget
	f.pause(rest.RouteKey(big), 0)          // paused
	record(flash, failure.SilentLoser)      // failing: lost two races
	record(flash, failure.SilentLoser)      // in silence, nothing rests it
	s := f.snapshot()
	plan := ids(s.Routes, func(r Route) string { return r.ID })
	if want := []string{big, lite, cere, mis, small, flash}; !slices.Equal(plan, want) {
		t.Errorf("/status.json lists the routes %v, want the plan's order %v", plan, want)
	}
	got := ids(s.RoutesByUrgency(), func(r Route) string { return r.ID + " " + r.State })
	want := []string{flash + " failing", lite + " resting", small + " exhausted", big + " paused", cere + " ready", mis + " disabled"}
	if !slices.Equal(got, want) {
		t.Errorf("routes by urgency:\n got %v\nwant %v", got, want)
	}
	chains := ids(s.ChainsByUrgency(), func(c Chain) string { return c.Name + " " + c.State })
	if want := []string{"gem down", "answer degraded", "small degraded"}; !slices.Equal(chains, want) {
		t.Errorf("chains by urgency: got %v, want %v", chains, want)
	}
	provs := ids(s.ProvidersByUrgency(), func(p Provider) string { return p.Name + " " + p.State })
	if want := []string{"gemini failing", "groq exhausted", "cerebras ready", "mistral disabled"}; !slices.Equal(provs, want) {
		t.Errorf("providers by urgency: got %v, want %v", provs, want)
	}
}

// TestFailingRoute: a route that nothing rests is failing while more than
// half of its latest judged attempts failed (silent hedge losses count),
// at least two of them; answers bring it back to ready.
func TestFailingRoute(t *testing.T) {
	const cere = "cerebras/gpt-oss-120b"
	tests := []struct {
		name    string
		classes []failure.Class
		want    string
	}{
		{"one silent loss is a blip", []failure.Class{failure.SilentLoser}, Ready},
		{"two silent losses", []failure.Class{failure.SilentLoser, failure.SilentLoser}, Failing},
		{"mostly silent", []failure.Class{failure.OK, failure.SilentLoser, failure.SilentLoser}, Failing},
		{"half is not most", []failure.Class{failure.OK, failure.OK, failure.SilentLoser, failure.Timeout}, Ready},
		{"answering again", []failure.Class{failure.SilentLoser, failure.SilentLoser, failure.OK, failure.OK, failure.OK}, Ready},
		{"unjudged failures say nothing", []failure.Class{failure.BadRequest, failure.Cancelled, failure.Refused}, Ready},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, false)
			record := f.withStats()
			for _, c := range tt.classes {
				record(cere, c)
			}
			r := routeOf(t, f.snapshot(), cere)
			if r.State != tt.want {
				t.Errorf("%s after %v: state %q (latest %+v), want %q", cere, tt.classes, r.State, r.Latest, tt.want)
			}
		})
	}
	// A rest comes first: a route resting for its silence shows the rest.
	f := newFixture(t, false)
	record := f.withStats()
	record(cere, failure.SilentLoser)
	record(cere, failure.SilentLoser)
	f.rest(cere, "timeout", time.Minute)
	if r := routeOf(t, f.snapshot(), cere); r.State != Resting || r.Rest == nil || r.Rest.Class != "timeout" || r.Latest == nil || r.Latest.Silent != 2 {
		t.Errorf("a route resting after 2 silent losses shows %q (rest %+v, latest %+v), want resting (timeout) with 2 silent", r.State, r.Rest, r.Latest)
	}
}

// TestProviderFromRoutes: a provider with no rest of its own follows its
// enabled routes: resting when its only route rests, partly when one of
// several does, the most urgent of theirs when none is ready (the first
// in the plan's order of equally urgent ones); its own rest comes first; a
// disabled route does not count.
func TestProviderFromRoutes(t *testing.T) {
	const (
		big   = "groq/llama-3.3-70b-versatile"
		small = "groq/llama-3.1-8b-instant"
		cere  = "cerebras/gpt-oss-120b"
	)
	tests := []struct {
		name     string
		setup    func(f *fixture)
		provider string
		state    string
		ready    int
		notReady string
	}{
		{"all ready", func(f *fixture) {}, "groq", Ready, 2, ""},
		{"its only route rests", func(f *fixture) { f.rest(cere, "overloaded", time.Minute) }, "cerebras", Resting, 0, Resting},
		{"one of two rests", func(f *fixture) { f.rest(big, "overloaded", time.Minute) }, "groq", Partly, 1, Resting},
		{"one rests, one is spent", func(f *fixture) { f.rest(big, "overloaded", time.Minute); f.spend(small, 2) }, "groq", Resting, 0, "not ready"},
		{"both spent", func(f *fixture) { f.rest(big, "rate_day", time.Hour); f.spend(small, 2) }, "groq", Exhausted, 0, Exhausted},
		{"its own pause", func(f *fixture) { f.pause(rest.ProviderKey("groq"), time.Hour) }, "groq", Paused, 0, Paused},
		{"no key", func(f *fixture) {}, "mistral", Disabled, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, false)
			tt.setup(f)
			for _, p := range f.snapshot().Providers {
				if p.Name != tt.provider {
					continue
				}
				if p.State != tt.state || p.Ready != tt.ready || p.NotReady != tt.notReady {
					t.Errorf("%s: state %q, %d of %d ready, not ready %q; want %q, %d ready, %q", p.Name, p.State, p.Ready, p.Enabled, p.NotReady, tt.state, tt.ready, tt.notReady)
				}
				return
			}
			t.Fatalf("no provider %s", tt.provider)
		})
	}
}
