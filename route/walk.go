package route

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/rest"
)

// The causes an attempt's context is cancelled with, so that its outcome
// can be told apart: its own timeout (a stream's first-token timeout)
// rests the route; the chain's deadline,
// a caller that went away, and another attempt's failure that ended the
// request do not; a lost race is a strike when the loser had been silent
// (see silentLoser).
var (
	errChainDeadline = errors.New("the chain's deadline was reached")
	errNoFirstToken  = errors.New("no first token within the first-token timeout")
	// errShare ends an attempt at its share of the deadline: the time
	// kept for the routes after it (keepFor) cut it short of its own
	// timeout.
	errShare        = errors.New("no answer within its share of the chain's deadline")
	errLostRace     = errors.New("another route answered first")
	errRequestEnded = errors.New("another route's failure ended the request")
)

// walk is one request's way down one chain: which routes it may take
// (pick.go), the attempts it makes and races (attempt.go), and what each
// failure means for it and for the route (settle.go). It is used by one
// goroutine, the request's; attempts report back on results, and drains
// of abandoned attempts read only what does not change.
type walk struct {
	r      *Router
	ch     *config.Chain
	id     string
	req    *llm.Request
	est    int    // estimated input tokens of req
	kept   string // what keepExchanges dropped, for the call log
	stream bool
	parent context.Context
	bg     context.Context // see background

	start    time.Time
	deadline time.Time
	order    []*config.Route
	rests    rest.Table    // the rests in force, as this request knows them
	waited   time.Duration // waited so far for a limited route (run)
	// provFailed holds the providers that failed this round with a
	// provider-wide failure: their other routes are not tried now.
	provFailed map[string]bool

	race  // the attempts of the round (attempt.go)
	tally // what the round found, for the errors

	// refusal is the caller's *quota.LimitError a reservation returned
	// (pick): the walk ends with it.
	refusal error

	typed *typing    // a typed answer's checks, nil when none (typed.go)
	blips            // the polite retries (blip.go)
	capab capability // what the request needs of a route (capable.go)
	// embed is an embeddings walk's request (embed.go); nil for chat.
	embed *llm.EmbedRequest

	spent spentChecker // the budget, when it remembers spent routes (pick.go)
	// probed is set once the walk made its probe at the edge (edge.go).
	probed bool
}

// tally is what each route did in a round, for the error of a walk that
// found no answer (exhausted).
type tally struct {
	skips    []Skip // routes not called, and why
	failures []Skip // attempts that failed
	tooLarge int
	unsup    unsupportedTally // routes that refused a field of the request
}

// Skip says why a route was not called, or how it failed, for errors and
// the status of a request.
type Skip struct {
	Route  string
	Reason string
	Until  time.Time
	// Class is the failure class of an attempt that failed; failure.OK for
	// a route that was not called, or a reason that is no attempt's.
	Class failure.Class
}

// newWalk starts a walk of req down the chain ch, knowing the rests in
// force.
func (r *Router) newWalk(ctx context.Context, ch *config.Chain, id string, req *llm.Request, stream bool) (*walk, error) {
	if ch == nil {
		return nil, fmt.Errorf("route: no chain given: %w", ErrUnknownChain)
	}
	w := r.walkOn(ctx, ch, id, req, stream)
	if r.pacer != nil && ch.Pace {
		// The demand is counted, and the routes ahead of their pace go
		// last (package pace): both from memory.
		var out int
		if len(w.order) > 0 {
			_, out = r.sizes(w.est, w.req.MaxTokens, w.order[0])
		}
		tokens := quota.AddTokens(w.est, out)
		r.pacer.Arrived(ch, w.est, tokens)
		w.order = r.pacer.Order(ch, w.order, tokens)
	}
	w.loadRests(ctx)
	return w, nil
}

// walkOn starts a walk of req down ch. It knows no rest yet (see
// loadRests).
func (r *Router) walkOn(ctx context.Context, ch *config.Chain, id string, req *llm.Request, stream bool) *walk {
	now := r.clock.Now()
	req, kept := keepExchanges(req, ch.KeepExchanges)
	return &walk{
		r: r, ch: ch, id: id, req: req, stream: stream, parent: ctx, bg: context.WithoutCancel(ctx), kept: kept,
		start: now, deadline: now.Add(ch.Deadline), est: quota.EstimateIn(ctx, req),
		order:      r.ordered(ch),
		provFailed: make(map[string]bool),
		race:       race{inflight: make(map[*config.Route]*outcome, 2)},
		spent:      spentCheckerOf(r.budget),
	}
}

