package route

import (
	"strings"
	"sync"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/quota"
)

// A probe at the edge (issue 31, item 2). A budget is an estimate: a
// day's count may hold calls the provider never counted (failed before
// they reached it, or counted by a store that lost its last write), a
// configured limit may be lower than the provider's. When every route of a
// chain is skipped by its own budget (none resting after a real refusal,
// none failed, none paused) and the alternative is the fallback, the walk
// calls once anyway the route whose window of an hour or longer frees up
// soonest (a minute window is not probed: see minuteWindow). At most one
// probe per route and window per budget slot (the wait the budget named,
// and at least a minute), on this instance. The probe is counted in the
// route's windows like any call, marked in the call log and the metrics
// (Attempt.EdgeProbe), and settled like any attempt: an answer is an
// answer, a 429 teaches the limit (its headers; Gemini's body, quota's
// LearnRefusal); a per-day 429 rests the route, a per-minute one does not
// (settle.go). A probe that answered frees its route's slots: the budget
// was stale, and the next request at the edge may probe it again, one at a
// time, until a refusal rests it (a configured limit half the provider's
// is walked up to the provider's this way, at the edge only).

// edgeBudget is a Budget that can count a call its windows refused
// (quota.Book.ReserveProbe).
type edgeBudget interface {
	ReserveProbe(r *config.Route, tokens int) *quota.Reservation
}

// edgeSlots remembers the budget slots probed: by route and window, the
// end of the slot probed. A window's slot is the wait its budget named,
// and at least a minute: a sliding minute's slots turn every quarter
// second, and a probe every quarter second would be a loop's 429s.
type edgeSlots struct {
	mu   sync.Mutex
	seen map[edgeSlot]time.Time
}

type edgeSlot struct {
	route, window string
}

// edgeEvery is the least time between two probes of one window of a
// route.
const edgeEvery = time.Minute

// take reports whether s may be probed at now, whose budget frees up at
// until, and marks it probed.
func (e *edgeSlots) take(s edgeSlot, until, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.seen == nil {
		e.seen = make(map[edgeSlot]time.Time)
	}
	if end, ok := e.seen[s]; ok && now.Before(end) {
		return false
	}
	for k, end := range e.seen {
		if !end.After(now) {
			delete(e.seen, k)
		}
	}
	e.seen[s] = maxTime(until, now.Add(edgeEvery))
	return true
}

// answered frees every slot of route: its probe answered, so its budget
// was stale, and the next request at the edge may probe it again (one
// probe at a time: the slot is taken while one is in flight). A probe
// refused for the day rests the route, which ends the probing.
func (e *edgeSlots) answered(route string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range e.seen {
		if k.route == route {
			delete(e.seen, k)
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// probeEdge starts the probe at the edge when the round found every route
// of the chain skipped by its own budget, and reports whether it did.
func (w *walk) probeEdge() bool {
	eb, ok := w.r.budget.(edgeBudget)
	if !ok || w.probed || w.refusal != nil || len(w.failures) > 0 || w.embed != nil || len(w.skips) == 0 {
		return false
	}
	var best *Skip
	for i := range w.skips {
		s := &w.skips[i]
		if !strings.HasPrefix(s.Reason, "budget: ") || s.Until.IsZero() {
			return false // resting, paused, too large, unable: no edge
		}
		if minuteWindow(s.Reason) {
			continue
		}
		if best == nil || s.Until.Before(best.Until) {
			best = s
		}
	}
	if best == nil || len(w.skips) < len(w.order)-w.countDisabled() {
		return false
	}
	rt := w.r.plan.Routes[best.Route]
	now := w.r.clock.Now()
	if rt == nil || !w.r.edges.take(edgeSlot{rt.ID, best.Reason}, best.Until, now) {
		return false
	}
	w.probed = true
	fitted, cut, fits := w.fitFor(rt, w.req, w.est)
	if !fits {
		return false
	}
	est := w.est
	if fitted != w.req {
		est = quota.Estimate(fitted)
	}
	out := quota.ExpectedOutput(fitted.MaxTokens, rt)
	res := eb.ReserveProbe(rt, quota.Reserved(rt, est, out))
	if res != nil {
		res.Prompt, res.Output = est, out
	}
	w.r.log.Info("probe at the edge: every route's budget refused; calling the one that frees soonest", "chain", w.ch.Name, "route", rt.ID)
	w.launch(ticket{route: rt, req: fitted, cut: cut, res: res, probe: true}, false)
	return true
}

// minuteWindow reports whether a budget skip's reason names a minute
// window ("budget: tpm spent", "budget: provider rpm spent"). Those are
// not probed: a minute frees up within seconds, its count is the
// provider's own within the second the sliding minute adds, and a
// probe refused there costs a minute's room (providers count refusals).
// The windows of an hour or longer are where a count goes stale.
func minuteWindow(reason string) bool {
	return strings.HasSuffix(reason, "rpm spent") || strings.HasSuffix(reason, "tpm spent")
}
