package quota

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/state"
)

// A spent route is refused by the Store on every request until its window
// frees up: on a busy day a chain's first routes are spent by noon, and
// every request after that would ask the Store (a Redis round trip each)
// about each of them again (issue 18, item 5). So the Book remembers, per
// route, the window that last refused it: "route X's window Y, at limit L,
// cannot take a spend of A until T", T being when the Store said enough of
// the window frees up (SpentError.Until: the expiry of the slot that makes
// room, the next reset of a midnight day or a month). Until then Reserve
// refuses a spend of at least A on that window, under a limit no higher
// than L, without calling the Store.
//
// A mark only ever refuses what the Store refused; the Store stays the
// authority whenever there is no mark. So that a mark never makes a route
// with room look spent for long:
//
//   - it ends at T, or markLife after it was made, whichever comes first:
//     another instance sharing the Store may lower a count (its Settle, its
//     Observe) without this Book knowing, so a spent route is asked about
//     again at least every markLife;
//   - a higher limit (a limit learned from headers, another chain's
//     smaller margin) or a smaller spend (fewer tokens) is not refused by it;
//   - a Settle or an Observe of this Book that lowers a count forgets every
//     mark on that count (forgetSpent), and a mark the Store refused before
//     such a lowering is not made (the generations below);
//   - a config reload builds a new Book, with no marks.
const markLife = time.Second

// spentMark is one route's refused window.
type spentMark struct {
	key      string // the window's counter key, as Settle and Observe name it
	scope    string // its scope's key: the route ID, or the provider's rest key
	provider string // for an account-wide window, its provider's name
	k        kind
	name     string    // the window's name for a SpentError (limitName)
	limit    int64     // the limit, margin applied, it was refused under
	amount   int64     // the spend refused: one at least as large is refused too
	until    time.Time // when the window may take amount again
	expires  time.Time // until, or markLife after the refusal if sooner
}

// spentMemo holds the marks. Readers (every Reserve) load the map without
// a lock; a writer copies it, under mu: marks change a few times a second
// at most, while reads come on every attempt of every request.
type spentMemo struct {
	mu    sync.Mutex // serializes writers of marks
	marks atomic.Pointer[spentMarks]
	// gens counts, per kind of window, the lowerings forgetSpent saw. A
	// refusal is noted only when no count of its kind was lowered since
	// before the Store refused it: a lowering in between may have made the
	// room the refusal says is missing.
	gens [nKinds]atomic.Uint64
}

// spentMarks is the marks at one time: by route ID, and how many there
// are on each counter key (for forgetSpent, which runs on nearly every
// Settle and mostly finds nothing to forget). It never changes once made.
type spentMarks struct {
	byRoute map[string]spentMark
	onKey   map[string]int
}

func newSpentMarks(n int) *spentMarks {
	return &spentMarks{byRoute: make(map[string]spentMark, n), onKey: make(map[string]int, n)}
}

func (s *spentMarks) put(id string, m spentMark) {
	if old, ok := s.byRoute[id]; ok {
		s.onKey[old.key]--
	}
	s.byRoute[id] = m
	s.onKey[m.key]++
}

// spentGens is a snapshot of spentMemo.gens.
type spentGens [nKinds]uint64

// spentFor returns the refusal that a mark of route r gives a spend of
// tokens under margin at now, or nil when the Store must decide; and the
// generations at now, for noteSpent.
func (b *Book) spentFor(r *config.Route, tokens int, margin float64, now time.Time) (*SpentError, spentGens) {
	var g spentGens
	for i := range g {
		g[i] = b.spent.gens[i].Load()
	}
	if b.spent.marks.Load() == nil {
		return nil, g // no route was ever refused: nothing to look up
	}
	return b.markedSpent(r, tokens, margin, now), g
}

// markedSpent is spentFor's refusal, when there are marks. Apart, so that
// a mark's copy is on the stack only when there are marks: every
// reservation's frames are that much shallower.
func (b *Book) markedSpent(r *config.Route, tokens int, margin float64, now time.Time) *SpentError {
	m, ok := b.markFor(r, tokens, margin, now)
	if !ok {
		return nil
	}
	return &SpentError{Route: r.ID, Limit: m.name, Until: m.until}
}

// Spent reports, from what the Book remembers alone, that Reserve would
// refuse route r a spend of tokens under margin at now: the window's name
// (SpentError.Limit) and when it may have room again (SpentError.Until).
// It asks no Store and allocates nothing, so that a router walking past a
// spent route pays a map lookup for it; ok false says only that Reserve
// must decide. It is safe for concurrent use.
func (b *Book) Spent(r *config.Route, tokens int, margin float64, now time.Time) (limit string, until time.Time, ok bool) {
	m, ok := b.markFor(r, clampTokens(tokens), margin, now)
	if !ok {
		return "", time.Time{}, false
	}
	return m.name, m.until, true
}

