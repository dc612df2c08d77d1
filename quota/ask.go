package quota

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/state"
)

// Ask is one request asking to be let through (issue 12): who asks, for
// which chain, and the limits that apply. Each set of limits is counted in
// its own scope: the caller's own across chains, the caller's in this
// chain, all the callers of one key together, and the site. The zero Ask
// limits nothing.
type Ask struct {
	// Caller is what the caller's limits count: an opaque id ("key:team",
	// an address, a signed visitor id). It is hashed (SHA-256) before it
	// names a counter, so no raw id reaches the Store.
	Caller string
	// Also, when set, is another caller whose own counters Limits spend
	// too, in the same scope: the address of a new visitor id, so that
	// the id's requests count as the address's (issue 32).
	Also string
	// Owner skips every per-caller limit (caller, chain and key scopes) and
	// may use the site's Reserve; its questions still count toward the
	// site's day, and toward its own hour and day (unchecked).
	Owner bool
	// Limits are the caller's, across every chain.
	Limits config.CallerLimits
	// Chain is the chain asked for; ChainLimits are the caller's in it.
	Chain       string
	ChainLimits config.CallerLimits
	// Key names the key whose callers KeyLimits limit together (the end
	// users of a key that narrows); "" for none.
	Key       string
	KeyLimits config.CallerLimits
	// SiteDay caps every caller's questions together in a rolling day;
	// Reserve of it is kept for owners. Zero: no cap.
	SiteDay int
	Reserve int
	// Tokens is the request's estimate, prompt and answer (RequestTokens),
	// spent on the tokens-per-day windows and settled by Leave with what
	// the answer used. At least 1 is counted.
	Tokens int
	// Lease bounds how long a request is counted as in flight: a count
	// left behind by an instance that crashed before Leave drops out after
	// between Lease and twice Lease. Set it to the chain's deadline or
	// more. Default DefaultLease.
	Lease time.Duration
}

// DefaultLease is Ask.Lease's default: longer than any default deadline.
const DefaultLease = 10 * time.Minute

// The scopes of a LimitError.
const (
	ScopeCaller = "caller" // the caller's own, across chains
	ScopeChain  = "chain"  // the caller's in the chain asked for
	ScopeKey    = "key"    // every caller of one key together
	ScopeSite   = "site"   // every caller together
)

// The kinds of limit of a LimitError.
const (
	KindHour       = "hour"       // requests in a sliding hour
	KindDay        = "day"        // requests in a rolling day
	KindTokens     = "tokens"     // tokens in a rolling day
	KindConcurrent = "concurrent" // requests in flight at once
	KindBurst      = "burst"      // too many too fast: muted
)

// LimitError is a refusal: which limit, its value, and when the caller may
// ask again (for Retry-After and X-RateLimit-Reset). A refused request is
// not counted anywhere.
type LimitError struct {
	// Scope is one of the Scope constants; Kind one of the Kind constants.
	Scope string
	Kind  string
	// Limit is the limit's value: requests, tokens, requests at once, or the
	// burst's count.
	Limit int64
	// Window is the window the limit counts over (an hour, a day, the
	// burst's); zero for concurrent requests.
	Window time.Duration
	// RetryAt is when the caller may ask again: when enough of the window
	// frees up, when a mute ends, or, for concurrent requests, a second from
	// now (no one knows when a request in flight ends).
	RetryAt time.Time
}

// Name is "caller hour", "site day", "chain burst"...
func (e *LimitError) Name() string { return e.Scope + " " + e.Kind }

func (e *LimitError) Error() string {
	return fmt.Sprintf("quota: %s limit (%d) reached; retry at %s", e.Name(), e.Limit, e.RetryAt.UTC().Format(time.RFC3339))
}

// Pass is a request that was let through. Give it back with Leave when the
// request ends, answered or not: that releases its concurrent count and
// settles its tokens.
type Pass struct {
	done atomic.Bool

	// deferred marks a Pass Admit made without counting (admit.go); mu
	// guards pend, made and refused then.
	deferred bool
	mu       sync.Mutex
	pend     *enter // the spends still to make; nil once made or dropped
	refused  error  // the *LimitError that refused the spends, if any
	// made holds the spends made, for Leave and Refund to give back: the
	// enter that built them is kept until then instead of going back to
	// its pool, so that a Pass is a small allocation, not a copy of its
	// spends (issue 18, item 2).
	made *enter
	// estReq and est are the request's token estimate when the gateway
	// made one (WithPassEstimate): set before p is in a context, read
	// only after.
	estReq *llm.Request
	est    int
}

