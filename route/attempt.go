package route

import (
	"context"
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
)

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
	lostAt time.Time    // when the walk cancelled it for another's answer
	retry  bool         // the polite retry of a blip (Attempt.Retry)
	method string       // how a continuation continues (Attempt.Method)
	req    *llm.Request // what the route was asked
	// spent, for a part of a stream, is what the part cost, as it reported
	// or estimated (issue 33): its call-log line has its own tokens.
	spent *partSpend
	probe bool // a probe at the edge (Attempt.EdgeProbe, edge.go)

	// set by the attempt's goroutine before it reports
	resp    *llm.Response
	emb     *llm.Embeddings // an embeddings attempt's answer (embed.go)
	stream  llm.Stream
	first   llm.Chunk
	err     error
	latency time.Duration
}

// round makes one pass over the chain: it launches the routes in order
// until one answers, a failure belongs to the caller, the chain's deadline
// passes, the caller goes away, or no route is left (nil, nil). A hedge
// starts the next route when the last launched has been silent for the
// hedge delay (see hedgeTimer); a blip's retry starts the same route again
// when its wait is over (blip.go).
func (w *walk) round() (*outcome, error) {
	// Every attempt of the round reports here: one per route, and one
	// retry of a blip (blips.retried allows one a request).
	w.results = make(chan *outcome, len(w.order)+1)
	dl := w.r.clock.NewTimer(w.deadline.Sub(w.r.clock.Now()))
	defer dl.Stop()
	defer w.dropRetry()
	for {
		if len(w.inflight) == 0 && w.pending == nil && !w.launchNext(false) && !w.probeEdge() {
			return nil, w.refusal
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
		case <-w.retryC():
			stopTimer(ht)
			w.retryNow()
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
// candidate may be left, fewer than MaxInFlight attempts run, and no
// blip's retry waits (the retry is the next launch). It is nil when none
// is due.
func (w *walk) hedgeTimer() clock.Timer {
	if w.ch.HedgeDelay <= 0 || w.noHedge || w.pending != nil || len(w.inflight) >= max(w.ch.MaxInFlight, 1) {
		return nil
	}
	return w.r.clock.NewTimer(w.lastLaunch.Add(w.ch.HedgeDelay).Sub(w.r.clock.Now()))
}

// landed takes an attempt's result. An answer wins: the other attempts
// are abandoned as lost races. A blip waits for its retry (blip); another
// failure is settled (failed), and one the caller caused ends the request.
// done says whether the round is over.
func (w *walk) landed(o *outcome) (win *outcome, done bool, err error) {
	delete(w.inflight, o.route)
	if o.err == nil && !w.accept(o) {
		return w.rejected() // invalid, and settled (typed.go)
	}
	if o.err == nil {
		w.abandon(errLostRace)
		return o, true, nil
	}
	v := w.judge(o)
	if w.blip(o, v) {
		return nil, false, nil
	}
	if err := w.failed(o, v); err != nil {
		w.abandon(errRequestEnded)
		return nil, true, err
	}
	// The caller went away: its attempt failed for that, and no other
	// route is to be called for nobody. The select in round may take a
	// ready result before the caller's Done, so this is checked here too.
	if w.parent.Err() != nil {
		w.abandon(context.Canceled)
		return nil, true, fmt.Errorf("route: %w", w.parent.Err())
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
	if w.typedSpent() {
		return false
	}
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
		if why == callerRefused {
			return false
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
		if w.typedSpent() {
			return false
		}
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
// it in flight. A stream's timeout is its wait for the first token
// (firstTokenTimeout), a continuation's too (takeOver); once it has one,
// its idle timeout and the chain's deadline take over (RoutedStream).
func (w *walk) open(t ticket, hedge bool) *outcome {
	now := w.r.clock.Now()
	timeout, cause := attemptTimeout(t.route, w.ch), context.DeadlineExceeded
	if w.stream {
		timeout, cause = firstTokenTimeout(t.route, w.ch), errNoFirstToken
	}
	left := w.deadline.Sub(now)
	if left < timeout {
		timeout, cause = left, errChainDeadline
	}
	if keep := w.keepFor(t.route, left, now); left-keep < timeout {
		timeout, cause = left-keep, errShare
	}
	ctx, cancel := context.WithCancelCause(w.parent)
	o := &outcome{route: t.route, ctx: ctx, cancel: cancel, res: t.res, start: now, hedge: hedge, cut: joinCut(w.kept, t.cut), retry: t.retry, req: t.req, probe: t.probe}
	o.timer = w.r.clock.AfterFunc(timeout, func() { cancel(cause) })
	w.inflight[t.route] = o
	w.started++ // a typed walk's calls too (typedSpent)
	w.lastLaunch = now
	w.noHedge = false
	return o
}

// keepFor is how much of left, what is left of the chain's deadline, an
// attempt on rt leaves for the routes after it (issue 32: with 8 s attempts
// and a 25 s deadline the fourth route used to get 1 s). The next route
// that may still be called (after rt in the chain, not started, not
// resting or disabled) keeps its first-token timeout; when left is less
// than twice that, the attempt and the next route share left equally. The
// chain's order is its preference: earlier routes keep their whole
// timeout as long as the deadline allows it.
func (w *walk) keepFor(rt *config.Route, left time.Duration, now time.Time) time.Duration {
	after := false
	for _, r := range w.order {
		if r == rt {
			after = true
			continue
		}
		if !after || w.taken[r] || w.inflight[r] != nil {
			continue
		}
		if _, ok := w.eligible(r, now); !ok {
			continue
		}
		return max(min(firstTokenTimeout(r, w.ch), left/2), 0)
	}
	return 0
}

// call makes the attempt o and reports it on results, which is buffered
// for every attempt of the round. It runs on the request's goroutine or its
// own, and reads only what does not change during the walk.
func (w *walk) call(o *outcome, call provider.Call, results chan<- *outcome) {
	up := w.r.ups[o.route.Provider.Name]
	switch {
	case w.embed != nil:
		o.emb, o.err = embedWith(o.ctx, up, provider.EmbedCall{Model: call.Model, Request: w.embed, Extra: call.Extra})
	case w.stream:
		o.stream, o.first, o.err = firstChunk(o.ctx, up, call)
	default:
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
// call; the attempt's context ends the wait at the first-token timeout
// (open). What comes before it (the role, usage, keep-alives, whitespace)
// is no token: the role and the whitespace are carried onto the first
// token. A stream that ends before any token is an empty answer, even when
// it sent a finish_reason (issue 10: a bare role, finish_reason and [DONE]
// used to count as answered, and was logged ok and cached). A
// finish_reason seen before the first token is dropped: an answer cannot
// finish before it starts.
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
