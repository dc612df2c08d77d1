package route

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/rest"
)

// The causes an attempt's context is cancelled with, so that its outcome
// can be told apart: its own timeout rests the route; the chain's deadline,
// a caller that went away, and another attempt's failure that ended the
// request do not; a lost race is a strike when the loser had been silent
// (see silentLoser).
var (
	errChainDeadline = errors.New("the chain's deadline was reached")
	errLostRace      = errors.New("another route answered first")
	errRequestEnded  = errors.New("another route's failure ended the request")
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

// newWalk starts a walk of req down the chain named chain, knowing the
// rests in force.
func (r *Router) newWalk(ctx context.Context, chain, id string, req *llm.Request, stream bool) (*walk, error) {
	ch := r.plan.Chains[chain]
	if ch == nil {
		return nil, fmt.Errorf("route: %w %q", ErrUnknownChain, chain)
	}
	w := r.walkOn(ctx, ch, id, req, stream)
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
		start: now, deadline: now.Add(ch.Deadline), est: quota.Estimate(req),
		order:      r.ordered(ch),
		provFailed: make(map[string]bool),
		race:       race{inflight: make(map[*config.Route]*outcome, 2)},
	}
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

// Attempts and hedging: a round launches the routes of a chain, one after
// another as each fails, and races the next against a slow one after the
// chain's hedge delay; the first answer wins and the others are abandoned,
// wound down by a drain goroutine the Router owns.

// race is the attempts of the walk's current round.
type race struct {
	next       int                    // the next route of order to try
	taken      map[*config.Route]bool // started out of order, by a hedge
	inflight   map[*config.Route]*outcome
	results    chan *outcome // every attempt of the round reports here
	lastLaunch time.Time
	noHedge    bool // no hedge candidate until the next launch
	started    int  // attempts started, every round of the walk
}

// outcome is one attempt, from its start to its result.
type outcome struct {
	route  *config.Route
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  clock.Timer
	res    *quota.Reservation
	start  time.Time
	hedge  bool
	part   int
	cut    string
	lostAt time.Time // when the walk cancelled it for another's answer

	// set by the attempt's goroutine before it reports
	resp    *llm.Response
	stream  llm.Stream
	first   llm.Chunk
	err     error
	latency time.Duration
}

// round makes one pass over the chain: it launches the routes in order
// until one answers, a failure belongs to the caller, the chain's deadline
// passes, the caller goes away, or no route is left (nil, nil). A hedge
// starts the next route when the last launched has been silent for the
// hedge delay (see hedgeTimer).
func (w *walk) round() (*outcome, error) {
	w.results = make(chan *outcome, len(w.order))
	dl := w.r.clock.NewTimer(w.deadline.Sub(w.r.clock.Now()))
	defer dl.Stop()
	for {
		if len(w.inflight) == 0 && !w.launchNext(false) {
			return nil, nil
		}
		ht := w.hedgeTimer()
		select {
		case o := <-w.results:
			stopTimer(ht)
			if win, done, err := w.landed(o); done {
				return win, err
			}
		case <-timerC(ht):
			if !w.launchNext(true) {
				w.noHedge = true
			}
		case <-dl.C():
			stopTimer(ht)
			w.abandon(errChainDeadline)
			w.failures = append(w.failures, Skip{Reason: "the chain's deadline of " + w.ch.Deadline.String() + " was reached"})
			return nil, nil
		case <-w.parent.Done():
			stopTimer(ht)
			w.abandon(context.Canceled)
			return nil, fmt.Errorf("route: %w", w.parent.Err())
		}
	}
}

// hedgeTimer returns a timer that fires when the next hedge is due: the
// hedge delay after the last launch, on a chain that hedges, while a
// candidate may be left and fewer than MaxInFlight attempts run. It is nil
// when none is due.
func (w *walk) hedgeTimer() clock.Timer {
	if w.ch.HedgeDelay <= 0 || w.noHedge || len(w.inflight) >= max(w.ch.MaxInFlight, 1) {
		return nil
	}
	return w.r.clock.NewTimer(w.lastLaunch.Add(w.ch.HedgeDelay).Sub(w.r.clock.Now()))
}

// landed takes an attempt's result. An answer wins: the other attempts
// are abandoned as lost races. A failure is settled (failed), and one the
// caller caused ends the request. done says whether the round is over.
func (w *walk) landed(o *outcome) (win *outcome, done bool, err error) {
	delete(w.inflight, o.route)
	if o.err == nil {
		w.abandon(errLostRace)
		return o, true, nil
	}
	if err := w.failed(o); err != nil {
		w.abandon(errRequestEnded)
		return nil, true, err
	}
	return nil, false, nil
}

func stopTimer(t clock.Timer) {
	if t != nil {
		t.Stop()
	}
}

// timerC is t's channel, or nil (a channel that never delivers) for no
// timer.
func timerC(t clock.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C()
}

// launchNext starts the next route in order that pick picks. For a hedge
// it starts only a route with plenty of quota: when the next in order is
// scarce, it looks past it (hedgePast) and leaves it in place for ordinary
// failover. It reports whether it started one.
func (w *walk) launchNext(hedge bool) bool {
	for w.next < len(w.order) {
		rt := w.order[w.next]
		if w.taken[rt] {
			w.next++ // a hedge already started it
			continue
		}
		t, skip, why := w.pick(rt, w.req, w.est, hedge)
		if why == notHedgeable {
			return w.hedgePast()
		}
		w.next++
		switch why {
		case picked:
			w.launch(t, hedge)
			return true
		case notFitting:
			w.tooLarge++
		}
		w.skips = append(w.skips, skip)
	}
	return false
}

// hedgePast starts, as a hedge, the first route after the scarce one at
// w.next that pick picks for a hedge (issue 10: with [hung, scarce,
// plentiful] the hedge used to stop at the scarce route and the request
// waited out the hung one's whole timeout). The routes it passes keep
// their place: ordinary failover still reaches them in order, and records
// why it skips any.
func (w *walk) hedgePast() bool {
	for _, rt := range w.order[w.next+1:] {
		if w.taken[rt] {
			continue
		}
		if t, _, why := w.pick(rt, w.req, w.est, true); why == picked {
			w.launch(t, true)
			if w.taken == nil {
				w.taken = make(map[*config.Route]bool, 2)
			}
			w.taken[rt] = true
			return true
		}
	}
	return false
}

// launch starts the attempt t. Its context ends with its own timeout
// (clipped to the chain's deadline), a lost race, or the caller going
// away; each with its own cause. It reports on w.results.
func (w *walk) launch(t ticket, hedge bool) {
	o := w.open(t, hedge)
	call := provider.Call{Model: t.route.Model, Request: t.req, Extra: t.route.Extra}
	if w.ch.HedgeDelay <= 0 {
		// Nothing will race this attempt: run it on the request's own
		// goroutine. Its context still ends it at its timeout, the chain's
		// deadline or the caller's leaving, and it saves a goroutine and a
		// hand-off on every request.
		w.call(o, call, w.results)
		return
	}
	go w.call(o, call, w.results)
}

// open makes the outcome of the attempt t, starts its timeout, and counts
// it in flight.
func (w *walk) open(t ticket, hedge bool) *outcome {
	now := w.r.clock.Now()
	timeout := attemptTimeout(t.route, w.ch)
	cause := context.DeadlineExceeded
	if left := w.deadline.Sub(now); left < timeout {
		timeout, cause = left, errChainDeadline
	}
	ctx, cancel := context.WithCancelCause(w.parent)
	o := &outcome{route: t.route, ctx: ctx, cancel: cancel, res: t.res, start: now, hedge: hedge, cut: joinCut(w.kept, t.cut)}
	o.timer = w.r.clock.AfterFunc(timeout, func() { cancel(cause) })
	w.inflight[t.route] = o
	w.started++
	w.lastLaunch = now
	w.noHedge = false
	return o
}

// call makes the attempt o and reports it on results, which is buffered
// for every attempt of the round. It runs on the request's goroutine or its
// own, and reads only what does not change during the walk.
func (w *walk) call(o *outcome, call provider.Call, results chan<- *outcome) {
	up := w.r.ups[o.route.Provider.Name]
	if w.stream {
		o.stream, o.first, o.err = firstChunk(o.ctx, up, call)
	} else {
		o.resp, o.err = up.Chat(o.ctx, call)
	}
	o.latency = w.r.clock.Now().Sub(o.start)
	if !w.stream || o.err != nil {
		o.timer.Stop()
	}
	results <- o
}

// firstChunk opens a stream and waits for its first token: the first
// chunk with content that is not only whitespace, reasoning, or a tool
// call. For a stream, the attempt timeout is a first-token timeout. What
// comes before it (the role, usage, keep-alives, whitespace) is no token:
// the role and the whitespace are carried onto the first token. A stream
// that ends before any token is an empty answer, even when it sent a
// finish_reason (issue 10: a bare role, finish_reason and [DONE] used to
// count as answered, and was logged ok and cached). A finish_reason seen
// before the first token is dropped: an answer cannot finish before it
// starts.
func firstChunk(ctx context.Context, up Upstream, call provider.Call) (llm.Stream, llm.Chunk, error) {
	s, err := up.Stream(ctx, call)
	if err != nil {
		return nil, llm.Chunk{}, err
	}
	var role, lead string
	for {
		c, err := s.Next()
		if err != nil {
			s.Close()
			if err == io.EOF {
				err = &failure.UpstreamError{Status: http.StatusOK, Header: s.Header(), Err: failure.ErrEmptyAnswer}
			}
			return nil, llm.Chunk{}, err
		}
		if c.Role != "" {
			role = c.Role
		}
		if !isToken(c) {
			if len(lead) < maxLead {
				lead += c.Content
			}
			continue
		}
		if c.Role == "" {
			c.Role = role
		}
		c.Content = lead + c.Content
		return s, c, nil
	}
}

// maxLead bounds the whitespace held back before a first token: a stream
// that sends nothing but blanks must not grow memory until its timeout.
const maxLead = 1 << 10

// isToken reports whether a chunk carries any of the answer: text that is
// not only whitespace, reasoning, or a tool call.
func isToken(c llm.Chunk) bool {
	return c.Reasoning != "" || len(c.ToolCalls) > 0 || strings.TrimSpace(c.Content) != ""
}

// abandon cancels every attempt still in flight and hands their outcomes to
// a drain goroutine.
func (w *walk) abandon(cause error) {
	if len(w.inflight) == 0 {
		return
	}
	n := len(w.inflight)
	now := w.r.clock.Now()
	for _, o := range w.inflight {
		if cause == errLostRace {
			o.lostAt = now
		}
		o.cancel(cause)
	}
	w.inflight = make(map[*config.Route]*outcome, 2)
	w.r.wg.Add(1)
	go w.drain(w.results, n)
}

// drain winds down n abandoned attempts as they report on results: it
// closes what they opened and settles each, since their calls still count
// against the provider's quota. The Router owns it (Close waits for it). It
// leaves alone what the request's goroutine still uses, such as the walk's
// table of rests (see settle).
func (w *walk) drain(results <-chan *outcome, n int) {
	defer w.r.wg.Done()
	for range n {
		o := <-results
		o.timer.Stop()
		if o.stream != nil {
			o.stream.Close()
		}
		if o.err == nil {
			o.err = context.Cause(o.ctx)
		}
		w.settle(o, w.judge(o))
	}
}

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
		case cause == context.DeadlineExceeded:
			return failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRoute, Message: "no answer within the attempt timeout"}
		}
	}
	return blame(failure.Classify(o.err, now), o.route, w.req)
}

