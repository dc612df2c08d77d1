package tollfree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/caller/gate"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
)

// This file is the caller check, the first step of every request (issue
// 12): who the caller is (package caller), whether its key may use the
// chain, its caller limits (quota.Book.Admit: per caller, per caller in
// the chain, per key, the site's day less the owner's reserve, in one
// atomic spend every instance agrees on), and a turn at the gateway's own
// cap (package gate). What it lets in is a turn, ended once the answer is
// over, whichever way it ends: a whole answer, an error, a stream read to
// its end or closed early.
//
// The caller limits come before the gate, so that a caller's flood is
// refused by its own limits (its requests at once, its burst) and never
// crowds the gate's queue; a request let through that the gate then turns
// away (busy) is refunded, since it got no answer. On a shared store
// (Redis) the check is made with the first route's reservation instead, in
// the same round trip (quota.Book.Admit): the request enters the gate
// unchecked only while the gate has room; when it would wait, it is
// checked first. A refusal found with the reservation answers the same
// 429, with nothing spent on the route (serve.go, refusedLate).

// turn is a request let in by the caller check. Its end gives back the
// caller's request in flight and the gateway's turn, and settles the
// caller's tokens.
type turn struct {
	g     *Gateway
	ctx   context.Context // the request's, without its cancellation
	pass  *quota.Pass
	leave func() // the gate's
	once  sync.Once
	req   *llm.Request // the request entered, and its estimate (-1: none made)
	est   int
}

// enter runs the caller check for a call on ch. It returns the turn, or
// why not: a *quota.LimitError (the caller's or the site's limit), an
// error wrapping caller.ErrChainNotAllowed, gate.ErrBusy or
// caller.ErrUnknownKey, or the context's error (gone while it waited). A
// state store that cannot answer lets the request through.
func (g *Gateway) enter(ctx context.Context, ch *config.Chain, c *Call) (*turn, error) {
	who, err := g.callers.Of(c.Caller)
	if err != nil {
		return nil, fmt.Errorf("tollfree: %w", err)
	}
	if !who.Allows(ch.Name) {
		return nil, fmt.Errorf("tollfree: key %s may use %s, not %s: %w", who.Key, strings.Join(who.Chains, ", "), ch.Name, caller.ErrChainNotAllowed)
	}
	ask := g.callers.Ask(who, ch, 0)
	est := -1
	if ask.Limits.TokensDay > 0 || ask.ChainLimits.TokensDay > 0 || ask.KeyLimits.TokensDay > 0 {
		// The estimate only counts where tokens a day are limited; the
		// router reads it again from the turn's context (estimate).
		est = quota.Estimate(c.Request)
		ask.Tokens = quota.AddTokens(est, quota.ExpectedOutput(c.Request.MaxTokens, nil))
	}
	pass, err := g.budget.Admit(ctx, ask)
	if err == nil && g.gateFull() {
		// A pass Admit left pending is checked with the first route's
		// budget (one round trip to a shared store); but a request that
		// is to wait for a turn is checked first, so that a caller's
		// flood never crowds the gate's queue.
		err = g.budget.Commit(ctx, pass)
	}
	if err != nil {
		var le *quota.LimitError
		switch {
		case errors.As(err, &le):
			return nil, err
		case ctx.Err() != nil:
			// Gone while it was counted: nobody is listening.
			g.refund(ctx, ch, pass)
			return nil, ctx.Err()
		}
		g.logger.Warn("caller limits: the state store did not answer; letting the request through", "chain", ch.Name, "err", err)
	}
	enterGate := g.gate.Enter
	if who.Owner {
		enterGate = g.gate.EnterAhead
	}
	leave, err := enterGate(ctx)
	if err != nil {
		g.refund(ctx, ch, pass)
		return nil, fmt.Errorf("tollfree: %w", err)
	}
	return &turn{g: g, ctx: context.WithoutCancel(ctx), pass: pass, leave: leave, req: c.Request, est: est}, nil
}

