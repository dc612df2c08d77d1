package route

import (
	"context"
	"errors"
	"net/http"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/rest"
)

// Judging and settling: what an attempt that did not answer was (judge,
// with the failure package's classifier), and what follows from it: the
// rest package decides the rest (settle), the walk what it does next
// (failed).

// judge decides what an attempt's failure was. The context's cause comes
// first: only the attempt's own timeout, and silence that lost a race, are
// the route's fault. A race lost is judged as lost even when the caller
// left afterwards: a loser is wound down after the answer went out, when
// the request's context has often ended already.
func (w *walk) judge(o *outcome) failure.Verdict {
	now := w.r.clock.Now()
	if o.ctx.Err() != nil {
		switch cause := context.Cause(o.ctx); {
		case cause == errLostRace && w.silentLoser(o):
			return failure.Verdict{Class: failure.SilentLoser, Scope: failure.ScopeRoute,
				Message: "silent for " + o.lostAt.Sub(o.start).String() + " when another route answered"}
		case cause == errLostRace:
			return failure.Verdict{Class: failure.Cancelled, Scope: failure.ScopeRequest, Message: "lost the race to another route"}
		case cause == errRequestEnded:
			return failure.Verdict{Class: failure.Cancelled, Scope: failure.ScopeRequest, Message: "another route's failure ended the request"}
		case w.parent.Err() != nil:
			return failure.Verdict{Class: failure.Cancelled, Scope: failure.ScopeRequest, Message: "the caller went away"}
		case cause == errChainDeadline:
			return failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRequest, Message: "cut by the chain's deadline"}
		case cause == errShare:
			// Cut short of its own timeout to leave time for the routes
			// after it: slow for this request, not proven hung.
			return failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRequest, Message: "no answer within its share of the chain's deadline (time kept for the routes after it)"}
		case cause == context.DeadlineExceeded:
			return failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRoute, Message: "no answer within the attempt timeout"}
		case cause == errNoFirstToken:
			return failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRoute, Message: "no first token within " + firstTokenTimeout(o.route, w.ch).String()}
		}
	}
	return blame(failure.Classify(o.err, now), o.route, w.req)
}

// silentLoser reports whether an attempt that lost a race had sent nothing
// by the time it lost (docs/DECISIONS.md's silent_loser), for at least the hedge
// delay. Nothing sent means no first chunk for a stream (the race is for
// the first token); for a whole answer, no response at all: the adapters
// report a call cancelled before the response headers with Status 0, and
// one cancelled while its body was read with the response's status. The
// hedge delay is the bar because it is how long the chain lets a route be
// silent before it calls it slow: a hedge started late that loses to the
// first route half a second later has not shown it hangs.
func (w *walk) silentLoser(o *outcome) bool {
	if o.resp != nil || o.emb != nil || o.stream != nil || o.lostAt.IsZero() {
		return false
	}
	if !w.stream && statusOf(o.err) != 0 {
		return false
	}
	return o.lostAt.Sub(o.start) >= w.ch.HedgeDelay
}

// failed settles a failed attempt, judged v, and decides what the walk
// does next. It returns an error when the failure belongs to the caller.
func (w *walk) failed(o *outcome, v failure.Verdict) error {
	made := w.settle(o, v)
	w.rests.Put(made)
	rt := o.route
	switch {
	case v.Class == failure.BadRequest,
		v.Class == failure.Refused && !w.ch.FailoverOnRefusal:
		return &CallerError{Route: rt.ID, Class: v.Class, Status: statusOf(o.err), Message: v.Message}
	case w.refusedContent(o, v): // capable.go (issue 33)
	case v.Class == failure.TooLarge:
		w.tooLarge++
	case v.Class == failure.Unsupported:
		w.unsup.add(rt.ID, v)
	case v.Scope == failure.ScopeProvider:
		w.provFailed[rt.Provider.Name] = true
	}
	w.failures = append(w.failures, Skip{Route: rt.ID, Reason: v.Class.String(), Until: made.Until, Class: v.Class})
	return nil
}

// settle records an attempt that did not win, rests what it caused (the
// rest package decides), and settles its budget. It returns the rest it
// caused, the zero Rest when none. It runs on the request's goroutine or a
// drain's: it leaves the walk's own table of rests alone, for the request's
// goroutine to note the rest (failed).
func (w *walk) settle(o *outcome, v failure.Verdict) rest.Rest {
	r := w.r
	now := r.clock.Now()
	lost := context.Cause(o.ctx) == errLostRace
	if lost && (v.Class == failure.SilentLoser || v.Class == failure.Cancelled) {
		r.noteLatency(o.route.ID, now.Sub(o.start))
	}
	var made rest.Rest
	if !(o.probe && v.Class == failure.RateMinute) {
		// A probe at the edge refused for the minute confirms the budget
		// that skipped the route: the budget holds it, and no other probe
		// comes within the minute (edge.go). A rest would hold it past
		// the minute's room, at least 20 seconds.
		made = r.rests.Settle(w.background(), o.route, v, lost, now)
	}
	w.book(o, v, made)
	return made
}

// book records the failed attempt o, judged v, with the rest it made (the
// zero Rest for none), and settles its budget: a failed call still counts
// against the provider's quota, and its headers still tell what is left.
func (w *walk) book(o *outcome, v failure.Verdict, made rest.Rest) {
	r := w.r
	rt := o.route
	a := &Attempt{
		RequestID: w.id, Chain: w.ch.Name, Route: rt.ID, Provider: rt.Provider.Name, Model: rt.Model,
		Start: o.start, Latency: r.clock.Now().Sub(o.start), Status: statusOf(o.err), Class: v.Class,
		Error: v.LogText(), Hedge: o.hedge, Stream: w.stream, Part: o.part, Cut: o.cut,
		Retry: o.retry, Method: o.method, Repair: w.repairOf(o), RestKey: made.Key, RestUntil: made.Until, EdgeProbe: o.probe,
	}
	used, known := 0, false
	if sp := o.spent; sp != nil {
		// A stream's part that broke after text: its own tokens (issue 33).
		a.TokensIn, a.TokensOut, a.TokensEstimated = sp.in, sp.out, !sp.known
		used, known = o.res.Charged(sp.in, sp.out), sp.known
	}
	ctx := w.background()
	if ev, ok := r.budget.(evidence); ok && (v.Class == failure.RateMinute || v.Class == failure.RateDay) {
		ev.RateRefused(rt)
	}
	if r.budget != nil {
		if o.res != nil {
			_ = r.budget.Settle(ctx, o.res, used, known)
		}
		var ue *failure.UpstreamError
		if errors.As(o.err, &ue) && ue.Header != nil {
			_ = r.budget.Observe(ctx, rt, ue.Header)
		}
		if lr, ok := r.budget.(refusalLearner); ok && ue != nil && ue.Status == http.StatusTooManyRequests {
			lr.LearnRefusal(rt, ue.Body)
		}
	}
	r.record(a)
}

// refusalLearner is a Budget that learns the limit a 429's body names
// (quota.Book.LearnRefusal, issue 31).
type refusalLearner interface {
	LearnRefusal(r *config.Route, body []byte)
}

func statusOf(err error) int {
	var ue *failure.UpstreamError
	if errors.As(err, &ue) {
		return ue.Status
	}
	return 0
}
