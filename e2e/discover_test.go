package e2e_test

import (
	"context"
	"html"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/discover"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/status"
)

// TestModelGoneFromTheList (issue 35): a model the provider takes off its
// model list is skipped without a call from the next daily read on, shown
// as gone since that day on /status.json and the status page, with a
// warning in the log; a list that comes back empty changes nothing; the
// model is tried again as soon as a read finds it listed.
func TestModelGoneFromTheList(t *testing.T) {
	checkLeaks(t)
	logs := &logBuffer{}
	h := harnessOf(t, startStackWith(t, stackOptions{
		config:   "chains:\n  answer: {routes: [groq/llama-3.3-70b-versatile, groq/openai/gpt-oss-120b]}\n",
		discover: 24 * time.Hour,
		logger:   slog.New(slog.NewTextHandler(logs, nil)),
	}))
	const gone, next = "groq/llama-3.3-70b-versatile", "groq/openai/gpt-oss-120b"
	read := func(at time.Time) {
		t.Helper()
		eventually(t, "the groq list read at "+at.Format(time.RFC3339), nil, false, func() bool {
			return !h.gw.ModelLists(context.Background())["groq"].Read.Before(at)
		})
	}
	answeredBy := func(want string) {
		t.Helper()
		r := h.ask("answer")
		if r.status != http.StatusOK || r.header.Get("X-Tollfree-Route") != want {
			t.Fatalf("answered %d by %q, want 200 by %s: %s", r.status, r.header.Get("X-Tollfree-Route"), want, r.body)
		}
	}
	read(t0)
	answeredBy(gone)
	if s := routeOf(t, h.snapshot(), gone); s.State != status.Ready {
		t.Fatalf("%s listed: state %s, want ready", gone, s.State)
	}

	// Taken off the list: the next daily read finds it missing.
	h.emu.Unlist("groq", "llama-3.3-70b-versatile", true)
	day1 := t0.Add(24 * time.Hour)
	h.clk.Advance(24 * time.Hour)
	read(day1)
	calls := h.emu.Calls("groq", "llama-3.3-70b-versatile")
	answeredBy(next)
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != calls {
		t.Errorf("a gone model was called: %d calls, was %d", n, calls)
	}
	s := routeOf(t, h.snapshot(), gone)
	since := "gone from groq's model list since " + day1.Format(time.DateOnly)
	if s.State != status.Gone || s.Rest == nil || s.Rest.Class != "gone" || s.Rest.Reason != since {
		t.Errorf("%s off the list: /status.json says %s %+v, want gone with %q", gone, s.State, s.Rest, since)
	}
	if page := h.get("/status"); !strings.Contains(string(page.body), html.EscapeString(since)) {
		t.Errorf("the status page does not say %q", since)
	}
	if !strings.Contains(logs.String(), "route gone: its model is no longer in the provider's list") || !strings.Contains(logs.String(), "route="+gone) {
		t.Errorf("no warning in the log:\n%s", logs.String())
	}

	// A list that comes back empty says nothing: the route stays gone
	// since the same day, the others stay in.
	for _, id := range []string{"llama-3.3-70b-versatile", "llama-3.1-8b-instant", "openai/gpt-oss-120b"} {
		h.emu.Unlist("groq", id, true)
	}
	h.clk.Advance(24 * time.Hour)
	eventually(t, "the empty list noticed", nil, false, func() bool {
		return strings.Contains(logs.String(), "model list not read: routes left as they were")
	})
	answeredBy(next)
	if s := routeOf(t, h.snapshot(), gone); s.State != status.Gone || s.Rest.Reason != since {
		t.Errorf("after an empty list: %s %+v, want still gone with %q", s.State, s.Rest, since)
	}

	// Listed again: the next read lifts the rest.
	for _, id := range []string{"llama-3.3-70b-versatile", "llama-3.1-8b-instant", "openai/gpt-oss-120b"} {
		h.emu.Unlist("groq", id, false)
	}
	day3 := t0.Add(72 * time.Hour)
	h.clk.Advance(24 * time.Hour)
	read(day3)
	answeredBy(gone)
	if s := routeOf(t, h.snapshot(), gone); s.State != status.Ready {
		t.Errorf("%s listed again: state %s, want ready", gone, s.State)
	}
}

// TestLimitsTheProviderSays (issue 35): when a provider's rate-limit
// headers report a daily limit unlike its preset's, /status.json and the
// status page say so, with the preset's figure and the day the provider
// first said it; the provider's figure is the one in force.
func TestLimitsTheProviderSays(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, "chains:\n  answer: {routes: [groq/openai/gpt-oss-120b]}\n")
	// The preset says 1000 requests a day; the emulated account, 500.
	h.emu.AddModel("groq", emulator.Model{ID: "openai/gpt-oss-120b", Limits: emulator.Limits{RPD: 500, TPM: 8000}})
	if r := h.ask("answer"); r.status != http.StatusOK {
		t.Fatalf("ask: %d %s", r.status, r.body)
	}
	h.waitIdle()
	want := "groq/openai/gpt-oss-120b: preset rpd 1000, provider says 500 since " + t0.Format(time.DateOnly)
	snap := h.snapshot()
	if len(snap.LimitsSaid) != 1 || snap.LimitsSaid[0] != want {
		t.Errorf("/status.json limits_said = %q, want [%q]", snap.LimitsSaid, want)
	}
	if w := routeOf(t, snap, "groq/openai/gpt-oss-120b").Budget.RPD; w.Limit != 500 || !w.Learned {
		t.Errorf("the route's day: %+v, want the provider's 500, learned", w)
	}
	if page := h.get("/status"); !strings.Contains(string(page.body), html.EscapeString(want)) {
		t.Errorf("the status page does not say %q", want)
	}
}

