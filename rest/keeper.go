package rest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
)

// SilentStrikes is how many hedge races in a row a route may lose in
// silence before it rests as a timeout (docs/DECISIONS.md: two in a row
// rest the route as timeout). A route that hangs on every call but always loses the race
// would otherwise never rest, and every request would wait the hedge delay
// for it.
const SilentStrikes = 2

// Options configure a Keeper. Store is required.
type Options struct {
	Policy Policy
	Store  Store
	// DayEnd gives the next daily reset after a time under a route's reset
	// rule (quota.NextReset, which knows how the quota counts a day). nil:
	// a per-day rest the provider did not time lasts Policy's DayUnknown.
	DayEnd func(config.Reset, time.Time) time.Time
	Logger *slog.Logger
}

// Keeper applies the decision table's consequences to attempts as they
// end: it counts each route's failures in a row (which grow a rest) and
// silent hedge losses (strikes toward a timeout rest), and records the
// rests the policy decides in the Store, where every instance sharing it
// sees them. The counts are per instance, in memory: they only steer how
// long a rest lasts and when strikes add up to one. It is safe for
// concurrent use.
type Keeper struct {
	policy Policy
	store  Store
	dayEnd func(config.Reset, time.Time) time.Time
	log    *slog.Logger

	mu     sync.Mutex        // guards counts
	counts map[string]*count // by route ID
}

// count is what a Keeper remembers of one route.
type count struct {
	streak int // failures in a row
	silent int // hedge races lost in silence since the route last answered
}

// NewKeeper returns a Keeper.
func NewKeeper(o Options) *Keeper {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Keeper{policy: o.Policy, store: o.Store, dayEnd: o.DayEnd, log: o.Logger, counts: make(map[string]*count)}
}

// countLocked returns rt's count, made on first use; k.mu must be held.
func (k *Keeper) countLocked(rt *config.Route) *count {
	c := k.counts[rt.ID]
	if c == nil {
		c = &count{}
		k.counts[rt.ID] = c
	}
	return c
}

// Answered notes that rt answered: its failures in a row and its silent
// losses start again from zero.
func (k *Keeper) Answered(rt *config.Route) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c := k.counts[rt.ID]; c != nil {
		c.streak, c.silent = 0, 0
	}
}

// Settle applies the decision table to an attempt of rt that did not
// answer, judged v, and returns the rest it caused (the zero Rest when
// none). lostRace says the attempt was cancelled because another route
// answered first. A silent loser (failure.SilentLoser) is a strike: at
// SilentStrikes in a row it rests the route with its RestClass, and the
// count starts again, so a route back from that rest gets a fresh count. A
// loser that had started answering (failure.Cancelled in a lost race) does
// not hang: its strikes are cleared. Any other failure that the route or
// its provider caused counts toward the streak and rests what the policy
// says. The rest is recorded in the Store under ctx; a Store that fails is
// logged, and the rest is still returned, for this request to honour.
func (k *Keeper) Settle(ctx context.Context, rt *config.Route, v failure.Verdict, lostRace bool, now time.Time) Rest {
	if lostRace {
		switch v.Class {
		case failure.SilentLoser:
			n, out := k.strike(rt)
			if !out {
				return Rest{}
			}
			v = failure.Verdict{Class: failure.SilentLoser.RestClass(), Scope: failure.ScopeRoute,
				Message: fmt.Sprintf("silent when another route answered, %d races in a row", n)}
		case failure.Cancelled:
			k.unstrike(rt) // it had started answering: not hung
		}
	}
	if !v.Class.Rests() || v.Scope == failure.ScopeRequest {
		return Rest{}
	}
	return k.rest(ctx, rt, v, now)
}

// rest counts a failure of rt toward its streak and records the rest the
// policy gives it.
func (k *Keeper) rest(ctx context.Context, rt *config.Route, v failure.Verdict, now time.Time) Rest {
	var dayEnd time.Time
	if k.dayEnd != nil {
		dayEnd = k.dayEnd(rt.Reset, now)
	}
	until, key := k.policy.Rest(v, rt, now, k.failed(rt), dayEnd)
	if until.IsZero() {
		return Rest{}
	}
	r := Rest{Key: key, Until: until, Class: v.Class, Reason: v.LogText(), Since: now}
	if err := k.store.SetRest(ctx, r.record()); err != nil {
		k.log.Warn("state store: recording a rest failed", "key", key.String(), "err", err)
	}
	if v.Class == failure.Gone || v.Class == failure.Auth || v.Class == failure.BadConfig {
		k.log.Error("route taken out of service", "route", rt.ID, "class", v.Class.String(), "rest", key.String(), "until", until, "reason", v.LogText())
	}
	return r
}

// failed counts a failure of rt and returns its streak, this one
// included.
func (k *Keeper) failed(rt *config.Route) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.countLocked(rt)
	c.streak++
	return c.streak
}

// strike counts a race rt lost in silence and returns how many it has
// lost so in a row, this one included, and whether that is SilentStrikes,
// in which case the count starts again.
func (k *Keeper) strike(rt *config.Route) (n int, out bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.countLocked(rt)
	c.silent++
	n = c.silent
	if n >= SilentStrikes {
		c.silent = 0
	}
	return n, n >= SilentStrikes
}

// unstrike clears rt's silent losses.
func (k *Keeper) unstrike(rt *config.Route) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c := k.counts[rt.ID]; c != nil {
		c.silent = 0
	}
}

// Lift ends the automatic rests of rt and of its provider, never a pause
// set by hand: a probe of rt just answered (seed 004: "resumes any that
// were paused automatically, while leaving manual pauses alone").
func (k *Keeper) Lift(ctx context.Context, rt *config.Route) error {
	var first error
	for _, key := range KeysOf(rt) {
		if err := k.store.ClearRest(ctx, key.String(), false); err != nil && first == nil {
			first = fmt.Errorf("rest: lifting %s: %w", key, err)
		}
	}
	return first
}
