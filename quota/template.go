package quota

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/state"
)

// A route's spends differ from one Reserve to the next only in their
// token amounts, and in their windows and limits only when a slot turns,
// a day or month resets, or a limit is learned: every slot boundary and
// reset falls on a boundary of a minute's slot (minuteSlot, the shortest).
// Working them out (six windows, a day's date in its zone, each limit
// checked against the learned ones) was a third of a Reserve's own cost
// under load (issue 18, item 2). So each route keeps its spends, as of one
// minute slot, in a template, with each counter's hash
// (state.Spend.KeyHash): a Reservation points to it and applies its own
// tokens, and Reserve builds a new one when the slot, the chain's margin or
// the learned limits changed. A template never changes once made: the
// reservations of its slot share it.

// spendTmpl is route r's spends during one minute slot, for one margin.
type spendTmpl struct {
	slot   int64   // the minute slot they hold for (tmplSlotOf)
	gen    uint64  // Book.learnedGen when they were made
	margin float64 // the chain's margin they apply
	n      int
	tokens uint32 // bit i: spends[i] is a token window, Amount set by Reserve
	spends [2 * nKinds]state.Spend
	metas  [2 * nKinds]spendMeta
}

// spendMeta says which scope (0 the route, 1 its provider) and kind a
// template's spend is.
type spendMeta struct {
	s uint8
	k kind
}

// tmplSlot holds a route's latest template.
type tmplSlot struct{ p atomic.Pointer[spendTmpl] }

// tmplCache maps each route to its slot. Readers load the map without a
// lock; a new route copies it. It grows with the routes of the plans
// this Book served; past maxTmplRoutes (reloads, each with new routes) it
// starts again empty.
type tmplCache struct {
	mu sync.Mutex
	m  atomic.Pointer[map[*config.Route]*tmplSlot]
}

const maxTmplRoutes = 4096

func (c *tmplCache) slot(r *config.Route) *tmplSlot {
	if m := c.m.Load(); m != nil {
		if s := (*m)[r]; s != nil {
			return s
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if s := (*old)[r]; s != nil {
			return s
		}
	}
	next := make(map[*config.Route]*tmplSlot)
	if old != nil && len(*old) < maxTmplRoutes {
		maps.Copy(next, *old)
	}
	s := new(tmplSlot)
	next[r] = s
	c.m.Store(&next)
	return s
}

// tmplSlotOf is the minute slot of now: a template holds for one.
func tmplSlotOf(now time.Time) int64 { return floorDiv(now.UnixNano(), int64(minuteSlot)) }

// template returns route r's spends at now under margin, token amounts
// unset.
func (b *Book) template(r *config.Route, margin float64, now time.Time) *spendTmpl {
	slot := b.tmpls.slot(r)
	at, gen := tmplSlotOf(now), b.learnedGen.Load()
	if t := slot.p.Load(); t != nil && t.slot == at && t.gen == gen && t.margin == margin {
		return t
	}
	return b.makeTemplate(slot, r, margin, now, at, gen)
}

// makeTemplate makes route r's template and keeps it in slot. Apart from
// template, so that its frame (the scopes, the windows) is on the stack
// once a slot, not at every reservation.
func (b *Book) makeTemplate(slot *tmplSlot, r *config.Route, margin float64, now time.Time, at int64, gen uint64) *spendTmpl {
	t := &spendTmpl{slot: at, gen: gen, margin: margin}
	scArr, nsc := scopes(r)
	for si, s := range scArr[:nsc] {
		for k := kind(0); k < nKinds; k++ {
			if !k.counted(s.limits) {
				continue
			}
			w := windowFor(k, s.reset, now)
			amount := int64(1)
			if k.tokens() {
				amount = 0
				t.tokens |= 1 << t.n
			}
			t.metas[t.n] = spendMeta{uint8(si), k}
			t.spends[t.n] = w.spend(s.names[k], allowed(b.limit(s, k, now), b.marginFor(s, k, margin, now)), amount)
			t.spends[t.n].KeyHash = s.hashes[k]
			t.n++
		}
	}
	slot.p.Store(t)
	return t
}
