package failure

import (
	"math"
	"time"
)

// Policy says how long each kind of failure rests a route. Every duration's
// zero value means its default (see DefaultPolicy), so the zero Policy works;
// to make a class rest briefly, give it a small duration.
type Policy struct {
	// Empty rests a route that answered 2xx with nothing usable. Default 30s.
	Empty time.Duration
	// MinuteMin and MinuteMax clamp a per-minute rate limit's retry-after;
	// MinuteMin is also the rest when the wait is unknown, and MinuteMax the
	// shortest provider-named wait a per-day limit trusts (see Rest).
	// Defaults 20s and 5m.
	MinuteMin, MinuteMax time.Duration
	// DayUnknown rests a per-day limit when neither the provider nor the
	// route's reset says when the day ends. Default 1h.
	DayUnknown time.Duration
	// Auth rests every route of a provider whose key is refused. Default 1h.
	Auth time.Duration
	// Gone rests a route whose model is not there. Default 6h.
	Gone time.Duration
	// BadConfig rests a route whose own settings the model refuses.
	// Default 6h.
	BadConfig time.Duration
	// Overloaded rests a route after a 5xx, a refused or reset connection
	// or a cut stream; a longer retry-after, up to MinuteMax, wins.
	// Default 30s.
	Overloaded time.Duration
	// Timeout rests a route that did not answer in time. Default 30s.
	Timeout time.Duration
	// Growth multiplies the Overloaded, Timeout and Empty rests by
	// Growth^(consecutive-1). Default (and any value below 1): 1, no growth.
	Growth float64
	// GrowthMax caps a grown rest (never below the class's base rest).
	// Default 10m.
	GrowthMax time.Duration
}

// DefaultPolicy returns the decision table's defaults: Empty 30s, MinuteMin
// 20s, MinuteMax 5m, DayUnknown 1h, Auth 1h, Gone 6h, BadConfig 6h,
// Overloaded 30s, Timeout 30s, Growth 1, GrowthMax 10m.
func DefaultPolicy() Policy {
	return Policy{
		Empty:      30 * time.Second,
		MinuteMin:  20 * time.Second,
		MinuteMax:  5 * time.Minute,
		DayUnknown: time.Hour,
		Auth:       time.Hour,
		Gone:       6 * time.Hour,
		BadConfig:  6 * time.Hour,
		Overloaded: 30 * time.Second,
		Timeout:    30 * time.Second,
		Growth:     1,
		GrowthMax:  10 * time.Minute,
	}
}

// maxDayRest caps a per-day rest taken from a provider-named wait: no free
// tier's day is longer, and a garbage header must not rest a route for a
// month.
const maxDayRest = 48 * time.Hour

// withDefaults fills every zero field from DefaultPolicy.
func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	fill := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	fill(&p.Empty, d.Empty)
	fill(&p.MinuteMin, d.MinuteMin)
	fill(&p.MinuteMax, d.MinuteMax)
	fill(&p.DayUnknown, d.DayUnknown)
	fill(&p.Auth, d.Auth)
	fill(&p.Gone, d.Gone)
	fill(&p.BadConfig, d.BadConfig)
	fill(&p.Overloaded, d.Overloaded)
	fill(&p.Timeout, d.Timeout)
	fill(&p.GrowthMax, d.GrowthMax)
	if p.MinuteMax < p.MinuteMin {
		p.MinuteMax = p.MinuteMin
	}
	if !(p.Growth >= 1) || math.IsInf(p.Growth, 0) {
		p.Growth = 1
	}
	return p
}

// Rest says how long v rests, and what: the route, or every route of the
// provider. consecutive is the number of failures in a row of the route,
// this one included (values below 1 count as 1). nextReset gives the
// route's next daily reset after a time (Gemini: midnight
// America/Los_Angeles); it may be nil when the route has none.
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
//  3. nextReset(now): a shorter wait is ignored, because it belongs to a
//     minute bucket, not the day (Gemini's per-day 429 carries a 36s
//     retryDelay and "Please retry in 36.4s", and resting 36s would spend
//     the next request on another 429);
//  4. now + DayUnknown.
//
// Provider-named waits (1 and 2) are capped at 48h.
//
// Auth, Gone and BadConfig rest for their fixed durations. Overloaded,
// Timeout and Empty rest for their base duration times
// Growth^(consecutive-1), capped at GrowthMax; Overloaded also honours a
// longer retry-after (a 503's Retry-After), up to MinuteMax.
//
// The scope is v.Scope, or ScopeRoute when a resting verdict says
// ScopeRequest.
func (p Policy) Rest(v Verdict, now time.Time, consecutive int, nextReset func(time.Time) time.Time) (until time.Time, scope Scope) {
	if !v.Class.Rests() {
		return time.Time{}, ScopeRequest
	}
	p = p.withDefaults()
	scope = v.Scope
	if scope == ScopeRequest {
		scope = ScopeRoute
	}
	var d time.Duration
	switch v.Class {
	case RateMinute:
		d = min(max(v.RetryAfter, p.MinuteMin), p.MinuteMax)
	case RateDay:
		return p.dayRest(v, now, nextReset), scope
	case Auth:
		d = p.Auth
	case Gone:
		d = p.Gone
	case BadConfig:
		d = p.BadConfig
	case Overloaded:
		d = p.grow(p.Overloaded, consecutive)
		if v.RetryAfter > d {
			d = max(d, min(v.RetryAfter, p.MinuteMax))
		}
	case Timeout:
		d = p.grow(p.Timeout, consecutive)
	case Empty:
		d = p.grow(p.Empty, consecutive)
	}
	return now.Add(d), scope
}

// dayRest is the end of a per-day rest; see Rest.
func (p Policy) dayRest(v Verdict, now time.Time, nextReset func(time.Time) time.Time) time.Time {
	limit := now.Add(maxDayRest)
	switch {
	case v.ResetAt.After(now):
		return minTime(v.ResetAt, limit)
	case v.RetryAfter >= p.MinuteMax:
		return minTime(now.Add(v.RetryAfter), limit)
	case nextReset != nil:
		if t := nextReset(now); t.After(now) {
			return t
		}
	}
	return now.Add(p.DayUnknown)
}

// grow returns base × Growth^(consecutive-1), capped at GrowthMax but never
// below base.
func (p Policy) grow(base time.Duration, consecutive int) time.Duration {
	if p.Growth == 1 || consecutive <= 1 {
		return base
	}
	f := float64(base) * math.Pow(p.Growth, float64(consecutive-1))
	limit := max(p.GrowthMax, base)
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
