package quota

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/state"
)

// learnTTL is how long a limit read from headers holds after it was last
// seen. A provider that stops sending it (or a busy-model cap that was lifted)
// stops limiting the route a day later.
const learnTTL = 24 * time.Hour

type learnKey struct {
	scope string
	k     kind
}

type learnedLimit struct {
	limit int64
	seen  time.Time
	saved time.Time // when its note was last written (see learned.go)
	since time.Time // when the provider first said this limit (said.go)
}

// limit returns the limit in force for window k of s at now: the configured
// one, the learned one, or the lower of both when both are known (the
// provider's word is a fact, a lower configured limit is the owner's intent).
func (b *Book) limit(s scope, k kind, now time.Time) int64 {
	conf := limitOf(s.limits, k)
	if !b.anyLearned.Load() {
		return conf
	}
	b.mu.Lock()
	l, ok := b.learned[learnKey{s.key, k}]
	b.mu.Unlock()
	if !ok || now.Sub(l.seen) >= learnTTL || l.limit <= 0 {
		return conf
	}
	if conf > 0 && conf < l.limit {
		return conf
	}
	return l.limit
}

// learnedAt reports whether the limit of k in s came from headers.
func (b *Book) learnedAt(s scope, k kind, now time.Time) bool {
	l, ok := b.reported(s, k, now)
	return ok && (limitOf(s.limits, k) == 0 || l < limitOf(s.limits, k))
}

// reading is what a provider's headers say about one window.
type reading struct {
	k         kind
	provider  bool // an account-wide window (the provider's scope)
	limit     int64
	remaining int64
	hasLimit  bool
	hasRemain bool
	// reset is how long until the window refills, 0 if not sent.
	reset time.Duration
}

// Observe corrects the counts of route r from the rate-limit headers of a
// response, and learns the limits that the headers name: the route is
// budgeted by them from then on (see Book.limit). Formats (docs/PROVIDERS.md,
// each provider's "Rate-limit headers"):
//
//   - Groq: x-ratelimit-{limit,remaining,reset}-requests are the day (RPD),
//     -tokens the minute (TPM); resets are Go durations ("2m59.56s").
//   - Cerebras, and any provider sending the same names (Mistral's
//     tokens-minute): x-ratelimit-{limit,remaining,reset}-{requests-day,
//     tokens-minute,requests-minute,tokens-day}; resets in float seconds.
//   - OpenRouter: X-RateLimit-{Limit,Remaining,Reset}, Reset in epoch
//     milliseconds. A reset more than 61 s away is the day (account-wide, the
//     provider's window); one within a minute that is not a UTC midnight is
//     the minute; in the last minute of a UTC day the limit decides (equal to
//     the configured RPD: the day). A minute limit equal to the provider's
//     configured RPM is the account-wide one; any other (a busy model's "8
//     requests per minute") is learned for the route alone.
//
// Headers of other providers are ignored.
//
// # The correction rule
//
// A provider computes its headers when it takes the request, before it has
// seen the calls this Book reserved meanwhile (issue 10: taking its
// limit − remaining as the count erased them, and an rpd-10 route took 11
// calls). So for each window the headers describe:
//
//	target = (limit − remaining) + what this Book's reservations still in
//	         flight spent in the window
//
// (the response's own reservation is settled before it is observed, and the
// provider counted it). Then:
//
//   - a count below target is raised to it, in the current slot: the
//     provider counted calls this Book did not (another client of the same
//     key, counts lost with a store);
//   - a count above target is lowered only by taking back raises this Book
//     made earlier in the window (newest slot first), and never further.
//
// A count therefore never drops below what was reserved: no reservation, in
// flight or not, of this instance or another, is ever erased. A call the
// provider never counted (one that failed before reaching it) stays counted,
// and a minute window stays counted over its 60 to 60.25 seconds: both on the
// safe side. Counting every reservation in flight as unseen may raise a
// count by calls the provider had in fact seen; that raise is taken back by
// the next response, whose target is lower. Another instance's reservations
// in flight are not known here: a raise may then fall short by them, never
// erase them. The read and the correction are not atomic, with
// reservations or with each other: a reservation made between them is
// counted as in flight (the high side), two answers observed at once may
// both add the same raise (the next answer takes the extra back), and a
// raise taken back leaves the ledger before the store, so two can never
// take one back twice. No lock is held across the store's round trips. A
// Store error is returned wrapped and changes nothing else. On a Store that
// queues adds (state.Deferrer) the limits are learned at once and the
// counts read and corrected on a goroutine of the Book's, after the adds
// queued before (this answer's Settle among them): Observe then returns
// nil, and Close waits for it.
func (b *Book) Observe(ctx context.Context, r *config.Route, h http.Header) error {
	if !hasRateLimitHeaders(h) {
		return nil // most answers of most providers: nothing to parse
	}
	now := b.clock.Now()
	readings := parseHeaders(r, h, now)
	if len(readings) == 0 {
		return nil
	}
	spends, counted := b.learn(r, readings, now)
	if len(spends) == 0 {
		return nil
	}
	if b.later != nil {
		// Off the caller's path: the correction reads the counts after
		// the adds queued before it (this answer's Settle among them).
		ctx = context.WithoutCancel(ctx)
		b.wg.Go(func() {
			b.later.Flush(ctx)
			_ = b.correct(ctx, r, spends, counted, now)
		})
		return nil
	}
	return b.correct(ctx, r, spends, counted, now)
}