// spentCheckerOf returns b when it can tell spent routes from memory.
func spentCheckerOf(b Budget) spentChecker {
	if sc, ok := b.(spentChecker); ok {
		return sc
	}
	return nil
}

func (w *walk) close() {}

// background is the request's context without its cancellation, for what
// must be recorded after the caller went away (rests, settles). Stores
// bound their own waits (redisstore's OpTimeout; memstore never blocks).
// It is set when the walk is made: settle runs on other goroutines too.
func (w *walk) background() context.Context { return w.bg }

// loadRests reads the rests in force. A store that cannot answer leaves the
// walk with no rests known: it is better to call a resting route than none.
func (w *walk) loadRests(ctx context.Context) {
	var err error
	w.rests, err = rest.Load(ctx, w.r.store, w.r.clock.Now())
	if err != nil {
		w.r.log.Warn("state store: reading rests failed; routing without them", "err", err)
	}
}

// run walks the chain until a route answers, a failure belongs to the
// caller, or nothing is left. A same-model, non-interactive chain may then
// wait for its soonest limited route and walk again.
func (w *walk) run() (*outcome, error) {
	for {
		win, err := w.round()
		if win != nil || err != nil {
			return win, err
		}
		wait, ok := w.waitFor()
		if !ok {
			return nil, w.exhausted()
		}
		w.r.log.Info("chain waits for a limited route", "chain", w.ch.Name, "wait", wait)
		if err := clock.Sleep(w.parent, w.r.clock, wait); err != nil {
			return nil, fmt.Errorf("route: waiting for a limited route: %w", err)
		}
		w.waited += wait
		w.next, w.taken, w.tally = 0, nil, tally{}
		w.provFailed = make(map[string]bool)
		w.loadRests(w.parent)
	}
}

// waitFor says how long a non-interactive chain should wait for its soonest
// limited route, and whether it may.
func (w *walk) waitFor() (time.Duration, bool) {
	if w.ch.Interactive || w.ch.WaitCap <= 0 {
		return 0, false
	}
	soon, ok := w.soonest()
	if !ok {
		return 0, false
	}
	wait := soon.Sub(w.r.clock.Now())
	if wait < 0 {
		wait = 0
	}
	if w.waited+wait > w.ch.WaitCap || w.r.clock.Now().Add(wait).After(w.deadline) {
		return wait, false
	}
	return wait, true
}

// soonest is the earliest time a skipped or rested route comes back.
func (w *walk) soonest() (time.Time, bool) {
	var t time.Time
	for _, s := range w.skips {
		if !s.Until.IsZero() && (t.IsZero() || s.Until.Before(t)) {
			t = s.Until
		}
	}
	now := w.r.clock.Now()
	for _, rt := range w.order {
		if end := w.rests.Ends(rt, now); !end.IsZero() && (t.IsZero() || end.Before(t)) {
			t = end
		}
	}
	return t, !t.IsZero()
}

func (w *walk) exhausted() error {
	if err := w.typedError(); err != nil {
		return err
	}
	if err := w.capabilityError(); err != nil {
		return err
	}
	// Every route refused this request for what it is (too long, or a
	// field it does not take): the caller gets the reason, nothing rests.
	if unfit := w.tooLarge + w.unsup.n; unfit > 0 && unfit == len(w.order)-w.countDisabled() {
		if w.unsup.first != nil {
			return w.unsup.first
		}
		return &TooLargeError{Chain: w.ch.Name, Tokens: w.est, Largest: largestContext(w.order), MaxTokens: w.req.MaxTokens}
	}
	e := &ExhaustedError{Chain: w.ch.Name, Skips: append(w.skips, w.failures...)}
	if t, ok := w.soonest(); ok {
		e.RetryAt = t
	}
	if !w.ch.Interactive && w.ch.WaitCap > 0 && !e.RetryAt.IsZero() {
		e.OverWaitCap = w.ch.WaitCap
	}
	return e
}

func (w *walk) countDisabled() int {
	n := 0
	for _, rt := range w.order {
		if rt.Disabled {
			n++
		}
	}
	return n
}

func largestContext(rs []*config.Route) int {
	m := 0
	for _, rt := range rs {
		if rt.MaxContext > m {
			m = rt.MaxContext
		}
	}
	return m
}
