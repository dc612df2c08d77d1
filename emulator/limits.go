package emulator

import (
	"time"
	_ "time/tzdata" // Gemini's day ends at midnight America/Los_Angeles on every machine.

	"github.com/tollfree/tollfree/internal/clock"
)

// Limits are the counts a model or a provider account may spend. Zero means
// no limit.
type Limits struct {
	RPM int // requests per sliding minute
	RPD int // requests per day (see Reset)
	TPM int // prompt+completion tokens per sliding minute
	TPD int // prompt+completion tokens per day
}

func (l Limits) any() bool { return l.RPM > 0 || l.RPD > 0 || l.TPM > 0 || l.TPD > 0 }

// Reset is when a daily window starts again. The zero value means the
// flavor's own rule: midnight America/Los_Angeles for gemini, a rolling 24
// hours for groq and github, midnight UTC for the others.
type Reset struct {
	// Rolling makes the day the last 24 hours, refilling continuously.
	Rolling bool
	// Location is the zone of a midnight reset; nil means the flavor's.
	Location *time.Location
}

// resolve fills in the flavor's default rule.
func (r Reset) resolve(flavor string, la *time.Location) Reset {
	if r.Rolling || r.Location != nil {
		return r
	}
	switch flavor {
	case FlavorGemini:
		return Reset{Location: la}
	case FlavorGroq, FlavorGitHub:
		return Reset{Rolling: true}
	}
	return Reset{Location: time.UTC}
}

// dayStart is when the current day window began.
func (r Reset) dayStart(now time.Time) time.Time {
	if r.Rolling {
		return now.Add(-24 * time.Hour)
	}
	y, m, d := now.In(r.Location).Date()
	return clock.DayStart(y, m, d, r.Location)
}

// nextMidnight is the end of the current day window of a midnight reset;
// for a rolling reset it is 24 hours from now.
func (r Reset) nextMidnight(now time.Time) time.Time {
	if r.Rolling {
		return now.Add(24 * time.Hour)
	}
	y, m, d := now.In(r.Location).Date()
	return clock.DayStart(y, m, d+1, r.Location)
}

// event is one counted call.
type event struct {
	at     time.Time
	tokens int
	// dayOnly marks a refusal counted against the day (see
	// Provider.CountRefusals): it is not in the minute windows.
	dayOnly bool
}

// window holds the calls counted against one set of limits, oldest first.
// Counts are worked out from the stored times when read.
type window struct {
	events []event
}

// usage is what a window has spent.
type usage struct {
	minReq, minTok, dayReq, dayTok int
}

func (w *window) prune(now time.Time, r Reset) {
	start := r.dayStart(now)
	if minute := now.Add(-time.Minute); minute.Before(start) {
		start = minute
	}
	i := 0
	for i < len(w.events) && w.events[i].at.Before(start) {
		i++
	}
	w.events = w.events[i:]
}

func (w *window) usage(now time.Time, r Reset) usage {
	var u usage
	start, minute := r.dayStart(now), now.Add(-time.Minute)
	for _, e := range w.events {
		if e.at.After(start) || (!r.Rolling && e.at.Equal(start)) {
			u.dayReq++
			u.dayTok += e.tokens
		}
		if e.at.After(minute) && !e.dayOnly {
			u.minReq++
			u.minTok += e.tokens
		}
	}
	return u
}

func (w *window) add(now time.Time, tokens int) {
	w.events = append(w.events, event{at: now, tokens: tokens})
}

// refuse counts a refused call against the day's requests only.
func (w *window) refuse(now time.Time) {
	w.events = append(w.events, event{at: now, dayOnly: true})
}

// freeAt is when enough of the events inside span will have left it for
// need more requests (tokens false) or need more tokens (tokens true) to fit
// under limit. used is what the span holds now.
func (w *window) freeAt(now time.Time, span time.Duration, tokens bool, used, need, limit int) time.Time {
	from := now.Add(-span)
	for _, e := range w.events {
		if !e.at.After(from) || e.dayOnly && span < 24*time.Hour {
			continue
		}
		if tokens {
			used -= e.tokens
		} else {
			used--
		}
		if used+need <= limit {
			return e.at.Add(span)
		}
	}
	return now.Add(span)
}

// rateInfo describes a rate limit that was hit, for the flavor's 429.
type rateInfo struct {
	Day     bool // a daily limit (RPD/TPD), not a minute one
	Tokens  bool // a token limit (TPM/TPD), not a request one
	Account bool // the provider's account-wide limit, not the model's
	Limit   int
	Used    int
	// Requested is 1 for a request limit, the call's tokens for a token one.
	Requested int
	// Wait is how long until a retry can pass; ResetAt is now+Wait.
	Wait    time.Duration
	ResetAt time.Time
}

// check reports the limit this call would pass, if any. Daily limits are
// checked first: a spent day says more than a busy minute.
func (w *window) check(l Limits, r Reset, now time.Time, tokens int) (rateInfo, bool) {
	u := w.usage(now, r)
	hit := func(day, tok bool, limit, used, requested int, at time.Time) (rateInfo, bool) {
		return rateInfo{Day: day, Tokens: tok, Limit: limit, Used: used, Requested: requested,
			Wait: at.Sub(now), ResetAt: at}, true
	}
	dayAt := func(tok bool, used, need, limit int) time.Time {
		if r.Rolling {
			return w.freeAt(now, 24*time.Hour, tok, used, need, limit)
		}
		return r.nextMidnight(now)
	}
	switch {
	case l.RPD > 0 && u.dayReq+1 > l.RPD:
		return hit(true, false, l.RPD, u.dayReq, 1, dayAt(false, u.dayReq, 1, l.RPD))
	case l.TPD > 0 && u.dayTok+tokens > l.TPD:
		return hit(true, true, l.TPD, u.dayTok, tokens, dayAt(true, u.dayTok, tokens, l.TPD))
	case l.RPM > 0 && u.minReq+1 > l.RPM:
		return hit(false, false, l.RPM, u.minReq, 1, w.freeAt(now, time.Minute, false, u.minReq, 1, l.RPM))
	case l.TPM > 0 && u.minTok+tokens > l.TPM:
		return hit(false, true, l.TPM, u.minTok, tokens, w.freeAt(now, time.Minute, true, u.minTok, tokens, l.TPM))
	}
	return rateInfo{}, false
}

// budget is what a window has left after a call, for rate-limit headers.
type budget struct {
	limits Limits
	used   usage
	// dayReset is how long until the day is whole again: for a rolling day,
	// the requests used refill one every day/RPD (Groq's countdown grows
	// 86.4 s per request at 1,000 RPD, docs/PROVIDERS.md); for a midnight reset,
	// until midnight. minReset is how long until the minute's tokens have
	// refilled at TPM per minute.
	dayReset time.Duration
	minReset time.Duration
}

func (w *window) budget(l Limits, r Reset, now time.Time) budget {
	b := budget{limits: l, used: w.usage(now, r)}
	switch {
	case !r.Rolling:
		b.dayReset = r.nextMidnight(now).Sub(now)
	case l.RPD > 0:
		b.dayReset = time.Duration(b.used.dayReq) * (24 * time.Hour) / time.Duration(l.RPD)
	}
	if l.TPM > 0 {
		b.minReset = time.Duration(b.used.minTok) * time.Minute / time.Duration(l.TPM)
	}
	return b
}