// TestFreeModelsOffered (issue 35): a free model a provider adds to its
// list (OpenRouter: prompt and completion price 0) that no chain uses is
// offered on /status.json and the status page, never added to a chain;
// once it costs money, the next read drops it.
func TestFreeModelsOffered(t *testing.T) {
	checkLeaks(t)
	h := harnessOf(t, startStackWith(t, stackOptions{
		config:   "chains:\n  answer: {routes: [\"openrouter/openai/gpt-oss-120b:free\"]}\n",
		discover: 24 * time.Hour,
	}))
	eventually(t, "the first read", nil, false, func() bool {
		return !h.gw.ModelLists(context.Background())["openrouter"].Read.IsZero()
	})
	if got := h.snapshot().FreeUnused; len(got) != 0 {
		t.Errorf("before any new model: free_unused = %v", got)
	}
	h.emu.AddModel("openrouter", emulator.Model{ID: "qwen/qwen3-coder:free", ContextLength: 262144})
	h.clk.Advance(24 * time.Hour)
	eventually(t, "the new free model offered", nil, false, func() bool {
		return len(h.snapshot().FreeUnused["openrouter"]) > 0
	})
	snap := h.snapshot()
	if got := snap.FreeUnused["openrouter"]; len(got) != 1 || got[0] != "qwen/qwen3-coder:free" {
		t.Errorf("free_unused = %v, want openrouter: [qwen/qwen3-coder:free] (the chain's own model left out)", snap.FreeUnused)
	}
	if c := snap.Chains[0]; len(c.Routes) != 1 {
		t.Errorf("the chain changed: %v", c.Routes)
	}
	if page := h.get("/status"); !strings.Contains(string(page.body), "openrouter: qwen/qwen3-coder:free") {
		t.Error("the status page does not offer the new free model")
	}
	read := h.gw.ModelLists(context.Background())["openrouter"].Read
	h.emu.SetPrice("openrouter", "qwen/qwen3-coder:free", emulator.Price{Prompt: 0.0000002, Completion: 0.0000008})
	h.clk.Advance(24 * time.Hour)
	eventually(t, "the list read again", nil, false, func() bool {
		return h.gw.ModelLists(context.Background())["openrouter"].Read.After(read)
	})
	eventually(t, "the model turned paid dropped", nil, false, func() bool {
		return len(h.snapshot().FreeUnused["openrouter"]) == 0
	})
}

// TestGoneIsSharedThroughRedis (issue 35): a model list read by one
// instance takes the gone route out for every instance sharing the Redis
// store: another, which reads no list, skips it without a call and shows
// it as gone; the route is back for both when a read lists it again.
func TestGoneIsSharedThroughRedis(t *testing.T) {
	checkLeaks(t)
	url := testenv.RedisURL(t)
	ns := testenv.Namespace(t, url)
	clk := clock.NewFake(t0)
	emu, emuURL := newCapd(t, clk)
	plan := capdPlan(t, emuURL, 1000)
	a := newInstance(t, "a", plan, clk, url, ns, 2*time.Second)
	b := newInstance(t, "b", plan, clk, url, ns, 2*time.Second)
	// a's reads of the lists, as its gateway runs them daily.
	reads := discover.New(discover.Options{Plan: plan, Store: a.store, Clock: clk})
	emu.Unlist("capd", "m1", true)
	reads.Refresh(context.Background())
	calls := emu.Calls("capd", "m1")
	for _, in := range []*instance{a, b} {
		if got := in.mustAsk(t, "capped"); got != "capd/m2" {
			t.Errorf("%s: answered by %s, want capd/m2 with capd/m1 gone", in.name, got)
		}
	}
	if n := emu.Calls("capd", "m1"); n != calls {
		t.Errorf("capd/m1 gone from the list was called %d times", n-calls)
	}
	snap, err := status.New(status.Options{Plan: plan, Store: b.store, Clock: clk}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r := routeOf(t, snap, "capd/m1"); r.State != status.Gone || r.Rest == nil || !strings.Contains(r.Rest.Reason, "since "+t0.Format(time.DateOnly)) {
		t.Errorf("b's status: capd/m1 %s %+v, want gone since %s", r.State, r.Rest, t0.Format(time.DateOnly))
	}
	emu.Unlist("capd", "m1", false)
	reads.Refresh(context.Background())
	for _, in := range []*instance{a, b} {
		if got := in.mustAsk(t, "capped"); got != "capd/m1" {
			t.Errorf("%s: answered by %s, want capd/m1 back", in.name, got)
		}
	}
}

// TestPatternBeforeAnyList (issue 35): before a model list is read, a
// route pattern expands to nothing: a chain of a pattern alone answers
// with its fallback, and a chain that also names a route answers from
// it.
func TestPatternBeforeAnyList(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, `chains:
  only: {routes: ["openrouter/*:free"], fallback: {message: "Back soon."}}
  mixed: {routes: ["openrouter/*:free", groq/llama-3.3-70b-versatile]}
`)
	if r := h.ask("only"); r.status != http.StatusOK || r.content(t) != "Back soon." {
		t.Errorf("a chain of a pattern alone, no list read: %d %s, want its fallback", r.status, r.body)
	}
	if r := h.ask("mixed"); r.status != http.StatusOK || r.header.Get("X-Tollfree-Route") != "groq/llama-3.3-70b-versatile" {
		t.Errorf("a chain of a pattern and a route, no list read: %d by %q, want 200 by the route", r.status, r.header.Get("X-Tollfree-Route"))
	}
}
