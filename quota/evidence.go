package quota

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/config"
)

// Margins by evidence (issue 31, item 3). A chain's margin guards against
// a limit the gateway cannot see: one known from the config alone, which
// the provider may count differently or enforce lower. So:
//
//   - a window whose limit the provider reports in its rate-limit headers
//     (Groq, OpenRouter, Cerebras, Mistral...) gets no margin at all: its
//     count is kept in line with the provider's own remaining count
//     (Observe), and it is spent to what the provider says;
//   - a window known from the config alone gets the chain's margin divided
//     by 1 + n/confirmHalf, where n is the answers its scope (the route,
//     or its provider's account) gave since its last rate refusal: each
//     answer is the provider confirming that the configured limits hold,
//     so the margin shrinks as they do (half after 50 answers, a tenth
//     after 450), and a 429 puts it back whole.
//
// The answers are counted in this Book's memory, per instance: a restart
// starts each margin whole again, which is the safe side.

// confirmHalf is the number of answers since a route's last rate refusal
// after which its config-only margin is half the chain's.
const confirmHalf = 50

// confirmations counts, per scope key, the answers since its last rate
// refusal.
type confirmations struct {
	m sync.Map // string -> *atomic.Int64
}

func (c *confirmations) counter(key string) *atomic.Int64 {
	if v, ok := c.m.Load(key); ok {
		return v.(*atomic.Int64)
	}
	v, _ := c.m.LoadOrStore(key, new(atomic.Int64))
	return v.(*atomic.Int64)
}

func (c *confirmations) count(key string) int64 {
	if v, ok := c.m.Load(key); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// Answered notes that route r answered: the limits configured for it and
// its provider held once more.
func (b *Book) Answered(r *config.Route) {
	scArr, nsc := scopes(r)
	for _, s := range scArr[:nsc] {
		b.confirmed.counter(s.key).Add(1)
	}
}

// RateRefused notes that route r was refused for a rate limit (a 429): its
// config-only margins, and its provider's, are whole again.
func (b *Book) RateRefused(r *config.Route) {
	scArr, nsc := scopes(r)
	for _, s := range scArr[:nsc] {
		b.confirmed.counter(s.key).Store(0)
	}
}

// marginFor returns the margin that window k of scope s applies at now,
// under the chain's margin (see the comment above).
func (b *Book) marginFor(s scope, k kind, margin float64, now time.Time) float64 {
	if margin <= 0 {
		return 0
	}
	if _, ok := b.reported(s, k, now); ok {
		return 0
	}
	n := b.confirmed.count(s.key)
	return margin * confirmHalf / float64(confirmHalf+n)
}

// reported returns the limit of window k of scope s that the provider's
// headers named within learnTTL, if any.
func (b *Book) reported(s scope, k kind, now time.Time) (int64, bool) {
	if !b.anyLearned.Load() {
		return 0, false
	}
	b.mu.Lock()
	l, ok := b.learned[learnKey{s.key, k}]
	b.mu.Unlock()
	if !ok || l.limit <= 0 || now.Sub(l.seen) >= learnTTL {
		return 0, false
	}
	return l.limit, true
}

// Margin returns the margin route r's window named limit (as in
// SpentError.Limit: "rpd", "provider tpm"...) applies now under the
// chain's margin: 0 for a limit its provider reports, less than margin for
// a configured one that answers have confirmed. For the status page and
// tests.
func (b *Book) Margin(r *config.Route, limit string, margin float64) float64 {
	now := b.clock.Now()
	scArr, nsc := scopes(r)
	for _, s := range scArr[:nsc] {
		for k := kind(0); k < nKinds; k++ {
			if limitName(s, k) == limit {
				return b.marginFor(s, k, margin, now)
			}
		}
	}
	return margin
}

// ReserveProbe counts one request and tokens on route r's windows and its
// provider's without checking them: the probe at the edge (route/edge.go)
// calls a route its budget refused, and the provider counts the call as
// any other. It returns the reservation to settle, nil when nothing is
// counted (no limit) or the Store failed: the probe goes ahead either way.
func (b *Book) ReserveProbe(r *config.Route, tokens int) *Reservation {
	now := b.clock.Now()
	if !b.limited(r, now) {
		return nil
	}
	tokens = clampTokens(tokens)
	t := b.template(r, 0, now)
	res := &Reservation{Route: r.ID, Tokens: tokens, At: now, tmpl: t, charge: chargeOf(r)}
	buf := addBufs.Get().(*addBuf)
	defer addBufs.Put(buf)
	spends := res.appendSpends(buf[:0])
	for i := range spends {
		spends[i].Limit = 0 // count without checking
	}
	ctx, cancel := context.WithTimeout(context.Background(), noteTimeout)
	defer cancel()
	b.ledger.opened(res)
	if err := b.store.Add(ctx, spends); err != nil {
		b.ledger.closed(res)
		return nil
	}
	return res
}
