package quota

import (
	"context"
	"fmt"
	"sync"

	"github.com/tollfree/tollfree/state"
)

// A request in Redis mode used to wait for several round trips before its
// call: Enter's spend, then Reserve's for each route tried, then the adds
// of Settle and Leave. Admit carries the caller's spends into the first
// Reserve instead (issue 18): on a Store that checks two groups in one call
// (state.SplitSpender, both stores), Admit counts nothing and returns a
// Pass pending; the first Reserve under WithPass(ctx, pass) checks the
// caller's limits and, only when they pass, the route's budget, in one
// round trip. A refused caller gets the same *LimitError Enter gives, and
// nothing is spent on the route; a spent route still counts the caller, who
// was let in, and the next route is reserved alone. Commit makes the
// spends when no Reserve did (no route was tried, or the answer came from
// the cache), and says whether the caller was refused.
//
// The adds made after an answer (Settle, Leave, Refund, Observe's
// corrections) go through add: queued on a Store that defers them
// (state.Deferrer), applied in batches off the caller's path; applied at
// once on any other.

// passKey is the context key of a pending Pass.
type passKey struct{}

// Admit is Enter for a request about to be routed. On a Store that checks
// two groups of spends in one call it counts nothing yet: the Pass is
// pending until the first Reserve made under WithPass(ctx, pass), or
// Commit. On any other Store it is Enter. A refusal Admit can tell without
// the Store (the site's day all reserved) is returned at once.
func (b *Book) Admit(ctx context.Context, a Ask) (*Pass, error) {
	if b.split == nil || a.limitless() {
		return b.Enter(ctx, a)
	}
	e, err := b.asked(&a)
	if err != nil {
		return nil, err
	}
	if len(e.spends) == 0 {
		e.free()
		return &Pass{}, nil
	}
	return &Pass{deferred: true, pend: e}, nil
}

// WithPass returns ctx carrying p when p is pending (Admit), so that the
// first Reserve under it makes p's spends with its own; otherwise ctx.
func WithPass(ctx context.Context, p *Pass) context.Context {
	if p == nil || !p.deferred {
		return ctx
	}
	return context.WithValue(ctx, passKey{}, p)
}

// PassFrom returns the Pass WithPass put in ctx, nil if none.
func PassFrom(ctx context.Context) *Pass {
	p, _ := ctx.Value(passKey{}).(*Pass)
	return p
}

// Commit makes p's spends if no Reserve made them yet, and returns the
// *LimitError that refused them, if any (then p counts nothing, and the
// request must be answered with the refusal). A Store error is returned
// wrapped: the request goes through, p counting nothing. A p that Enter
// made, or nil, is committed already: nil.
func (b *Book) Commit(ctx context.Context, p *Pass) error {
	if p == nil || !p.deferred {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pend == nil {
		return p.refused
	}
	e := p.pend
	p.pend = nil
	return b.commitLocked(ctx, p, e)
}

// commitLocked makes the spends e of the pending Pass p, and keeps e in p
// for Leave when they were made, or frees it; see Commit. p.mu must be
// held.
func (b *Book) commitLocked(ctx context.Context, p *Pass, e *enter) error {
	failed, err := b.store.Spend(ctx, e.spends)
	switch {
	case err != nil:
		e.free()
		return fmt.Errorf("quota: admit: %w", err)
	case failed >= 0 && failed < len(e.spends):
		p.refused = b.refusal(ctx, e.now, e.spends[failed], e.checks[failed])
		e.free()
	default:
		p.made = e
	}
	return p.refused
}

// addBuf is where Settle and Leave build their adds: a route's token
// windows, or a caller's requests in flight and tokens, fit. No Store keeps
// the spends it is given once the call returns (state.Store), so the
// buffer goes back to addBufs at once.
type addBuf [8]state.Spend

var addBufs = sync.Pool{New: func() any { return new(addBuf) }}

// add applies adds made after an answer: queued on a Store that defers
// them, at once on any other. Each add keeps its window's Limit (an Add
// does not check it): a Store that queues may apply a give-back to a
// window near its limit at once instead (see redisstore's AddLater).
func (b *Book) add(ctx context.Context, adds []state.Spend) error {
	if b.later != nil {
		b.later.AddLater(adds)
		return nil
	}
	return b.store.Add(ctx, adds)
}

// Flush returns once the adds queued so far (Settle, Leave, Refund) are
// applied, so that every instance sees them; at once on a Store that does
// not queue them. Nothing needs to call it: the Store applies them within
// a round trip, and when it closes.
func (b *Book) Flush(ctx context.Context) {
	if b.later != nil {
		b.later.Flush(ctx)
	}
}
