package failure

import (
	"testing"
	"time"
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
			v := Classify(&UpstreamError{Provider: "gemini", Flavor: "gemini", Model: "gemini-3.6-flash", Status: 429, Body: readBody(t, file)}, now)
			if v.Class != RateDay || v.RetryAfter >= time.Minute || v.RetryAfter == 0 {
				t.Fatalf("verdict: got %v with RetryAfter %v, want rate_day with the short retryDelay", v.Class, v.RetryAfter)
			}
			until, scope := DefaultPolicy().Rest(v, now, 1, nextMidnight(la))
			if !until.Equal(midnight) || scope != ScopeRoute {
				t.Errorf("got until %v scope %v, want %v route", until, scope, midnight)
			}
		})
	}
}

func TestRest(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	utcMidnight := nextMidnight(time.UTC)
	def := DefaultPolicy()
	grow := DefaultPolicy()
	grow.Growth = 2
	cases := []struct {
		name        string
		p           Policy
		v           Verdict
		consecutive int
		nextReset   func(time.Time) time.Time
		want        time.Duration // from now; -1 means the zero time
		scope       Scope
	}{
		{"ok", def, Verdict{Class: OK}, 1, nil, -1, ScopeRequest},
		{"bad request", def, Verdict{Class: BadRequest, Scope: ScopeRequest}, 1, nil, -1, ScopeRequest},
		{"refused", def, Verdict{Class: Refused, Scope: ScopeRequest}, 1, nil, -1, ScopeRequest},
		{"too large", def, Verdict{Class: TooLarge, Scope: ScopeRequest, RetryAfter: time.Hour}, 1, nil, -1, ScopeRequest},
		{"cancelled", def, Verdict{Class: Cancelled}, 5, nil, -1, ScopeRequest},
		// A silent loser rests only as a strike, with its RestClass (below).
		{"silent loser", def, Verdict{Class: SilentLoser, Scope: ScopeRoute}, 5, nil, -1, ScopeRequest},
		{"silent loser's strike rest", def, Verdict{Class: SilentLoser.RestClass(), Scope: ScopeRoute}, 1, nil, 30 * time.Second, ScopeRoute},

		{"minute unknown wait", def, Verdict{Class: RateMinute, Scope: ScopeRoute}, 1, nil, 20 * time.Second, ScopeRoute},
		{"minute clamped up", def, Verdict{Class: RateMinute, Scope: ScopeRoute, RetryAfter: 2 * time.Second}, 1, nil, 20 * time.Second, ScopeRoute},
		{"minute as given", def, Verdict{Class: RateMinute, Scope: ScopeRoute, RetryAfter: 90 * time.Second}, 1, nil, 90 * time.Second, ScopeRoute},
		{"minute clamped down", def, Verdict{Class: RateMinute, Scope: ScopeRoute, RetryAfter: time.Hour}, 1, nil, 5 * time.Minute, ScopeRoute},
		{"minute provider scope", def, Verdict{Class: RateMinute, Scope: ScopeProvider, RetryAfter: 40 * time.Second}, 1, nil, 40 * time.Second, ScopeProvider},
		{"minute does not grow", grow, Verdict{Class: RateMinute, Scope: ScopeRoute}, 4, nil, 20 * time.Second, ScopeRoute},

		{"day reset instant", def, Verdict{Class: RateDay, Scope: ScopeProvider, RetryAfter: 90 * time.Minute, ResetAt: now.Add(90 * time.Minute)}, 1, utcMidnight, 90 * time.Minute, ScopeProvider},
		{"day reset instant sooner than a minute cap", def, Verdict{Class: RateDay, Scope: ScopeProvider, ResetAt: now.Add(2 * time.Minute)}, 1, utcMidnight, 2 * time.Minute, ScopeProvider},
		{"day reset instant in the past", def, Verdict{Class: RateDay, Scope: ScopeRoute, ResetAt: now.Add(-time.Minute)}, 1, utcMidnight, 12 * time.Hour, ScopeRoute},
		{"day groq TPD wait is real", def, Verdict{Class: RateDay, Scope: ScopeRoute, RetryAfter: 9*time.Minute + 38016*time.Millisecond}, 1, utcMidnight, 9*time.Minute + 38016*time.Millisecond, ScopeRoute},
		{"day github wait is real", def, Verdict{Class: RateDay, Scope: ScopeRoute, RetryAfter: 5631 * time.Second}, 1, utcMidnight, 5631 * time.Second, ScopeRoute},
		{"day wait of exactly MinuteMax is real", def, Verdict{Class: RateDay, Scope: ScopeRoute, RetryAfter: 5 * time.Minute}, 1, utcMidnight, 5 * time.Minute, ScopeRoute},
		{"day short wait ignored", def, Verdict{Class: RateDay, Scope: ScopeRoute, RetryAfter: 36 * time.Second}, 1, utcMidnight, 12 * time.Hour, ScopeRoute},
		{"day nothing known", def, Verdict{Class: RateDay, Scope: ScopeProvider}, 1, nil, time.Hour, ScopeProvider},
		{"day short wait, no reset", def, Verdict{Class: RateDay, Scope: ScopeRoute, RetryAfter: 36 * time.Second}, 1, nil, time.Hour, ScopeRoute},
		{"day reset func in the past", def, Verdict{Class: RateDay, Scope: ScopeRoute}, 1, func(time.Time) time.Time { return now }, time.Hour, ScopeRoute},
		{"day wait capped", def, Verdict{Class: RateDay, Scope: ScopeRoute, RetryAfter: 30 * 24 * time.Hour}, 1, utcMidnight, 48 * time.Hour, ScopeRoute},

		{"auth", def, Verdict{Class: Auth, Scope: ScopeProvider}, 1, nil, time.Hour, ScopeProvider},
		{"gone", def, Verdict{Class: Gone, Scope: ScopeRoute}, 3, nil, 6 * time.Hour, ScopeRoute},
		{"bad config", def, Verdict{Class: BadConfig, Scope: ScopeRoute}, 1, nil, 6 * time.Hour, ScopeRoute},
		{"resting class without scope rests the route", def, Verdict{Class: Gone}, 1, nil, 6 * time.Hour, ScopeRoute},

		{"overloaded", def, Verdict{Class: Overloaded, Scope: ScopeRoute}, 1, nil, 30 * time.Second, ScopeRoute},
		{"overloaded no growth by default", def, Verdict{Class: Overloaded, Scope: ScopeRoute}, 9, nil, 30 * time.Second, ScopeRoute},
		{"overloaded retry-after", def, Verdict{Class: Overloaded, Scope: ScopeRoute, RetryAfter: 2 * time.Minute}, 1, nil, 2 * time.Minute, ScopeRoute},
		{"overloaded retry-after capped", def, Verdict{Class: Overloaded, Scope: ScopeRoute, RetryAfter: time.Hour}, 1, nil, 5 * time.Minute, ScopeRoute},
		{"overloaded short retry-after", def, Verdict{Class: Overloaded, Scope: ScopeRoute, RetryAfter: time.Second}, 1, nil, 30 * time.Second, ScopeRoute},
		{"growth 1", grow, Verdict{Class: Overloaded, Scope: ScopeRoute}, 1, nil, 30 * time.Second, ScopeRoute},
		{"growth 2", grow, Verdict{Class: Overloaded, Scope: ScopeRoute}, 2, nil, time.Minute, ScopeRoute},
		{"growth 3", grow, Verdict{Class: Timeout, Scope: ScopeRoute}, 3, nil, 2 * time.Minute, ScopeRoute},
		{"growth 4 empty", grow, Verdict{Class: Empty, Scope: ScopeRoute}, 4, nil, 4 * time.Minute, ScopeRoute},
		{"growth capped", grow, Verdict{Class: Overloaded, Scope: ScopeRoute}, 10, nil, 10 * time.Minute, ScopeRoute},
		{"growth huge", grow, Verdict{Class: Timeout, Scope: ScopeRoute}, 100000, nil, 10 * time.Minute, ScopeRoute},
		{"consecutive 0 counts as 1", grow, Verdict{Class: Overloaded, Scope: ScopeRoute}, 0, nil, 30 * time.Second, ScopeRoute},
		{"cap never below base", Policy{Overloaded: time.Hour, Growth: 2, GrowthMax: time.Minute}, Verdict{Class: Overloaded, Scope: ScopeRoute}, 3, nil, time.Hour, ScopeRoute},
		{"zero policy is the default", Policy{}, Verdict{Class: Timeout, Scope: ScopeRoute}, 1, nil, 30 * time.Second, ScopeRoute},
		{"zero policy empty", Policy{}, Verdict{Class: Empty, Scope: ScopeRoute}, 1, nil, 30 * time.Second, ScopeRoute},
		{"custom timeout", Policy{Timeout: 2 * time.Minute}, Verdict{Class: Timeout, Scope: ScopeRoute}, 1, nil, 2 * time.Minute, ScopeRoute},
		{"min above max", Policy{MinuteMin: 10 * time.Minute, MinuteMax: time.Minute}, Verdict{Class: RateMinute, Scope: ScopeRoute}, 1, nil, 10 * time.Minute, ScopeRoute},
		{"NaN growth", Policy{Growth: nan()}, Verdict{Class: Timeout, Scope: ScopeRoute}, 5, nil, 30 * time.Second, ScopeRoute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			until, scope := tc.p.Rest(tc.v, now, tc.consecutive, tc.nextReset)
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
	p := DefaultPolicy()
	want := Policy{Empty: 30 * time.Second, MinuteMin: 20 * time.Second, MinuteMax: 5 * time.Minute, DayUnknown: time.Hour,
		Auth: time.Hour, Gone: 6 * time.Hour, BadConfig: 6 * time.Hour, Overloaded: 30 * time.Second, Timeout: 30 * time.Second,
		Growth: 1, GrowthMax: 10 * time.Minute}
	if p != want {
		t.Errorf("got %+v, want %+v", p, want)
	}
	if got := (Policy{}).withDefaults(); got != want {
		t.Errorf("zero with defaults: got %+v, want %+v", got, want)
	}
}