// routing is the context the turn's request is routed under: carrying the
// pass Admit left pending (made with the first reservation) and the
// request's estimate when enter made one.
func (t *turn) routing(ctx context.Context) context.Context {
	if t.est >= 0 {
		return quota.WithPassEstimate(ctx, t.pass, t.req, t.est)
	}
	return quota.WithPass(ctx, t.pass)
}

// gateFull reports whether a request would now wait for a turn at the
// gate.
func (g *Gateway) gateFull() bool {
	in, waiting := g.gate.Load()
	limit := g.plan.Server.MaxRequests
	if limit <= 0 {
		limit = gate.DefaultMax // as gate.New makes it
	}
	return waiting > 0 || in >= limit
}

// admitted makes the caller's spends that Admit left pending in the pass
// ctx carries, if no route's Reserve made them, and returns the
// *quota.LimitError that refused them, if any. A store that cannot answer
// lets the request through.
func (g *Gateway) admitted(ctx context.Context, p *quota.Pass) error {
	err := g.budget.Commit(ctx, p)
	if err == nil {
		return nil // before le, which errors.As makes a heap allocation
	}
	var le *quota.LimitError
	if errors.As(err, &le) {
		return err
	}
	g.logger.Warn("caller limits: the state store did not answer; letting the request through", "err", err)
	return nil
}

// refund gives back what the caller limits counted for a request that was
// let through but never worked on.
func (g *Gateway) refund(ctx context.Context, ch *config.Chain, pass *quota.Pass) {
	if err := g.budget.Refund(context.WithoutCancel(ctx), pass); err != nil {
		g.logger.Warn("caller limits: could not give back a request the gateway did not take", "chain", ch.Name, "err", err)
	}
}

// end ends the turn once: the gateway's turn goes to the next request, and
// the caller's Pass is given back with the tokens used (see spent). Later
// calls do nothing.
func (t *turn) end(used int, known bool) {
	t.once.Do(func() {
		t.leave()
		if err := t.g.budget.Leave(t.ctx, t.pass, used, known); err != nil {
			// The count in flight drops out with its lease.
			t.g.logger.Warn("caller limits: could not give back a request in flight", "err", err)
		}
	})
}

// spent is what an answer cost the caller's tokens per day: a route's
// usage (the estimate stands when the route reported none), nothing for an
// answer that called no model (the cache, a call shared with an identical
// request, a fallback).
func spent(by ServedBy, u Usage, known bool) (int, bool) {
	if by != ServedByRoute {
		return 0, true
	}
	return u.TotalTokens, known
}

// endingStream ends the request's turn when its stream ends: at its clean
// end, when it breaks, or when it is closed before either (the caller went
// away). The concurrency slot is never held past the stream. A route's
// stream is told to the observer once, when it ends: answered, failed (it
// broke and no route continued it), or cancelled.
type endingStream struct {
	llm.ChunkStream
	turn *turn
	by   ServedBy
	// For a route's stream: who hears how it ended, and when it began.
	obs   *observability
	chain string
	start time.Time
	clock interface{ Now() time.Time }
	told  atomic.Bool
}

var _ llm.ChunkStream = (*endingStream)(nil)

func (s *endingStream) Next() (llm.Chunk, error) {
	c, err := s.ChunkStream.Next()
	switch {
	case err == io.EOF:
		// The stream's usage counts what was streamed where the route
		// reported nothing: closer than the estimate made before.
		u, _ := s.ChunkStream.Usage()
		s.turn.end(spent(s.by, u, true))
		s.tell(outcomeAnswered)
	case err != nil:
		s.turn.end(0, false)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			s.tell(outcomeCancelled)
		} else {
			s.tell(outcomeFailed)
		}
	}
	return c, err
}

// tell tells the observer how a route's stream ended, once.
func (s *endingStream) tell(outcome string) {
	if s.obs == nil || s.told.Swap(true) {
		return
	}
	s.obs.Request(s.chain, outcome, s.clock.Now().Sub(s.start))
}

// Close ends the turn (the estimate stands if the stream did not end) and
// closes the stream.
func (s *endingStream) Close() error {
	s.turn.end(0, false)
	s.tell(outcomeCancelled)
	return s.ChunkStream.Close()
}
