package quota

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/state"
)

// Options configure a Book.
type Options struct {
	// Store holds every count. Required.
	Store state.Store
	// Clock tells the time. Default clock.Real.
	Clock clock.Clock
}

// Book keeps the budgets of routes, providers and callers in a state.Store.
// It is safe for concurrent use. Limits learned from rate-limit headers are
// kept in the Book and, off the request path, in the Store (learned.go): a
// restart, a config reload and the other instances know them. The
// reservations in flight and the corrections Observe made are kept in the
// Book alone (see Observe). Close it to wait for its writes.
type Book struct {
	store state.Store
	clock clock.Clock
	split state.SplitSpender // the Store's, when it has one (admit.go)
	later state.Deferrer     // the Store's, when it has one (admit.go)

	mu      sync.Mutex // guards learned
	learned map[learnKey]learnedLimit
	// anyLearned is set once learned holds a limit: until then, which a
	// provider that sends no limit headers never ends, a window's limit
	// is its configured one, read without the lock (six windows a
	// reservation).
	anyLearned atomic.Bool

	ledger ledger
	spent  spentMemo // the windows the Store refused lately (spent.go)
	tmpls  tmplCache // each route's spends as of a second (template.go)
	// learnedGen counts the changes to learned: a template made before
	// the last change is made again.
	learnedGen atomic.Uint64
	names      *nameCache // the counter names of the callers seen lately (names.go)
	// confirmed counts each scope's answers since its last rate refusal:
	// a config-only limit's margin shrinks with them (evidence.go).
	confirmed confirmations
	// answers holds each route's answer sizes (answers.go): route ID ->
	// *answerSizes.
	answers sync.Map

	refreshed atomic.Int64   // unix nanoseconds of the last read of the notes
	wg        sync.WaitGroup // reads and writes of the notes
}

