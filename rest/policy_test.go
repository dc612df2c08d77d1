package rest

import (
	"os"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
)

// nextMidnight returns the reset func of a route whose day starts at 00:00
// in loc.
func nextMidnight(loc *time.Location) func(time.Time) time.Time {
	return func(now time.Time) time.Time {
		t := now.In(loc)
		return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc)
	}
}

func TestRestGeminiPerDay(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	now := time.Date(2026, 3, 10, 15, 4, 5, 0, la)
	midnight := time.Date(2026, 3, 11, 0, 0, 0, 0, la)
	for _, file := range []string{"built/gemini_429_day", "built/gemini_429_minute_and_day", "built/gemini_429_limit0"} {
		t.Run(file, func(t *testing.T) {
			v := failure.Classify(&failure.UpstreamError{Provider: "gemini", Flavor: "gemini", Model: "gemini-3.6-flash", Status: 429, Body: readBody(t, file)}, now)
			if v.Class != failure.RateDay || v.RetryAfter >= time.Minute || v.RetryAfter == 0 {
				t.Fatalf("verdict: got %v with RetryAfter %v, want rate_day with the short retryDelay", v.Class, v.RetryAfter)
			}
			rt := &config.Route{ID: "gemini/gemini-3.6-flash", Provider: &config.Provider{Name: "gemini"}}
			until, key := DefaultPolicy().Rest(v, rt, now, 1, nextMidnight(la)(now))
			if !until.Equal(midnight) || key != RouteKey(rt.ID) {
				t.Errorf("got until %v key %v, want %v route", until, key, midnight)
			}
		})
	}
}