// markFor returns the mark of route r that refuses a spend of tokens
// (clamped) under margin at now, if any.
func (b *Book) markFor(r *config.Route, tokens int, margin float64, now time.Time) (spentMark, bool) {
	mp := b.spent.marks.Load()
	if mp == nil {
		return spentMark{}, false
	}
	m, ok := mp.byRoute[r.ID]
	if !ok || !now.Before(m.expires) {
		return spentMark{}, false
	}
	s := scope{key: r.ID, limits: r.Limits, reset: r.Reset}
	if m.provider != "" {
		if r.Provider == nil || r.Provider.Name != m.provider {
			return spentMark{}, false
		}
		s = scope{key: m.scope, provider: true, limits: r.Provider.Limits, reset: r.Provider.Reset}
	}
	amount := int64(1)
	if m.k.tokens() {
		amount = int64(tokens)
	}
	if amount < m.amount {
		return spentMark{}, false
	}
	// A spend larger than the limit is the Store's to refuse: as too
	// large for the window (TooLarge), which no wait mends.
	if l := allowed(b.limit(s, m.k, now), b.marginFor(s, m.k, margin, now)); l <= 0 || l > m.limit || amount > l {
		return spentMark{}, false
	}
	return m, true
}

// noteSpent remembers that the Store refused sp, route r's spend on
// window k of scope s, with e, when no count of that kind was lowered
// since g was read (before the Store was asked).
func (b *Book) noteSpent(r *config.Route, s scope, k kind, sp state.Spend, e *SpentError, g spentGens, now time.Time) {
	if e.TooLarge || !e.Until.After(now) {
		return
	}
	m := spentMark{key: sp.Key, scope: s.key, k: k, name: e.Limit,
		limit: sp.Limit, amount: sp.Amount, until: e.Until, expires: now.Add(markLife)}
	if s.provider {
		if r.Provider == nil {
			return
		}
		m.provider = r.Provider.Name
	}
	if e.Until.Before(m.expires) {
		m.expires = e.Until
	}
	b.spent.mu.Lock()
	defer b.spent.mu.Unlock()
	if b.spent.gens[k].Load() != g[k] {
		return
	}
	old := b.spent.marks.Load()
	next := newSpentMarks(1 + old.len())
	if old != nil {
		for id, o := range old.byRoute {
			if now.Before(o.expires) {
				next.put(id, o)
			}
		}
	}
	next.put(r.ID, m)
	b.spent.marks.Store(next)
}

// forgetSpent forgets every mark on the counts that lowered names (their
// Key): a Settle that found fewer tokens than estimated, an Observe that
// took back its own raise. It is called once the Store has the lowering.
func (b *Book) forgetSpent(lowered []state.Spend) {
	for _, sp := range lowered {
		if k, ok := kindOfKey(sp.Key); ok {
			b.spent.gens[k].Add(1)
		}
	}
	b.forgetMarks(lowered)
}

// forgetMarks is forgetSpent once the generations of lowered's kinds were
// counted (Settle knows them without reading the keys).
func (b *Book) forgetMarks(lowered []state.Spend) {
	// Most lowerings (nearly every Settle) touch no mark: look first.
	if !b.spent.marks.Load().onAny(lowered) {
		return
	}
	b.spent.mu.Lock()
	defer b.spent.mu.Unlock()
	old := b.spent.marks.Load()
	next := newSpentMarks(old.len())
	for id, m := range old.byRoute {
		if !marksAny(m, lowered) {
			next.put(id, m)
		}
	}
	b.spent.marks.Store(next)
}

// onAny reports whether a mark is on one of the keys of lowered.
func (s *spentMarks) onAny(lowered []state.Spend) bool {
	if s == nil {
		return false
	}
	for _, sp := range lowered {
		if s.onKey[sp.Key] > 0 {
			return true
		}
	}
	return false
}

func (s *spentMarks) len() int {
	if s == nil {
		return 0
	}
	return len(s.byRoute)
}

func marksAny(m spentMark, lowered []state.Spend) bool {
	for _, sp := range lowered {
		if sp.Key == m.key {
			return true
		}
	}
	return false
}

// kindOfKey reads the kind of window a counter key names (counterKey).
func kindOfKey(key string) (kind, bool) {
	i := strings.LastIndexByte(key, '|')
	if i < 0 {
		return 0, false
	}
	for k := kind(0); k < nKinds; k++ {
		if key[i+1:] == kindNames[k] {
			return k, true
		}
	}
	return 0, false
}