// New returns a Book over o.Store, with the limits learned before (by this
// instance before a restart or reload, or by another) read from it. It panics if o.Store is nil (a
// programmer error).
func New(o Options) *Book {
	if o.Store == nil {
		panic("quota: New without a Store")
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	b := &Book{store: o.Store, clock: o.Clock, learned: make(map[learnKey]learnedLimit), ledger: newLedger(), names: newNameCache()}
	b.split, _ = state.Find[state.SplitSpender](o.Store)
	b.later, _ = state.Find[state.Deferrer](o.Store)
	b.refreshed.Store(b.clock.Now().UnixNano())
	b.loadLearned()
	return b
}

// SpentError reports a budget window spent: the route (or its provider's
// account) cannot take this request now. The router skips the route
// without calling it. It is not the chain's failure to answer
// (route.ExhaustedError): other routes may still take the request.
type SpentError struct {
	// Route is the route's ID.
	Route string
	// Limit names the window: "rpm", "rpd", "tpm", "tpd", "rph", "tph",
	// "tpmo", "rpmo", or the same with a "provider " prefix for the provider's
	// account-wide limits.
	Limit string
	// Until is when enough of the window frees up for this request: the
	// expiry of the slot that makes room in a sliding window, the next reset
	// of a midnight day or a month. Zero when TooLarge.
	Until time.Time
	// TooLarge reports that the request alone is larger than the window's
	// limit (tokens above TPM): no wait helps, only a smaller request or a
	// larger route. The router skips the route for this request only.
	TooLarge bool
}

func (e *SpentError) Error() string {
	if e.TooLarge {
		return fmt.Sprintf("quota: %s: request larger than the %s limit", e.Route, e.Limit)
	}
	return fmt.Sprintf("quota: %s: %s exhausted until %s", e.Route, e.Limit, e.Until.UTC().Format(time.RFC3339))
}

// Reservation is a spend Reserve made, to be settled with the real usage.
type Reservation struct {
	// Route is the route's ID.
	Route string
	// Tokens is the number of tokens reserved.
	Tokens int
	// At is when the spend was made.
	At time.Time
	// Prompt is the prompt's Estimate and Output the answer tokens
	// counted in Tokens (ExpectedOutput), set by Reserve's caller so that
	// LearnAnswer can learn how the provider counts them (answers.go); 0
	// learns nothing.
	Prompt, Output int

	// tmpl is the route's spends as Reserve made them, token windows
	// at Tokens (see spend): shared with the other reservations of its
	// second and never changed, so that a reservation is a hundred bytes,
	// not the six spends' copy (issue 18, item 2).
	tmpl    *spendTmpl
	settled atomic.Bool
	// charge is how the route's provider counts the call (chargeOf):
	// see Charged.
	charge charge
	// prev, next and open link the reservation into its Book's ledger
	// while it is in flight (inflight.go); the ledger's lock guards them.
	prev, next *Reservation
	open       bool
}

// Charged is what the provider counted for res's call, which reported
// prompt and completion tokens: both; on a provider that charges a
// request its max_tokens when it arrives (chargeUpFront) the prompt and
// the answer tokens reserved (Output: max_tokens), whatever the answer
// cost; on one that counts input alone (chargeInput), the prompt. Settled
// with the answer alone, an up-front count would fall below the
// provider's, the next response's headers would raise it again in the
// current slot, and that raise would hold a minute's room for a whole
// minute: Cerebras, bound by its 60,000 tokens a minute, answered 254 where
// the naive loop answered 297 (the evaluation batch of tools/sim, seed 2).
// Settled with the charge, its count is the provider's to the token.
// Without max_tokens, Output is what was reserved for the answer (the
// route's longest, or 1,024): the provider's own estimate is unknown, and
// that errs on the side of its limit.
func (res *Reservation) Charged(prompt, completion int) int {
	if res != nil {
		switch {
		case res.charge == chargeUpFront && res.Output > 0:
			return prompt + res.Output
		case res.charge == chargeInput:
			return prompt
		}
	}
	return prompt + completion
}

// nSpends is how many windows res spent on.
func (res *Reservation) nSpends() int { return res.tmpl.n }

// spend returns the i-th window res spent on, with what it spent.
func (res *Reservation) spend(i int) state.Spend {
	sp := res.tmpl.spends[i]
	if res.tmpl.tokens&(1<<i) != 0 {
		sp.Amount = int64(res.Tokens)
	}
	return sp
}

// appendSpends appends res's spends to dst.
func (res *Reservation) appendSpends(dst []state.Spend) []state.Spend {
	for i := range res.tmpl.n {
		dst = append(dst, res.spend(i))
	}
	return dst
}

// scope is the route or its provider: a key prefix (the text of its
// rest.Key, which also labels its budget on the status page and in the
// metrics), limits and a reset rule; names, when set, holds its counters'
// names (counterKey of each kind).
type scope struct {
	key      string
	provider bool
	limits   config.Limits
	reset    config.Reset
	names    *[nKinds]string
	hashes   *[nKinds]uint64 // each name's state.HashKey
}

func scopes(r *config.Route) (s [2]scope, n int) {
	// The text of rest.RouteKey(r.ID) is r.ID itself. An array, not a
	// slice: Reserve's scopes stay on its stack.
	rn := routeNamesOf(r)
	s[0] = scope{key: r.ID, limits: r.Limits, reset: r.Reset, names: &rn.counters[0], hashes: &rn.hashes[0]}
	if p := r.Provider; p != nil {
		s[1] = scope{key: rn.provider, provider: true, limits: p.Limits, reset: p.Reset, names: &rn.counters[1], hashes: &rn.hashes[1]}
		return s, 2
	}
	return s, 1
}

// routeNames are the names a route's budget is kept under: its provider's
// key (rest.ProviderKey) and the counters of the route and of its
// provider. They are the same at every request, and making them costs an
// allocation each, so they are made once per route and provider.
type routeNames struct {
	provider string
	counters [2][nKinds]string
	hashes   [2][nKinds]uint64 // each counter's state.HashKey
}

type routeNamesKey struct{ route, provider string }

// routeNameCache holds the routeNames made so far, by route ID and
// provider name: it grows with the routes of the plans this process ran,
// never with callers. Readers (every Reserve) load the map without a lock;
// a new route copies it. One lookup a Reserve: a sync.Map keyed by scope
// and kind cost eight, each hashing its key through an interface (issue
// 18, item 2).
var routeNameCache struct {
	mu sync.Mutex
	m  atomic.Pointer[map[routeNamesKey]*routeNames]
}

func routeNamesOf(r *config.Route) *routeNames {
	k := routeNamesKey{route: r.ID}
	if r.Provider != nil {
		k.provider = r.Provider.Name
	}
	if m := routeNameCache.m.Load(); m != nil {
		if n := (*m)[k]; n != nil {
			return n
		}
	}
	n := &routeNames{provider: rest.ProviderKey(k.provider).String()}
	for kd := kind(0); kd < nKinds; kd++ {
		n.counters[0][kd] = counterKey(r.ID, kd)
		n.counters[1][kd] = counterKey(n.provider, kd)
		n.hashes[0][kd] = state.HashKey(n.counters[0][kd])
		n.hashes[1][kd] = state.HashKey(n.counters[1][kd])
	}
	routeNameCache.mu.Lock()
	defer routeNameCache.mu.Unlock()
	next := make(map[routeNamesKey]*routeNames)
	if m := routeNameCache.m.Load(); m != nil {
		if have := (*m)[k]; have != nil {
			return have
		}
		maps.Copy(next, *m)
	}
	next[k] = n
	routeNameCache.m.Store(&next)
	return n
}

func counterKey(scopeKey string, k kind) string { return scopeKey + "|" + k.String() }

func limitName(s scope, k kind) string {
	if s.provider {
		return "provider " + k.String()
	}
	return k.String()
}

// Reserve checks and spends one request and tokens on the route r and its
// provider, every window at once. tokens is the request's estimate plus the
// answer it may produce; RequestTokens computes it. margin is the chain's
// safety margin (see the package doc). A budget that cannot take the
// request gives a *SpentError. Any other error is the Store's, wrapped:
// the router then treats the route as allowed, calls it without a
// reservation, and Settle(nil) does nothing. A route with no limit at all
// (none configured for it or its provider, none learned from headers) is
// not counted: Reserve returns nil, nil at once, as cheap as no budget.
// Under a context carrying a Pass that Admit left pending (WithPass), the
// caller's spends are made first in the same call: a refused caller gets
// its *LimitError, and every later Reserve under that context too.
func (b *Book) Reserve(ctx context.Context, r *config.Route, tokens int, margin float64) (*Reservation, error) {
	now := b.clock.Now()
	b.maybeRefresh(now)
	tokens = clampTokens(tokens) // so that window sums cannot overflow
	if p := PassFrom(ctx); p != nil {
		if res, made, err := b.reserveWith(ctx, p, r, tokens, margin, now); made {
			return res, err
		}
	}
	if !b.limited(r, now) {
		// Neither the route nor its provider has a limit, configured or
		// learned: there is nothing to check, and counting would only cost.
		return nil, nil
	}
	return b.reserve(ctx, r, tokens, margin, now, nil, nil)
}

// reserveWith is Reserve under a Pass p that Admit left pending: p's
// spends are made with the route's (see Admit). made is false when p's
// spends were made already: Reserve then goes on alone. A refused p
// refuses every Reserve made under it.
func (b *Book) reserveWith(ctx context.Context, p *Pass, r *config.Route, tokens int, margin float64, now time.Time) (res *Reservation, made bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refused != nil {
		return nil, true, p.refused
	}
	e := p.pend
	if e == nil {
		return nil, false, nil
	}
	p.pend = nil
	if !b.limited(r, now) {
		// Nothing to reserve: the caller's spends alone. A Store error
		// lets the caller through, as Enter's does.
		_ = b.commitLocked(ctx, p, e)
		return nil, true, p.refused
	}
	res, err = b.reserve(ctx, r, tokens, margin, now, p, e)
	return res, true, err
}

// reserve spends on route r's windows, and first, in the same call, the
// spends e of the pending Pass p when there are any (see Admit). p.mu must
// be held then.
func (b *Book) reserve(ctx context.Context, r *config.Route, tokens int, margin float64, now time.Time, p *Pass, e *enter) (*Reservation, error) {
	spent, gens := b.spentFor(r, tokens, margin, now) // spent.go
	if spent != nil {
		if e != nil {
			// The route is known spent; the caller's spends go alone.
			_ = b.commitLocked(ctx, p, e)
			if p.refused != nil {
				return nil, p.refused
			}
		}
		return nil, spent
	}
	t := b.template(r, margin, now) // template.go
	// In flight before the store counts it: an Observe meanwhile then
	// counts it twice (high, and set right by the next response) rather
	// than not at all.
	res := &Reservation{Route: r.ID, Tokens: tokens, At: now, tmpl: t, charge: chargeOf(r)}
	b.ledger.opened(res)
	var spends []state.Spend
	var failed int
	var err error
	if e == nil {
		buf := addBufs.Get().(*addBuf)
		defer addBufs.Put(buf)
		spends = res.appendSpends(buf[:0])
		failed, err = b.store.Spend(ctx, spends)
	} else {
		must := len(e.spends)
		// The caller's spends then the route's, after them in e's buffer
		// (enter): SpendSplit keeps none of them.
		all := res.appendSpends(e.spends)
		failed, err = b.split.SpendSplit(ctx, all, must)
		spends = all[must:]
		switch {
		case err != nil:
			// The caller goes through counting nothing, as with Enter.
			e.free()
		case failed >= 0 && failed < must:
			b.ledger.closed(res)
			p.refused = b.refusal(ctx, e.now, e.spends[failed], e.checks[failed])
			e.free()
			return nil, p.refused
		default:
			p.made = e // for Leave
			if failed >= must {
				failed -= must
			}
		}
	}
	if err != nil {
		b.ledger.closed(res)
		return nil, fmt.Errorf("quota: reserve %s: %w", r.ID, err)
	}
	if failed >= 0 && failed < len(spends) {
		b.ledger.closed(res)
		return nil, b.spentAt(ctx, r, t, failed, spends[failed], gens, now)
	}
	return res, nil
}

// spentAt is the *SpentError of route r's window i (template t) that
// refused sp at now, noted for the next Reserves (spent.go). Out of
// reserve, so that its frame is not every reservation's.
func (b *Book) spentAt(ctx context.Context, r *config.Route, t *spendTmpl, i int, sp state.Spend, gens spentGens, now time.Time) *SpentError {
	m := t.metas[i]
	scArr, _ := scopes(r)
	s := scArr[m.s]
	w := windowFor(m.k, s.reset, now)
	e := &SpentError{Route: r.ID, Limit: limitName(s, m.k)}
	var err error
	e.Until, e.TooLarge, err = b.until(ctx, sp, w)
	if err != nil {
		// The refusal stands; only its time is a guess.
		e.Until = w.firstExpiry()
	}
	b.noteSpent(r, s, m.k, sp, e, gens, now) // spent.go
	return e
}

// limited reports whether route r or its provider has any limit at now,
// configured or learned. It allocates nothing: it runs on every attempt.
func (b *Book) limited(r *config.Route, now time.Time) bool {
	if r.Limits != (config.Limits{}) || r.Provider != nil && r.Provider.Limits != (config.Limits{}) {
		return true
	}
	if !b.anyLearned.Load() {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	scArr, nsc := scopes(r)
	for _, s := range scArr[:nsc] {
		for k := kind(0); k < nKinds; k++ {
			if l, ok := b.learned[learnKey{s.key, k}]; ok && l.limit > 0 && now.Sub(l.seen) < learnTTL {
				return true
			}
		}
	}
	return false
}

// until works out when a refused spend sp on window w would pass: for a
// sliding window, the first slot expiry after which the newer slots plus
// the amount fit under the limit.
func (b *Book) until(ctx context.Context, sp state.Spend, w window) (time.Time, bool, error) {
	if sp.Amount > sp.Limit {
		return time.Time{}, true, nil
	}
	if w.slots <= 1 {
		return w.firstExpiry(), false, nil
	}
	// newest[j] is the sum of the j newest slots, j = 1..slots-1.
	q := make([]state.Spend, w.slots-1)
	for j := 1; j < w.slots; j++ {
		q[j-1] = sp
		q[j-1].Slots = j
	}
	sums, err := b.store.Sums(ctx, q)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("quota: sums: %w", err)
	}
	if len(sums) != len(q) {
		return time.Time{}, false, errors.New("quota: sums: short answer")
	}
	// After k slots expired, the slots-k newest remain.
	for k := 1; k < w.slots; k++ {
		if sums[w.slots-k-1]+sp.Amount <= sp.Limit {
			return w.expiry(k - 1), false, nil
		}
	}
	return w.expiry(w.slots - 1), false, nil
}

// Settle ends res: its attempt is over, so it is no longer in flight (see
// Observe), and it reconciles res with the usage the provider reported: used
// total tokens (prompt and completion) replace the estimate in every token
// window it was counted in, in the slot it was counted in. With usageKnown
// false the estimate stands. A nil res (no reservation was made) does
// nothing, and the usage of a res is applied once only. The router settles
// every reservation, and before it observes the response's headers. On a
// Store that queues adds the correction is queued (see the package doc).
func (b *Book) Settle(ctx context.Context, res *Reservation, used int, usageKnown bool) error {
	if res == nil {
		return nil
	}
	b.ledger.closed(res)
	if !usageKnown || !res.settled.CompareAndSwap(false, true) {
		return nil
	}
	delta := int64(used) - int64(res.Tokens)
	// The token windows: tpm and tpd always, the hour and month where
	// counted.
	t := res.tmpl
	if delta == 0 || t.tokens == 0 {
		return nil
	}
	buf := addBufs.Get().(*addBuf)
	defer addBufs.Put(buf)
	adds := buf[:0]
	for i := range t.n {
		if t.tokens&(1<<i) != 0 {
			sp := t.spends[i]
			sp.Amount = delta // Limit kept: see giveBack
			adds = append(adds, sp)
		}
	}
	if err := b.add(ctx, adds); err != nil {
		return fmt.Errorf("quota: settle %s: %w", res.Route, err)
	}
	if delta < 0 {
		for i := range t.n {
			if t.tokens&(1<<i) != 0 {
				b.spent.gens[t.metas[i].k].Add(1)
			}
		}
		b.forgetMarks(adds) // spent.go
	}
	return nil
}
