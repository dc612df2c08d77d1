package rest

import (
	"math"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
)

// Policy says how long each kind of failure rests, and what: the decision
// table's consequences, compiled from config.RestTimes. It is a pure
// function of its inputs and safe for concurrent use. The zero Policy is
// the defaults (config.DefaultRestTimes).
type Policy struct {
	t config.RestTimes
}

// NewPolicy compiles t: every zero duration takes its default, a
// MinuteMax below MinuteMin is raised to it, and a Growth below 1 (or not a
// number) is 1.
func NewPolicy(t config.RestTimes) Policy {
	d := config.DefaultRestTimes()
	fill := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	fill(&t.Empty, d.Empty)
	fill(&t.MinuteMin, d.MinuteMin)
	fill(&t.MinuteMax, d.MinuteMax)
	fill(&t.DayUnknown, d.DayUnknown)
	fill(&t.Auth, d.Auth)
	fill(&t.Gone, d.Gone)
	fill(&t.BadConfig, d.BadConfig)
	fill(&t.Overloaded, d.Overloaded)
	fill(&t.Timeout, d.Timeout)
	fill(&t.GrowthMax, d.GrowthMax)
	if t.MinuteMax < t.MinuteMin {
		t.MinuteMax = t.MinuteMin
	}
	if !(t.Growth >= 1) || math.IsInf(t.Growth, 0) {
		t.Growth = 1
	}
	return Policy{t: t}
}

// DefaultPolicy is the decision table's defaults.
func DefaultPolicy() Policy { return NewPolicy(config.RestTimes{}) }

// compiled returns p with its defaults: the zero Policy is the default one.
func (p Policy) compiled() Policy {
	if p.t == (config.RestTimes{}) {
		return DefaultPolicy()
	}
	return p
}

// maxDayRest caps a per-day rest taken from a provider-named wait: no free
// tier's day is longer, and a garbage header must not rest a route for a
// month.
const maxDayRest = 48 * time.Hour

// Rest says what a failure of rt judged v rests, and until when. streak is
// the number of failures in a row of the route, this one included (values
// below 1 count as 1). dayEnd is the route's next daily reset (Gemini:
// midnight America/Los_Angeles; quota.NextReset works it out), the zero
// time when unknown. When nothing rests, until is the zero time and key
// the zero Key. See until for the durations.
func (p Policy) Rest(v failure.Verdict, rt *config.Route, now time.Time, streak int, dayEnd time.Time) (until time.Time, key Key) {
	until, scope := p.until(v, now, streak, dayEnd)
	switch scope {
	case failure.ScopeRoute:
		return until, RouteKey(rt.ID)
	case failure.ScopeProvider:
		return until, ProviderKey(rt.Provider.Name)
	}
	return time.Time{}, Key{}
}

// until says how long v rests, and what: the route, or every route of the
// provider.
//
// OK, BadRequest, Refused, TooLarge and Cancelled return the zero time and
// ScopeRequest: nothing rests.
//
// RateMinute rests for v.RetryAfter clamped to [MinuteMin, MinuteMax], or
// MinuteMin when the wait is unknown.
//
// RateDay rests until, in order:
//  1. v.ResetAt, when it is after now: a provider that names its reset
//     instant (OpenRouter's epoch X-RateLimit-Reset) knows its own day;
//  2. now + v.RetryAfter, when the wait is at least MinuteMax: a day-scale
//     wait is the real one (Groq TPD "try again in 9m38.016s", GitHub
//     "Please wait 5631 seconds", Cerebras x-ratelimit-reset-requests-day);
//  3. dayEnd, when it is after now: a shorter wait is ignored, because it
//     belongs to a minute bucket, not the day (Gemini's per-day 429
//     carries a 36s retryDelay and "Please retry in 36.4s", and resting 36s
//     would spend the next request on another 429);
//  4. now + DayUnknown.
//
// Provider-named waits (1 and 2) are capped at 48h.
//
// Auth, Gone and BadConfig rest for their fixed durations. Overloaded,
// Timeout and Empty rest for their base duration times
// Growth^(streak-1), capped at GrowthMax; Overloaded also honours a
// longer retry-after (a 503's Retry-After), up to MinuteMax.
//
// The scope is v.Scope, or ScopeRoute when a resting verdict says
// ScopeRequest.
func (p Policy) until(v failure.Verdict, now time.Time, streak int, dayEnd time.Time) (time.Time, failure.Scope) {
	if !v.Class.Rests() {
		return time.Time{}, failure.ScopeRequest
	}
	t := p.compiled().t
	scope := v.Scope
	if scope == failure.ScopeRequest {
		scope = failure.ScopeRoute
	}
	var d time.Duration
	switch v.Class {
	case failure.RateMinute:
		d = min(max(v.RetryAfter, t.MinuteMin), t.MinuteMax)
	case failure.RateDay:
		return dayRest(t, v, now, dayEnd), scope
	case failure.Auth:
		d = t.Auth
	case failure.Gone:
		d = t.Gone
	case failure.BadConfig:
		d = t.BadConfig
	case failure.Overloaded:
		d = grow(t, t.Overloaded, streak)
		if v.RetryAfter > d {
			d = max(d, min(v.RetryAfter, t.MinuteMax))
		}
	case failure.Timeout:
		d = grow(t, t.Timeout, streak)
	case failure.Empty:
		d = grow(t, t.Empty, streak)
	}
	return now.Add(d), scope
}

// dayRest is the end of a per-day rest; see until.
func dayRest(t config.RestTimes, v failure.Verdict, now, dayEnd time.Time) time.Time {
	limit := now.Add(maxDayRest)
	switch {
	case v.ResetAt.After(now):
		return minTime(v.ResetAt, limit)
	case v.RetryAfter >= t.MinuteMax:
		return minTime(now.Add(v.RetryAfter), limit)
	case dayEnd.After(now):
		return dayEnd
	}
	return now.Add(t.DayUnknown)
}

// grow returns base × Growth^(streak-1), capped at GrowthMax but never
// below base.
func grow(t config.RestTimes, base time.Duration, streak int) time.Duration {
	if t.Growth == 1 || streak <= 1 {
		return base
	}
	f := float64(base) * math.Pow(t.Growth, float64(streak-1))
	limit := max(t.GrowthMax, base)
	if f >= float64(limit) || math.IsInf(f, 0) || math.IsNaN(f) {
		return limit
	}
	return time.Duration(f)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