func TestRest(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	utcMidnight := nextMidnight(time.UTC)
	def := DefaultPolicy()
	grow := NewPolicy(config.RestTimes{Growth: 2})
	cases := []struct {
		name        string
		p           Policy
		v           failure.Verdict
		consecutive int
		nextReset   func(time.Time) time.Time
		want        time.Duration // from now; -1 means the zero time
		scope       failure.Scope
	}{
		{"ok", def, failure.Verdict{Class: failure.OK}, 1, nil, -1, failure.ScopeRequest},
		{"bad request", def, failure.Verdict{Class: failure.BadRequest, Scope: failure.ScopeRequest}, 1, nil, -1, failure.ScopeRequest},
		{"refused", def, failure.Verdict{Class: failure.Refused, Scope: failure.ScopeRequest}, 1, nil, -1, failure.ScopeRequest},
		{"too large", def, failure.Verdict{Class: failure.TooLarge, Scope: failure.ScopeRequest, RetryAfter: time.Hour}, 1, nil, -1, failure.ScopeRequest},
		{"cancelled", def, failure.Verdict{Class: failure.Cancelled}, 5, nil, -1, failure.ScopeRequest},
		// A silent loser rests only as a strike, with its RestClass (below).
		{"silent loser", def, failure.Verdict{Class: failure.SilentLoser, Scope: failure.ScopeRoute}, 5, nil, -1, failure.ScopeRequest},
		{"silent loser's strike rest", def, failure.Verdict{Class: failure.SilentLoser.RestClass(), Scope: failure.ScopeRoute}, 1, nil, 30 * time.Second, failure.ScopeRoute},

		{"minute unknown wait", def, failure.Verdict{Class: failure.RateMinute, Scope: failure.ScopeRoute}, 1, nil, 20 * time.Second, failure.ScopeRoute},
		{"minute clamped up", def, failure.Verdict{Class: failure.RateMinute, Scope: failure.ScopeRoute, RetryAfter: 2 * time.Second}, 1, nil, 20 * time.Second, failure.ScopeRoute},
		{"minute as given", def, failure.Verdict{Class: failure.RateMinute, Scope: failure.ScopeRoute, RetryAfter: 90 * time.Second}, 1, nil, 90 * time.Second, failure.ScopeRoute},
		{"minute clamped down", def, failure.Verdict{Class: failure.RateMinute, Scope: failure.ScopeRoute, RetryAfter: time.Hour}, 1, nil, 5 * time.Minute, failure.ScopeRoute},
		{"minute provider scope", def, failure.Verdict{Class: failure.RateMinute, Scope: failure.ScopeProvider, RetryAfter: 40 * time.Second}, 1, nil, 40 * time.Second, failure.ScopeProvider},
		{"minute does not grow", grow, failure.Verdict{Class: failure.RateMinute, Scope: failure.ScopeRoute}, 4, nil, 20 * time.Second, failure.ScopeRoute},

		{"day reset instant", def, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeProvider, RetryAfter: 90 * time.Minute, ResetAt: now.Add(90 * time.Minute)}, 1, utcMidnight, 90 * time.Minute, failure.ScopeProvider},
		{"day reset instant sooner than a minute cap", def, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeProvider, ResetAt: now.Add(2 * time.Minute)}, 1, utcMidnight, 2 * time.Minute, failure.ScopeProvider},
		{"day reset instant in the past", def, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeRoute, ResetAt: now.Add(-time.Minute)}, 1, utcMidnight, 12 * time.Hour, failure.ScopeRoute},
		{"day groq TPD wait is real", def, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeRoute, RetryAfter: 9*time.Minute + 38016*time.Millisecond}, 1, utcMidnight, 9*time.Minute + 38016*time.Millisecond, failure.ScopeRoute},
		{"day github wait is real", def, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeRoute, RetryAfter: 5631 * time.Second}, 1, utcMidnight, 5631 * time.Second, failure.ScopeRoute},
		{"day wait of exactly MinuteMax is real", def, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeRoute, RetryAfter: 5 * time.Minute}, 1, utcMidnight, 5 * time.Minute, failure.ScopeRoute},
		{"day short wait ignored", def, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeRoute, RetryAfter: 36 * time.Second}, 1, utcMidnight, 12 * time.Hour, failure.ScopeRoute},
		{"day nothing known", def, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeProvider}, 1, nil, time.Hour, failure.ScopeProvider},
		{"day short wait, no reset", def, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeRoute, RetryAfter: 36 * time.Second}, 1, nil, time.Hour, failure.ScopeRoute},
		{"day reset func in the past", def, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeRoute}, 1, func(time.Time) time.Time { return now }, time.Hour, failure.ScopeRoute},
		{"day wait capped", def, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeRoute, RetryAfter: 30 * 24 * time.Hour}, 1, utcMidnight, 48 * time.Hour, failure.ScopeRoute},

		{"auth", def, failure.Verdict{Class: failure.Auth, Scope: failure.ScopeProvider}, 1, nil, time.Hour, failure.ScopeProvider},
		{"gone", def, failure.Verdict{Class: failure.Gone, Scope: failure.ScopeRoute}, 3, nil, 6 * time.Hour, failure.ScopeRoute},
		{"bad config", def, failure.Verdict{Class: failure.BadConfig, Scope: failure.ScopeRoute}, 1, nil, 6 * time.Hour, failure.ScopeRoute},
		{"resting class without scope rests the route", def, failure.Verdict{Class: failure.Gone}, 1, nil, 6 * time.Hour, failure.ScopeRoute},

		{"overloaded", def, failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute}, 1, nil, 30 * time.Second, failure.ScopeRoute},
		{"overloaded no growth by default", def, failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute}, 9, nil, 30 * time.Second, failure.ScopeRoute},
		{"overloaded retry-after", def, failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute, RetryAfter: 2 * time.Minute}, 1, nil, 2 * time.Minute, failure.ScopeRoute},
		{"overloaded retry-after capped", def, failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute, RetryAfter: time.Hour}, 1, nil, 5 * time.Minute, failure.ScopeRoute},
		{"overloaded short retry-after", def, failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute, RetryAfter: time.Second}, 1, nil, 30 * time.Second, failure.ScopeRoute},
		{"growth 1", grow, failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute}, 1, nil, 30 * time.Second, failure.ScopeRoute},
		{"growth 2", grow, failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute}, 2, nil, time.Minute, failure.ScopeRoute},
		{"growth 3", grow, failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRoute}, 3, nil, 2 * time.Minute, failure.ScopeRoute},
		{"growth 4 empty", grow, failure.Verdict{Class: failure.Empty, Scope: failure.ScopeRoute}, 4, nil, 4 * time.Minute, failure.ScopeRoute},
		{"growth capped", grow, failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute}, 10, nil, 10 * time.Minute, failure.ScopeRoute},
		{"growth huge", grow, failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRoute}, 100000, nil, 10 * time.Minute, failure.ScopeRoute},
		{"consecutive 0 counts as 1", grow, failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute}, 0, nil, 30 * time.Second, failure.ScopeRoute},
		{"cap never below base", NewPolicy(config.RestTimes{Overloaded: time.Hour, Growth: 2, GrowthMax: time.Minute}), failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute}, 3, nil, time.Hour, failure.ScopeRoute},
		{"zero policy is the default", Policy{}, failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRoute}, 1, nil, 30 * time.Second, failure.ScopeRoute},
		{"zero policy empty", Policy{}, failure.Verdict{Class: failure.Empty, Scope: failure.ScopeRoute}, 1, nil, 30 * time.Second, failure.ScopeRoute},
		{"custom timeout", NewPolicy(config.RestTimes{Timeout: 2 * time.Minute}), failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRoute}, 1, nil, 2 * time.Minute, failure.ScopeRoute},
		{"min above max", NewPolicy(config.RestTimes{MinuteMin: 10 * time.Minute, MinuteMax: time.Minute}), failure.Verdict{Class: failure.RateMinute, Scope: failure.ScopeRoute}, 1, nil, 10 * time.Minute, failure.ScopeRoute},
		{"NaN growth", NewPolicy(config.RestTimes{Growth: nan()}), failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRoute}, 5, nil, 30 * time.Second, failure.ScopeRoute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var dayEnd time.Time
			if tc.nextReset != nil {
				dayEnd = tc.nextReset(now)
			}
			until, scope := tc.p.until(tc.v, now, tc.consecutive, dayEnd)
			want := time.Time{}
			if tc.want >= 0 {
				want = now.Add(tc.want)
			}
			if !until.Equal(want) || scope != tc.scope {
				t.Errorf("got %v (%v) %v, want %v (%v) %v", until, until.Sub(now), scope, want, tc.want, tc.scope)
			}
		})
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