// silentLoser reports whether an attempt that lost a race had sent nothing
// by the time it lost (DESIGN.md's "silent loser"), for at least the hedge
// delay. Nothing sent means no first chunk for a stream (the race is for
// the first token); for a whole answer, no response at all: the adapters
// report a call cancelled before the response headers with Status 0, and
// one cancelled while its body was read with the response's status. The
// hedge delay is the bar because it is how long the chain lets a route be
// silent before it calls it slow: a hedge started late that loses to the
// first route half a second later has not shown it hangs.
func (w *walk) silentLoser(o *outcome) bool {
	if o.resp != nil || o.stream != nil || o.lostAt.IsZero() {
		return false
	}
	if !w.stream && statusOf(o.err) != 0 {
		return false
	}
	return o.lostAt.Sub(o.start) >= w.ch.HedgeDelay
}

// failed settles a failed attempt and decides what the walk does next. It
// returns an error when the failure belongs to the caller.
func (w *walk) failed(o *outcome) error {
	v := w.judge(o)
	made := w.settle(o, v)
	w.rests.Put(made)
	rt := o.route
	switch {
	case v.Class == failure.BadRequest,
		v.Class == failure.Refused && !w.ch.FailoverOnRefusal:
		return &CallerError{Route: rt.ID, Class: v.Class, Status: statusOf(o.err), Message: v.Message}
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
	rt := o.route
	now := r.clock.Now()
	a := &Attempt{
		RequestID: w.id, Chain: w.ch.Name, Route: rt.ID, Provider: rt.Provider.Name, Model: rt.Model,
		Start: o.start, Latency: now.Sub(o.start), Status: statusOf(o.err), Class: v.Class,
		Error: v.LogText(), Hedge: o.hedge, Stream: w.stream, Part: o.part, Cut: o.cut,
	}
	ctx := w.background()
	lost := context.Cause(o.ctx) == errLostRace
	if lost && (v.Class == failure.SilentLoser || v.Class == failure.Cancelled) {
		r.noteLatency(rt.ID, a.Latency)
	}
	made := r.rests.Settle(ctx, rt, v, lost, now)
	a.RestKey, a.RestUntil = made.Key, made.Until
	if r.budget != nil {
		if o.res != nil {
			_ = r.budget.Settle(ctx, o.res, 0, false)
		}
		var ue *failure.UpstreamError
		if errors.As(o.err, &ue) && ue.Header != nil {
			_ = r.budget.Observe(ctx, rt, ue.Header)
		}
	}
	r.record(a)
	return made
}

func statusOf(err error) int {
	var ue *failure.UpstreamError
	if errors.As(err, &ue) {
		return ue.Status
	}
	return 0
}
