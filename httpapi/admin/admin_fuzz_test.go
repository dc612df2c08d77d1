package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

// fuzzPlan has an enabled provider and a disabled one (no key).
const fuzzPlan = `
admin_token: ${ADMIN_TOKEN}
providers:
  groq: {preset: groq, api_key: ${GROQ_API_KEY}}
  gemini: {preset: gemini}
chains:
  answer:
    routes: [groq/llama-3.3-70b-versatile, gemini/gemini-2.5-flash]
    fallback: {message: "resting"}
`

// fakeProber answers a probe ok, or fails it as overloaded.
type fakeProber struct{ fail bool }

func (p fakeProber) Probe(_ context.Context, id string, _ int) (*route.Attempt, error) {
	if p.fail {
		return &route.Attempt{Route: id, Class: failure.Overloaded, Error: "overloaded: 503 Service Unavailable"}, errors.New("probe failed")
	}
	return &route.Attempt{Route: id, Class: failure.OK, Latency: 40 * time.Millisecond}, nil
}

// FuzzRequest sends fuzzed bodies to every admin action. Whatever the body,
// the handler must answer one of its documented statuses with a short JSON
// reply, and a pause or resume it reports done must be in the store as it
// says: a pause is manual, ends after now (or never), and carries a
// printable reason of at most 120 characters; a resume leaves no rest.
func FuzzRequest(f *testing.F) {
	for _, b := range []string{
		`{"route": "groq/llama-3.3-70b-versatile"}`,
		`{"provider": "groq", "reason": "key rotated", "for": "2h"}`,
		`{"route": "groq/llama-3.3-70b-versatile", "reason": "\u0000\u202e` + strings.Repeat("é", 130) + `", "for": "9223372036854775807ns"}`,
		`{"provider": "gemini"}`,
		`{"route": "x", "provider": "y"}`,
		`{"for": "-1s", "route": "gemini/gemini-2.5-flash"}`,
		`{"route": "` + strings.Repeat("\xff", 100) + `"}`,
		`[]`, `null`, `{"route": 1}`, ``,
	} {
		for _, action := range []string{"pause", "resume", "probe"} {
			f.Add([]byte(b), action, false)
		}
	}
	f.Add([]byte(`{"provider": "groq"}`), "probe", true)
	f.Add([]byte(`{}`), "pause/../probe", false)
	env := map[string]string{"ADMIN_TOKEN": "admin-token-for-fuzz", "GROQ_API_KEY": "gsk_fuzz"}
	plan, err := config.Parse("fuzz.yaml", []byte(fuzzPlan), func(k string) string { return env[k] })
	if err != nil {
		f.Fatalf("config: %v", err)
	}
	f.Fuzz(func(t *testing.T, body []byte, action string, probeFails bool) {
		now := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
		clk := clock.NewFake(now)
		store, err := memstore.Open(memstore.Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		h := New(Options{Plan: plan, Store: store, Prober: fakeProber{fail: probeFails}, Token: env["ADMIN_TOKEN"], Clock: clk})

		req := httptest.NewRequest(http.MethodPost, "/admin/x", bytes.NewReader(body))
		req.URL.Path = "/admin/" + action
		req.Header.Set("Authorization", "Bearer "+env["ADMIN_TOKEN"])
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		switch rec.Code {
		case 200, 400, 404, 409, 502, 503:
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
		if !json.Valid(rec.Body.Bytes()) || !utf8.Valid(rec.Body.Bytes()) || rec.Body.Len() > 1<<10 {
			t.Fatalf("reply is not short valid JSON (%d bytes): %q", rec.Body.Len(), rec.Body)
		}
		if rec.Code != 200 || action == "probe" {
			return
		}
		var rep Reply
		if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil || !rep.OK || rep.Key.IsZero() {
			t.Fatalf("a 200 that is not a done action: %s", rec.Body)
		}
		rests, _ := store.Rests(context.Background(), now)
		var got *state.Rest
		for i := range rests {
			if rests[i].Key == rep.Key.String() {
				got = &rests[i]
			}
		}
		checkStored(t, action, rep, got, now)
	})
}

// checkStored checks the rest a done pause or resume left in the store.
func checkStored(t *testing.T, action string, rep Reply, got *state.Rest, now time.Time) {
	t.Helper()
	if action == "resume" {
		if got != nil {
			t.Fatalf("resumed %s still rests: %+v", rep.Key, got)
		}
		return
	}
	if got == nil || !got.Manual || got.Class != "paused" {
		t.Fatalf("pause of %s not stored as a manual pause: %+v", rep.Key, got)
	}
	if !got.Until.IsZero() && !got.Until.After(now) {
		t.Fatalf("pause ends at %v, not after now", got.Until)
	}
	if (rep.Until == nil) != got.Until.IsZero() || (rep.Until != nil && !rep.Until.Equal(got.Until)) {
		t.Fatalf("reply says until %v, store %v", rep.Until, got.Until)
	}
	reason := strings.TrimPrefix(got.Reason, "paused by hand: ")
	if utf8.RuneCountInString(reason) > maxReason || strings.ContainsFunc(reason, func(r rune) bool { return !unicode.IsPrint(r) }) {
		t.Fatalf("stored reason %q: too long or not printable", reason)
	}
}