// correct brings the windows spends to the counts the headers stated
// (counted), by Observe's rule.
func (b *Book) correct(ctx context.Context, r *config.Route, spends []state.Spend, counted []int64, now time.Time) error {
	sums, err := b.store.Sums(ctx, spends)
	if err != nil {
		return fmt.Errorf("quota: observe %s: %w", r.ID, err)
	}
	// Read after the sums: a reservation made in between is then counted
	// as in flight, not missed.
	unseen := b.ledger.unseen(spends, now)
	var raises, backs []state.Spend
	for i := range spends {
		if i >= len(sums) {
			break
		}
		switch d := counted[i] + unseen[i] - sums[i]; {
		case d > 0:
			sp := spends[i]
			sp.Amount = d
			raises = append(raises, sp)
		case d < 0:
			backs = append(backs, b.ledger.takeBack(spends[i], -d, now)...)
		}
	}
	if len(raises)+len(backs) == 0 {
		return nil
	}
	if err := b.store.Add(ctx, append(raises, backs...)); err != nil {
		b.ledger.restore(backs, now)
		return fmt.Errorf("quota: observe %s: %w", r.ID, err)
	}
	b.ledger.raise(raises, now)
	if len(backs) > 0 {
		b.forgetSpent(backs) // spent.go
	}
	return nil
}

// learn records the limits the readings name, and returns the windows
// whose count they state, with that count (limit − remaining) for each.
func (b *Book) learn(r *config.Route, readings []reading, now time.Time) (spends []state.Spend, counted []int64) {
	scArr, nsc := scopes(r)
	sc := scArr[:nsc]
	for _, rd := range readings {
		s := sc[0]
		if rd.provider && len(sc) > 1 {
			s = sc[1]
		}
		if rd.hasLimit && rd.limit > 0 {
			b.mu.Lock()
			b.noteLearnedLocked(learnKey{s.key, rd.k}, rd.limit, now)
			b.mu.Unlock()
		}
		if rd.hasLimit && rd.hasRemain && rd.remaining <= rd.limit {
			w := windowFor(rd.k, s.reset, now)
			spends = append(spends, w.spend(counterKey(s.key, rd.k), 0, 0))
			counted = append(counted, rd.limit-rd.remaining)
		}
	}
	return spends, counted
}

// parseHeaders reads every window the headers describe, by the route's
// provider flavor.
func parseHeaders(r *config.Route, h http.Header, now time.Time) []reading {
	var flavor string
	var pl config.Limits
	if r.Provider != nil {
		flavor = r.Provider.Flavor
		pl = r.Provider.Limits
	}
	var out []reading
	if flavor == "groq" {
		out = append(out, parseGroq(h)...)
	}
	out = append(out, parseCerebras(h)...)
	if rd, ok := parseOpenRouter(h, now, r.Limits, pl); ok {
		out = append(out, rd)
	}
	return out
}

