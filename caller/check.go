package caller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/tollfree/tollfree/caller/gate"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
)

// Check is the caller check, the first step of every request (issue 12):
// who the caller is (the Resolver), whether its key may use the chain,
// its caller limits (quota.Book.Admit: per caller, per caller in the
// chain, per key, the site's day less the owner's reserve, in one atomic
// spend every instance agrees on), and a turn at the gateway's own cap
// (package gate). What it lets in is a Turn, ended once the answer is
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
// 429, with nothing spent on the route (Admitted).
//
// The counting itself is package quota's: the caller's windows are
// spent with the route's in one Store call, which is why the windows live
// there; what is counted, for whom, and how a refusal is worded are here.
type Check struct {
	who    *Resolver
	book   *quota.Book
	gate   *gate.Gate
	max    int // the gate's Max, as gate.New makes it
	logger *slog.Logger
}

// NewCheck builds the caller check of a plan over the quota book that
// counts its limits.
func NewCheck(who *Resolver, book *quota.Book, p *config.Plan, o gate.Options, logger *slog.Logger) *Check {
	if o.Max <= 0 {
		o.Max = gate.DefaultMax // as gate.New makes it
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Check{who: who, book: book, gate: gate.New(o), max: o.Max, logger: logger}
}

// Resolver is who the check asks who is calling.
func (c *Check) Resolver() *Resolver { return c.who }

// Load reports how many requests are in at the gateway's cap, and how
// many wait for a turn.
func (c *Check) Load() (in, waiting int) { return c.gate.Load() }

// Turn is a request let in by the caller check. Its End gives back the
// caller's request in flight and the gateway's turn, and settles the
// caller's tokens.
type Turn struct {
	c     *Check
	ctx   context.Context // the request's, without its cancellation
	pass  *quota.Pass
	leave func() // the gate's
	once  sync.Once
	req   *llm.Request // the request entered, and its estimate (-1: none made)
	est   int
}

// Enter runs the caller check for a call of caller on ch. It returns the
// turn, or why not: a *quota.LimitError (the caller's or the site's
// limit), an error wrapping ErrChainNotAllowed, gate.ErrBusy or
// ErrUnknownKey, or the context's error (gone while it waited). A state
// store that cannot answer lets the request through.
func (c *Check) Enter(ctx context.Context, ch *config.Chain, caller llm.Caller, req *llm.Request) (*Turn, error) {
	who, err := c.who.Of(caller)
	if err != nil {
		return nil, fmt.Errorf("tollfree: %w", err)
	}
	if !who.Allows(ch.Name) {
		return nil, fmt.Errorf("tollfree: key %s may use %s, not %s: %w", who.Key, strings.Join(who.Chains, ", "), ch.Name, ErrChainNotAllowed)
	}
	ask := c.who.Ask(who, ch, 0)
	est := -1
	if ask.Limits.TokensDay > 0 || ask.ChainLimits.TokensDay > 0 || ask.KeyLimits.TokensDay > 0 {
		// The estimate only counts where tokens a day are limited; the
		// router reads it again from the turn's context (Routing).
		est = quota.Estimate(req)
		ask.Tokens = quota.AddTokens(est, quota.ExpectedOutput(req.MaxTokens, nil))
	}
	pass, err := c.book.Admit(ctx, ask)
	if err == nil && c.gateFull() {
		// A pass Admit left pending is checked with the first route's
		// budget (one round trip to a shared store); but a request that
		// is to wait for a turn is checked first, so that a caller's
		// flood never crowds the gate's queue.
		err = c.book.Commit(ctx, pass)
	}
	if err != nil {
		var le *quota.LimitError
		switch {
		case errors.As(err, &le):
			return nil, err
		case ctx.Err() != nil:
			// Gone while it was counted: nobody is listening.
			c.refund(ctx, ch, pass)
			return nil, ctx.Err()
		}
		c.logger.Warn("caller limits: the state store did not answer; letting the request through", "chain", ch.Name, "err", err)
	}
	enterGate := c.gate.Enter
	if who.Owner {
		enterGate = c.gate.EnterAhead
	}
	leave, err := enterGate(ctx)
	if err != nil {
		c.refund(ctx, ch, pass)
		return nil, fmt.Errorf("tollfree: %w", err)
	}
	return &Turn{c: c, ctx: context.WithoutCancel(ctx), pass: pass, leave: leave, req: req, est: est}, nil
}

// Routing is the context the turn's request is routed under: carrying the
// pass Admit left pending (made with the first reservation) and the
// request's estimate when Enter made one.
func (t *Turn) Routing(ctx context.Context) context.Context {
	if t.est >= 0 {
		return quota.WithPassEstimate(ctx, t.pass, t.req, t.est)
	}
	return quota.WithPass(ctx, t.pass)
}

// Pass is the turn's pass at the caller limits.
func (t *Turn) Pass() *quota.Pass { return t.pass }

// gateFull reports whether a request would now wait for a turn at the
// gate.
func (c *Check) gateFull() bool {
	in, waiting := c.gate.Load()
	return waiting > 0 || in >= c.max
}

// Admitted makes the caller's spends that Admit left pending in p, if no
// route's Reserve made them, and returns the *quota.LimitError that
// refused them, if any. A store that cannot answer lets the request
// through.
func (c *Check) Admitted(ctx context.Context, p *quota.Pass) error {
	err := c.book.Commit(ctx, p)
	if err == nil {
		return nil // before le, which errors.As makes a heap allocation
	}
	var le *quota.LimitError
	if errors.As(err, &le) {
		return err
	}
	c.logger.Warn("caller limits: the state store did not answer; letting the request through", "err", err)
	return nil
}

// refund gives back what the caller limits counted for a request that was
// let through but never worked on.
func (c *Check) refund(ctx context.Context, ch *config.Chain, pass *quota.Pass) {
	if err := c.book.Refund(context.WithoutCancel(ctx), pass); err != nil {
		c.logger.Warn("caller limits: could not give back a request the gateway did not take", "chain", ch.Name, "err", err)
	}
}

// End ends the turn once: the gateway's turn goes to the next request, and
// the caller's Pass is given back with the tokens used (used, and whether
// a route reported them: otherwise the estimate stands). Later calls do
// nothing.
func (t *Turn) End(used int, known bool) {
	t.once.Do(func() {
		t.leave()
		if err := t.c.book.Leave(t.ctx, t.pass, used, known); err != nil {
			// The count in flight drops out with its lease.
			t.c.logger.Warn("caller limits: could not give back a request in flight", "err", err)
		}
	})
}