func TestDefaultPolicy(t *testing.T) {
	p := config.DefaultRestTimes()
	want := config.RestTimes{Empty: 30 * time.Second, MinuteMin: 20 * time.Second, MinuteMax: 5 * time.Minute, DayUnknown: time.Hour,
		Auth: time.Hour, Gone: 6 * time.Hour, BadConfig: 6 * time.Hour, Overloaded: 30 * time.Second, Timeout: 30 * time.Second,
		Growth: 1, GrowthMax: 10 * time.Minute}
	if p != want {
		t.Errorf("got %+v, want %+v", p, want)
	}
	if got := NewPolicy(config.RestTimes{}).t; got != want {
		t.Errorf("zero with defaults: got %+v, want %+v", got, want)
	}
	if got := (Policy{}).compiled().t; got != want {
		t.Errorf("zero Policy: got %+v, want %+v", got, want)
	}
}

// TestPolicyKey checks what a rest holds back: the route, its provider, or
// nothing.
func TestPolicyKey(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	rt := &config.Route{ID: "groq/llama", Provider: &config.Provider{Name: "groq"}}
	for _, tc := range []struct {
		v     failure.Verdict
		want  Key
		until time.Duration
	}{
		{failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute}, RouteKey("groq/llama"), 30 * time.Second},
		{failure.Verdict{Class: failure.Gone}, RouteKey("groq/llama"), 6 * time.Hour},
		{failure.Verdict{Class: failure.Auth, Scope: failure.ScopeProvider}, ProviderKey("groq"), time.Hour},
		{failure.Verdict{Class: failure.BadRequest, Scope: failure.ScopeRequest}, Key{}, 0},
		{failure.Verdict{Class: failure.Cancelled, Scope: failure.ScopeRoute}, Key{}, 0},
	} {
		until, key := DefaultPolicy().Rest(tc.v, rt, now, 1, time.Time{})
		if key != tc.want || (tc.until == 0) != until.IsZero() || (tc.until != 0 && !until.Equal(now.Add(tc.until))) {
			t.Errorf("%v: got %v until %v, want %v for %v", tc.v.Class, key, until, tc.want, tc.until)
		}
	}
}

func readBody(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../failure/testdata/" + name + ".json")
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return b
}