// parseGroq reads Groq's headers: -requests is the day, -tokens the minute.
func parseGroq(h http.Header) []reading {
	var out []reading
	for _, g := range [...]struct {
		suffix string
		k      kind
	}{{"requests", rpd}, {"tokens", tpm}} {
		rd := reading{k: g.k}
		rd.limit, rd.hasLimit = parseCount(h.Get("x-ratelimit-limit-" + g.suffix))
		rd.remaining, rd.hasRemain = parseCount(h.Get("x-ratelimit-remaining-" + g.suffix))
		rd.reset, _ = parseGoDuration(h.Get("x-ratelimit-reset-" + g.suffix))
		if rd.hasLimit || rd.hasRemain {
			out = append(out, rd)
		}
	}
	return out
}

// hasRateLimitHeaders reports, without allocating, whether h has any
// x-ratelimit-* header (every format above starts so).
func hasRateLimitHeaders(h http.Header) bool {
	const prefix = "x-ratelimit-"
	for k := range h {
		if len(k) > len(prefix) && strings.EqualFold(k[:len(prefix)], prefix) {
			return true
		}
	}
	return false
}

// parseCerebras reads the self-describing -requests-day, -tokens-minute,
// -requests-minute and -tokens-day headers.
func parseCerebras(h http.Header) []reading {
	var out []reading
	for _, c := range [...]struct {
		suffix string
		k      kind
	}{{"requests-minute", rpm}, {"requests-day", rpd}, {"tokens-minute", tpm}, {"tokens-day", tpd}} {
		rd := reading{k: c.k}
		rd.limit, rd.hasLimit = parseCount(h.Get("x-ratelimit-limit-" + c.suffix))
		rd.remaining, rd.hasRemain = parseCount(h.Get("x-ratelimit-remaining-" + c.suffix))
		rd.reset, _ = parseSeconds(h.Get("x-ratelimit-reset-" + c.suffix))
		if rd.hasLimit || rd.hasRemain {
			out = append(out, rd)
		}
	}
	return out
}

// parseOpenRouter reads X-RateLimit-{Limit,Remaining,Reset} and decides
// which window they describe (see Observe). rl and pl are the route's and
// the provider's configured limits.
func parseOpenRouter(h http.Header, now time.Time, rl, pl config.Limits) (reading, bool) {
	var rd reading
	rd.limit, rd.hasLimit = parseCount(h.Get("X-RateLimit-Limit"))
	rd.remaining, rd.hasRemain = parseCount(h.Get("X-RateLimit-Remaining"))
	ms, ok := parseCount(h.Get("X-RateLimit-Reset"))
	// Epoch milliseconds are 13 digits; a smaller number is some other
	// provider's seconds, not this format.
	if !ok || ms < 1e12 || ms > math.MaxInt64/int64(time.Millisecond) || (!rd.hasLimit && !rd.hasRemain) {
		return reading{}, false
	}
	at := time.UnixMilli(ms)
	until := at.Sub(now)
	midnight := ms%(24*3600*1000) == 0
	switch {
	case until > 61*time.Second:
		rd.k = rpd
	case !midnight:
		rd.k = rpm
	case rd.hasLimit && (rd.limit == int64(pl.RPD) || rd.limit == int64(rl.RPD)) && rd.limit > 0:
		rd.k = rpd
	default:
		rd.k = rpm
	}
	if until > 0 && until <= maxReset {
		rd.reset = until
	}
	// The free daily cap is account-wide; a minute cap is only when it is
	// the provider's configured one.
	rd.provider = rd.k == rpd || (pl.RPM > 0 && rd.limit == int64(pl.RPM))
	return rd, true
}

// parseCount parses a non-negative integer header value.
func parseCount(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// maxReset bounds a parsed reset: nothing waits longer than a week.
const maxReset = 7 * 24 * time.Hour

// parseGoDuration parses Groq's "2m59.56s", "7.66s", "520ms".
func parseGoDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > maxReset {
		return 0, false
	}
	return d, true
}

// parseSeconds parses Cerebras' float seconds, "33011.382867097855".
func parseSeconds(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > maxReset.Seconds() {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}
