package route

import (
	"errors"
	"fmt"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
)

// Picking decides whether one route may take one request now, without
// calling it (docs/DESIGN.md, "How one request flows", step 5). The walk (launchNext, hedgePast), a
// stream's continuation (continueOn) and a probe all pick through pick, so
// that a route is skipped for the same reasons wherever it is tried.

// ticket is a route picked for a request: the request fitted to it, and
// the budget reserved for it.
type ticket struct {
	route *config.Route
	req   *llm.Request
	cut   string             // what fitting cut from the request, for the call log
	res   *quota.Reservation // nil without a budget, or when the store failed
	retry bool               // the polite retry of a blip (blip.go)
	probe bool               // a probe at the edge (edge.go)
}

// pickResult says that pick picked a route, or why it did not.
type pickResult uint8

const (
	picked       pickResult = iota
	notEligible             // disabled, its provider failed, no adapter, resting or paused
	notHedgeable            // a hedge may not start it (see hedgeable)
	notFitting              // the request is too large for its context or a token limit
	noBudget                // its budget cannot take the request now
)

// callerRefused: the caller's limits refused the request (see pick).
const callerRefused = noBudget + 1

// pick decides whether rt may take req now (est is req's estimate), and
// reserves rt's budget for it when it may. In order: on a chain that
// requires schemas, rt must enforce the request's (canType); rt must be
// eligible (see eligible); for a hedge, hedgeable; req, as rt is to be
// asked it (a typed request's schema put in words for a route that cannot
// enforce it, see fitFor), must fit rt's context (cut to fit where the
// chain allows, see fit); and rt's budget must take it.
// A budget whose store fails does not stop the call: the route is picked
// without a reservation. When rt is not picked, skip says why.
func (w *walk) pick(rt *config.Route, req *llm.Request, est int, hedge bool) (t ticket, skip Skip, why pickResult) {
	t, skip, why = w.pickRoute(rt, req, est, hedge)
	if why != picked && cap(w.skips) == 0 {
		// The skip is about to be tallied: a long chain skips many routes a
		// request, and a tally made for the whole chain at once is not
		// grown again and again.
		w.skips = make([]Skip, 0, len(w.order))
	}
	return t, skip, why
}

func (w *walk) pickRoute(rt *config.Route, req *llm.Request, est int, hedge bool) (ticket, Skip, pickResult) {
	if skip, ok := w.canType(rt); !ok {
		return ticket{}, skip, notEligible
	}
	if skip, ok := w.canCarry(rt); !ok { // capable.go (issue 33)
		return ticket{}, skip, notEligible
	}
	now := w.r.clock.Now()
	if skip, ok := w.eligible(rt, now); !ok {
		return ticket{}, skip, notEligible
	}
	if hedge && !w.hedgeable(rt) {
		return ticket{}, Skip{Route: rt.ID, Reason: "too scarce to hedge onto"}, notHedgeable
	}
	fitted, cut, fits := w.fitFor(rt, req, est)
	if !fits {
		return ticket{}, Skip{Route: rt.ID, Reason: fmt.Sprintf("too large: about %d tokens for a context of %d", est, rt.MaxContext)}, notFitting
	}
	t := ticket{route: rt, req: fitted, cut: cut}
	if w.r.budget == nil {
		return t, Skip{}, picked
	}
	if fitted != req {
		est = quota.Estimate(fitted)
	}
	in, out := w.r.sizes(est, fitted.MaxTokens, rt)
	tokens := quota.Reserved(rt, in, out)
	if w.spent != nil {
		// A window the budget knows is spent: no Reserve, no Store call.
		if limit, until, ok := w.spent.Spent(rt, tokens, w.ch.Margin, now); ok {
			return ticket{}, Skip{Route: rt.ID, Reason: spentReason(limit), Until: until}, noBudget
		}
	}
	res, err := w.r.budget.Reserve(w.parent, rt, tokens, w.ch.Margin)
	if err == nil {
		t.res = res
		if res != nil {
			res.Prompt, res.Output = est, out
		}
		if w.r.pacer != nil && w.ch.Pace && res != nil {
			w.r.pacer.Picked(w.ch, rt)
		}
		return t, Skip{}, picked
	}
	// Declared here, not above: errors.As makes each a heap allocation
	// where it is declared, and most picks have no error.
	var ex *quota.SpentError
	var le *quota.LimitError
	switch {
	case errors.As(err, &le):
		// The caller's limits, checked with this first reservation
		// (quota.Admit): no route is to be tried for it.
		w.refusal = err
		return ticket{}, Skip{Route: rt.ID, Reason: "caller limit: " + le.Name()}, callerRefused
	case errors.As(err, &ex) && ex.TooLarge:
		return ticket{}, Skip{Route: rt.ID, Reason: "too large for its " + ex.Limit + " limit"}, notFitting
	case errors.As(err, &ex):
		return ticket{}, Skip{Route: rt.ID, Reason: spentReason(ex.Limit), Until: ex.Until}, noBudget
	default:
		w.r.log.Warn("budget check failed; calling the route anyway", "route", rt.ID, "err", err)
	}
	t.res = res
	return t, Skip{}, picked
}

