package e2e_test

import (
	"context"
	"html"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

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
