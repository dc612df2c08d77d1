package route

import (
	"net/http"
	"regexp"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/rest"
)

// The polite retry of a blip (docs/DECISIONS.md's blip row, issue 13): a failure
// that says nothing about the route's health beyond this one call is
// retried once on the same route, after the wait it asked for, before the
// walk fails over to a route that is often weaker. A blip is
//
//   - a bare 500 or 502: an HTTP answer whose body names no overload, high
//     demand or capacity (a 503 "high demand", a timeout, a reset
//     connection and an empty answer are no blips: they say the route is
//     in trouble, and the chain is their retry);
//   - a per-minute 429 that asks a wait (retry-after, Gemini's RetryInfo,
//     a "try again in 2.5s" sentence: whatever failure.Classify found) of
//     at most the chain's BlipWait that ends before the chain's deadline. A
//     429 asking no wait is no blip: retrying it at once would only meet
//     the same limit.
//
// The blip's attempt is logged and counted against the budget like any,
// but rests nothing. Its retry waits on the router's clock (never sooner
// than asked; a 500 asks nothing and is retried at once, since a fixed
// pause would add to every user's wait without making the second call
// likelier to work) and goes through pick like any launch, so a route that
// became limited or rested meanwhile is not called. The retry is marked
// (Attempt.Retry); if it fails too, its failure is settled as its class
// says and the walk fails over. A route is retried at most once a request.
//
// While a retry waits, no hedge starts: nothing is silent, and the retry
// is the walk's next launch; the hedge delay runs again from the retry's
// launch. A hedge already in flight keeps running, and may win (the retry
// is then dropped). One retry waits at a time: a second blip while one
// waits is settled as its class says.

// blips is what a walk knows of its polite retries.
type blips struct {
	retried map[*config.Route]bool // routes retried once already, this request
	pending *retry                 // the retry waiting for its time, this round
}

// retry is a blip's retry waiting for its time.
type retry struct {
	route *config.Route
	timer clock.Timer
	// failure is the blip, for the walk's error when the retry cannot be
	// made.
	failure Skip
}

// overloadRe finds a body that names an overload in a 500 or 502: such a
// failure is the decision table's "overloaded", not a blip. It reads the
// verdict's code and message (failure.Classify's reading of the body); the
// wordings are those of the flavors' overload bodies in docs/PROVIDERS.md
// ("The server is overloaded", "high demand", "high traffic"), and
// "capacity" ("no capacity", "at capacity") for the same said otherwise.
var overloadRe = regexp.MustCompile(`(?i)overload|high demand|high traffic|capacity`)

// blipWait reports whether the failure v of the attempt o is a blip the
// walk retries on the same route, and how long the retry waits.
func (w *walk) blipWait(o *outcome, v failure.Verdict) (time.Duration, bool) {
	if !w.ch.RetryBlips || o.retry || w.pending != nil || w.retried[o.route] || o.ctx.Err() != nil {
		return 0, false
	}
	switch statusOf(o.err) {
	case http.StatusInternalServerError, http.StatusBadGateway:
		return 0, v.Class == failure.Overloaded && !overloadRe.MatchString(v.Code+" "+v.Message)
	case http.StatusTooManyRequests:
		now := w.r.clock.Now()
		wait := v.RetryAfter
		if !v.ResetAt.IsZero() {
			wait = max(wait, v.ResetAt.Sub(now))
		}
		ok := v.Class == failure.RateMinute && wait > 0 && wait <= w.ch.BlipWait && now.Add(wait).Before(w.deadline)
		return wait, ok
	}
	return 0, false
}

// blip takes the failure v of the attempt o as a blip when it is one: it
// records the attempt without a rest and sets its retry for after the
// wait. It reports whether it did.
func (w *walk) blip(o *outcome, v failure.Verdict) bool {
	wait, ok := w.blipWait(o, v)
	if !ok {
		return false
	}
	w.book(o, v, rest.Rest{})
	if w.retried == nil {
		w.retried = make(map[*config.Route]bool, 1)
	}
	w.retried[o.route] = true
	w.pending = &retry{route: o.route, timer: w.r.clock.NewTimer(wait),
		failure: Skip{Route: o.route.ID, Reason: v.Class.String(), Class: v.Class}}
	w.r.log.Info("route blipped; retrying it once", "chain", w.ch.Name, "route", o.route.ID, "class", v.Class.String(), "wait", wait)
	return true
}

// retryC is the channel of the pending retry's timer, nil when none waits.
func (w *walk) retryC() <-chan time.Time {
	if w.pending == nil {
		return nil
	}
	return w.pending.timer.C()
}

// retryNow launches the pending retry, when pick still picks its route.
// When it does not (the route rests now, or its budget is spent), the
// blip stands as the route's failure and the walk goes on.
func (w *walk) retryNow() {
	p := w.pending
	w.pending = nil
	if w.typedSpent() {
		w.failures = append(w.failures, p.failure)
		return
	}
	t, skip, why := w.pick(p.route, w.req, w.est, false)
	if why != picked {
		w.failures = append(w.failures, p.failure)
		w.skips = append(w.skips, skip)
		return
	}
	t.retry = true
	w.launch(t, false)
}

// dropRetry forgets a retry still waiting at the end of a round.
func (w *walk) dropRetry() {
	if w.pending != nil {
		w.pending.timer.Stop()
		w.pending = nil
	}
}