// take returns the spends p made and leaves p with none, dropping the
// spends of a p still pending: a Pass given back before it was committed
// counted nothing and gives nothing back. The caller frees what it gets.
func (p *Pass) take() *enter {
	if !p.deferred {
		e := p.made
		p.made = nil
		return e
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pend != nil {
		p.pend.free()
		p.pend = nil
	}
	e := p.made
	p.made = nil
	return e
}

// muteWeight is what a mute adds to a caller's mute counter: far more than
// any count of requests, so the counter's limit (muteWeight) refuses every
// request until the slot holding it drops out of the window. A mute is
// thereby a count like any other: atomic, shared by every instance, and
// gone with its window.
const muteWeight = 1 << 40

// concurrentRetry is the wait told to a caller refused for having too many
// requests in flight.
const concurrentRetry = time.Second

// check is one spend Enter makes, with what to say when it is refused.
type check struct {
	scope, kind string
	limit       int64 // the limit to report
	win         window
	span        time.Duration // the window's length, for LimitError
	mute        *mute         // for a burst with a mute
	tokens      bool
	concurrent  bool
}

// Enter checks and counts one request under every limit of a, all windows
// in one atomic Store.Spend, so that two instances never together pass a
// limit. A refusal is a *LimitError and counts nothing. A Store error is
// returned wrapped together with a Pass (that gives nothing back): the
// site answers while its store is down. A refused burst starts its mute.
func (b *Book) Enter(ctx context.Context, a Ask) (*Pass, error) {
	if a.limitless() {
		return &Pass{}, nil
	}
	e, err := b.asked(&a)
	if err != nil {
		return nil, err
	}
	if len(e.spends) == 0 {
		e.free()
		return &Pass{}, nil
	}
	failed, err := b.store.Spend(ctx, e.spends)
	if err != nil {
		e.free()
		return &Pass{}, fmt.Errorf("quota: admit: %w", err)
	}
	if failed >= 0 && failed < len(e.spends) {
		defer e.free()
		return nil, b.refusal(ctx, e.now, e.spends[failed], e.checks[failed])
	}
	return &Pass{made: e}, nil
}

// limitless reports whether a has no limit to count: no spend to build,
// and the 1.4 KB building them costs not spent (issue 18, item 7).
func (a *Ask) limitless() bool {
	return a.Limits.IsZero() && (a.Chain == "" || a.ChainLimits.IsZero()) &&
		(a.Key == "" || a.KeyLimits.IsZero()) && a.SiteDay <= 0
}

// asked builds the spends of a, or refuses it at once when the site's day
// is all reserved for owners.
func (b *Book) asked(a *Ask) (*enter, error) {
	now := b.clock.Now()
	site := int64(a.SiteDay)
	if !a.Owner && site > 0 {
		site = max(site-int64(a.Reserve), 0)
		if site == 0 {
			// Everything is reserved: refuse without asking the store.
			day := slidingWindow(now, rollingSlot, rollingSlots)
			return nil, &LimitError{Scope: ScopeSite, Kind: KindDay, Window: 24 * time.Hour, RetryAt: day.firstExpiry()}
		}
	}
	e := newEnter(now, DefaultLease, int64(max(clampTokens(a.Tokens), 1)))
	if a.Lease > 0 {
		e.lease = max(a.Lease.Truncate(time.Second), time.Second) // windows count whole seconds
	}
	caller := b.names.of(callerPrefix, a.Caller, "")
	if a.Owner {
		// Owners count their hour and day, unchecked, as they always did.
		if a.Limits.PerHour > 0 {
			w := hourWindow(now)
			c := e.push(caller.hour, caller.hHour, 0, 1, &w)
			c.scope, c.kind, c.span = ScopeCaller, KindHour, time.Hour
		}
		if a.Limits.PerDay > 0 {
			w := dayWindow(now)
			c := e.push(caller.day, caller.hDay, 0, 1, &w)
			c.scope, c.kind, c.span = ScopeCaller, KindDay, 24*time.Hour
		}
	} else {
		e.scope(ScopeCaller, caller, a.Limits)
		if a.Also != "" && a.Also != a.Caller {
			e.scope(ScopeCaller, b.names.of(callerPrefix, a.Also, ""), a.Limits)
		}
		if a.Chain != "" && !a.ChainLimits.IsZero() {
			e.scope(ScopeChain, b.names.of(chainPrefix, a.Chain, a.Caller), a.ChainLimits)
			if a.Also != "" && a.Also != a.Caller {
				e.scope(ScopeChain, b.names.of(chainPrefix, a.Chain, a.Also), a.ChainLimits)
			}
		}
		if a.Key != "" && !a.KeyLimits.IsZero() {
			e.scope(ScopeKey, b.names.of(keyPrefix, a.Key, ""), a.KeyLimits)
		}
	}
	if site > 0 {
		w := dayWindow(now)
		c := e.push(siteKey, siteKeyHash, site, 1, &w)
		c.scope, c.kind, c.span = ScopeSite, KindDay, 24*time.Hour
	}
	return e, nil
}

// mute is what a refused burst adds to start its mute: the weight, and
// the mute counter's window.
type mute struct {
	weight state.Spend
	win    window
}

// enter builds Enter's spends: in its own arrays while they fit (a caller
// scope and the site's day take five). It is 2 KB, needed by every
// request with caller limits: once its spends are given back (Leave,
// Refund), refused or dropped, it goes back to enterPool for the next
// request (issue 18, item 2). On a SplitSpender, the first Reserve
// appends the route's spends after the caller's, in sbuf while they fit
// (a route and its provider usually spend on eight windows), so that
// the call's spends are not copied.
type enter struct {
	now    time.Time
	lease  time.Duration
	tokens int64
	spends []state.Spend
	checks []check
	sbuf   [8 + 2*rph]state.Spend
	cbuf   [8]check
}

// enterPool holds the enters no request uses.
var enterPool = sync.Pool{New: func() any { return new(enter) }}

// newEnter returns an empty enter from the pool.
func newEnter(now time.Time, lease time.Duration, tokens int64) *enter {
	e := enterPool.Get().(*enter)
	// Field by field: a composite literal would be built on the stack
	// first, 1.5 KB of frame. What sbuf and cbuf still hold from the last
	// request is overwritten before it is read.
	e.now, e.lease, e.tokens = now, lease, tokens
	e.spends, e.checks = e.sbuf[:0], e.cbuf[:0]
	return e
}

// free gives e back to the pool: nothing may use it, its spends or its
// checks afterwards. What outlives it is copied (refusal), or e is kept
// until it is no longer used (Pass.made, freed by Leave and Refund).
func (e *enter) free() { enterPool.Put(e) }

// push appends a spend of amount on key (whose state.HashKey is h) with
// limit in window w, and its check, which reports limit unless the caller
// sets another: the caller fills in the rest of the check. Both are
// written in place: a check is 120 bytes, and built on the stack and
// copied, the checks of a caller's limits made the frames of every
// request with caller limits kilobytes deep.
func (e *enter) push(key string, h uint64, limit, amount int64, w *window) *check {
	n := len(e.spends)
	if n == cap(e.spends) || n == cap(e.checks) {
		e.spends = append(e.spends, state.Spend{})[:n]
		e.checks = append(e.checks, check{})[:n]
	}
	e.spends, e.checks = e.spends[:n+1], e.checks[:n+1]
	sp := &e.spends[n]
	sp.Key, sp.KeyHash, sp.Exact = key, h, false
	sp.Slot, sp.Slots, sp.TTL = w.slot, w.slots, w.ttl
	sp.Limit, sp.Amount = limit, amount
	c := &e.checks[n]
	*c = check{}
	c.limit, c.win = limit, *w
	return c
}

// scope adds the spends of limits l on the scope named name, whose
// counters start with key. The order is the order refusals are reported
// in: a mute first (it outlasts every other), then the burst, the requests
// in flight, the hour, the day and the tokens.
func (e *enter) scope(name string, key *scopeNames, l config.CallerLimits) {
	if bu := l.Burst; bu.Count > 0 {
		var m *mute
		if bu.Mute > 0 {
			mw := burstWindow(e.now, bu.Mute)
			// Every request adds 1 to the mute counter; a mute's weight
			// in the window refuses every request until it drops out.
			c := e.push(key.mute, key.hMute, muteWeight, 1, &mw)
			c.scope, c.kind, c.limit, c.span = name, KindBurst, int64(bu.Count), bu.Within
			// Another instance mutes with one add: checked against
			// Redis every time, never from a share held here.
			e.spends[len(e.spends)-1].Exact = true
			m = &mute{weight: mw.spend(key.mute, 0, muteWeight), win: mw}
		}
		bw := burstWindow(e.now, bu.Within)
		c := e.push(key.burst, key.hBurst, int64(bu.Count), 1, &bw)
		c.scope, c.kind, c.span, c.mute = name, KindBurst, bu.Within, m
	}
	if l.Concurrent > 0 {
		w := slidingWindow(e.now, e.lease, 2)
		c := e.push(key.conc, key.hConc, int64(l.Concurrent), 1, &w)
		c.scope, c.kind, c.concurrent = name, KindConcurrent, true
	}
	if l.PerHour > 0 {
		w := hourWindow(e.now)
		c := e.push(key.hour, key.hHour, int64(l.PerHour), 1, &w)
		c.scope, c.kind, c.span = name, KindHour, time.Hour
	}
	if l.PerDay > 0 {
		w := dayWindow(e.now)
		c := e.push(key.day, key.hDay, int64(l.PerDay), 1, &w)
		c.scope, c.kind, c.span = name, KindDay, 24*time.Hour
	}
	if l.TokensDay > 0 {
		w := dayWindow(e.now)
		c := e.push(key.tokens, key.hTokens, int64(l.TokensDay), e.tokens, &w)
		c.scope, c.kind, c.span, c.tokens = name, KindTokens, 24*time.Hour, true
	}
}

func hourWindow(now time.Time) window { return slidingWindow(now, hourSlot, hourSlots) }
func dayWindow(now time.Time) window  { return slidingWindow(now, rollingSlot, rollingSlots) }

// refusal works out the LimitError of the refused spend sp, and starts a
// burst's mute.
func (b *Book) refusal(ctx context.Context, now time.Time, sp state.Spend, c check) error {
	e := &LimitError{Scope: c.scope, Kind: c.kind, Limit: c.limit, Window: c.span}
	switch {
	case c.concurrent:
		e.RetryAt = now.Add(concurrentRetry)
		return e
	case c.mute != nil:
		// Too fast: mute. Two instances that both refuse add the weight
		// twice, which mutes no longer.
		if err := b.store.Add(ctx, []state.Spend{c.mute.weight}); err != nil {
			// The refusal stands; the mute is lost with the store.
			e.RetryAt = c.win.firstExpiry()
			return e
		}
		e.RetryAt = c.mute.win.expiry(c.mute.win.slots - 1)
		return e
	}
	var err error
	e.RetryAt, _, err = b.until(ctx, sp, c.win)
	if err != nil || e.RetryAt.IsZero() {
		// The refusal stands; only its time is a guess. A zero time is a
		// request larger than the limit (tokens): no wait frees enough, so
		// say when the whole window has turned over.
		e.RetryAt = c.win.expiry(c.win.slots - 1)
	}
	return e
}

// Leave ends p: it releases p's concurrent counts and, with usageKnown,
// replaces the estimate counted on its tokens-per-day windows with used
// (prompt and answer). A nil p, a p already given back, or one Admit left
// pending (it counted nothing), does nothing. On a Store that queues adds
// the changes are queued (see the package doc).
func (b *Book) Leave(ctx context.Context, p *Pass, used int, usageKnown bool) error {
	if p == nil || !p.done.CompareAndSwap(false, true) {
		return nil
	}
	e := p.take()
	if e == nil {
		return nil
	}
	defer e.free()
	buf := addBufs.Get().(*addBuf)
	defer addBufs.Put(buf)
	adds := buf[:0]
	for i := range e.checks {
		c := &e.checks[i] // not a copy: a check is 120 bytes
		sp := e.spends[i] // Limit kept: see giveBack
		switch {
		case c.concurrent:
			sp.Amount = -1
		case c.tokens && usageKnown:
			if sp.Amount = int64(clampTokens(used)) - sp.Amount; sp.Amount == 0 {
				continue
			}
		default:
			continue
		}
		adds = append(adds, sp)
	}
	if len(adds) == 0 {
		return nil
	}
	if err := b.add(ctx, adds); err != nil {
		return fmt.Errorf("quota: leave: %w", err)
	}
	return nil
}

// Refund ends p as if its request had never come: every count Enter made
// for it is given back, its tokens and its place in the site's day too.
// The gateway refunds a request it let through but then could not take
// (busy, gate.ErrBusy): the caller did not get an answer, so it should not
// lose one. A nil p, a p already given back, or one Admit left pending,
// does nothing.
func (b *Book) Refund(ctx context.Context, p *Pass) error {
	if p == nil || !p.done.CompareAndSwap(false, true) {
		return nil
	}
	e := p.take()
	if e == nil {
		return nil
	}
	defer e.free()
	adds := slices.Clone(e.spends)
	for i := range adds {
		adds[i].Amount = -adds[i].Amount // Limit kept: see giveBack
	}
	if err := b.add(ctx, adds); err != nil {
		return fmt.Errorf("quota: refund: %w", err)
	}
	return nil
}

// burstWindow is a sliding window at least d long: slots of a tenth of d
// (whole seconds, at least one), and one slot more than d holds, so that
// requests closer together than d are never counted apart (as windowFor
// does for a route's minute).
func burstWindow(now time.Time, d time.Duration) window {
	size := max((d / 10).Truncate(time.Second), time.Second)
	n := int((d + size - 1) / size)
	return slidingWindow(now, size, n+1)
}