// eligible reports whether rt may be called now at all, and when not,
// why: it is disabled, its provider failed this request already (a dead
// key fails every model of the account), there is no adapter for its
// provider, or it or its provider is resting or paused.
func (w *walk) eligible(rt *config.Route, now time.Time) (Skip, bool) {
	if rt.Disabled {
		return Skip{Route: rt.ID, Reason: "disabled: " + rt.DisabledReason}, false
	}
	if w.provFailed[rt.Provider.Name] {
		return Skip{Route: rt.ID, Reason: "provider " + rt.Provider.Name + " failed for this request"}, false
	}
	if _, ok := w.r.ups[rt.Provider.Name]; !ok {
		return Skip{Route: rt.ID, Reason: "no adapter for provider " + rt.Provider.Name}, false
	}
	if rs, ok := w.rests.Holding(rt, now); ok {
		what := "paused by hand"
		if !rs.Manual {
			what = restingReason(rs.Class)
		}
		return Skip{Route: rt.ID, Reason: what, Until: rs.Until}, false
	}
	return Skip{}, true
}

// spentChecker is a Budget that can tell a spent route from memory, with
// no call to its store (quota.Book.Spent): a long chain's spent routes
// then cost a walk a lookup each (issue 18, item 5). Reserve stays the
// authority whenever it says nothing.
type spentChecker interface {
	Spent(r *config.Route, tokens int, margin float64, now time.Time) (limit string, until time.Time, ok bool)
}

// The reasons of the skips a long chain makes on every request, made once
// rather than on each skip: "budget: rpd spent", "resting (rate_day)".
var (
	spentReasons = func() (out [2 * len(windowNames)]string) {
		for i, n := range windowNames {
			out[2*i] = "budget: " + n + " spent"
			out[2*i+1] = "budget: provider " + n + " spent"
		}
		return out
	}()
	restingReasons = func() (out [failure.NumClasses]string) {
		for c := range failure.NumClasses {
			out[c] = "resting (" + c.String() + ")"
		}
		return out
	}()
)

// windowNames are the names quota gives its windows (SpentError.Limit),
// with "provider " before them for a provider's.
var windowNames = [...]string{"rpm", "rpd", "tpm", "tpd", "rph", "tph", "tpmo", "rpmo"}

// spentReason is the skip reason of a route whose window limit is spent.
func spentReason(limit string) string {
	const pre, suf = "budget: ", " spent"
	for _, r := range spentReasons {
		if len(r) == len(pre)+len(limit)+len(suf) && r[len(pre):len(r)-len(suf)] == limit {
			return r
		}
	}
	return pre + limit + suf
}

// restingReason is the skip reason of a route resting for a failure of
// class c.
func restingReason(c failure.Class) string {
	if c >= 0 && c < failure.NumClasses {
		return restingReasons[c]
	}
	return "resting (" + c.String() + ")"
}

// hedgeable reports whether a hedge may start rt: never a scarce route, and
// otherwise only one with plenty of today's requests left.
func (w *walk) hedgeable(rt *config.Route) bool {
	if rt.Scarce {
		return false
	}
	if rt.Plentiful {
		return true
	}
	if w.r.budget == nil {
		return rt.Limits.RPD == 0 || rt.Limits.RPD > w.ch.HedgeMinDaily
	}
	left, err := w.r.budget.Left(w.parent, rt)
	if err != nil {
		return false
	}
	n, limited := left.DailyLeft()
	return !limited || n > int64(w.ch.HedgeMinDaily)
}
