package quota

import (
	"sync"
	"time"

	"github.com/tollfree/tollfree/state"
)

// maxOpen is how long a reservation counts as in flight at most. Every
// reservation is settled when its attempt ends (the router calls Settle on
// every path), so this only bounds what a lost one can hold back: no
// attempt, stream included, outlives it.
const maxOpen = time.Hour

// ledger remembers what a header correction needs besides the store's
// counts: the reservations still in flight (the provider may not have seen
// them yet when it computed its headers) and the corrections Observe itself
// added (the only part of a count it may take back). Both are this Book's
// own, in memory: another instance's are in its own ledger.
type ledger struct {
	mu sync.Mutex // guards open, raised
	// open holds the reservations made and not yet settled.
	open map[*Reservation]struct{}
	// raised is the net amount Observe added to each counter slot, while
	// the slot lives.
	raised map[slotRef]raise
}

type slotRef struct {
	key  string
	slot int64
}

type raise struct {
	amount  int64
	expires time.Time
}

func newLedger() ledger {
	return ledger{open: make(map[*Reservation]struct{}), raised: make(map[slotRef]raise)}
}

// opened marks res as in flight. It is called before the store counts res,
// so that a correction running meanwhile errs on the high side.
func (l *ledger) opened(res *Reservation) {
	l.mu.Lock()
	l.open[res] = struct{}{}
	l.mu.Unlock()
}

// closed marks res as no longer in flight; closing it twice is harmless.
func (l *ledger) closed(res *Reservation) {
	l.mu.Lock()
	delete(l.open, res)
	l.mu.Unlock()
}

// inWindow reports whether slot is one of the slots of sp's window.
func inWindow(sp state.Spend, slot int64) bool {
	return slot <= sp.Slot && slot > sp.Slot-int64(sp.Slots)
}

// unseen returns, for each spend's window, what the reservations in flight
// at now spent in it. Reservations older than maxOpen are dropped first.
func (l *ledger) unseen(spends []state.Spend, now time.Time) []int64 {
	out := make([]int64, len(spends))
	l.mu.Lock()
	defer l.mu.Unlock()
	for res := range l.open {
		if now.Sub(res.At) >= maxOpen {
			delete(l.open, res)
			continue
		}
		for _, rs := range res.spends {
			for i, sp := range spends {
				if rs.Key == sp.Key && inWindow(sp, rs.Slot) {
					out[i] += rs.Amount
				}
			}
		}
	}
	return out
}

// takeBack takes up to want back from the corrections this Book added to
// sp's window, newest slot first, and returns the adds that do it
// (negative amounts, in the slots the corrections went to). They leave the
// ledger at once, so that two corrections running together cannot take the
// same one back twice; restore puts them back if the store refuses them.
func (l *ledger) takeBack(sp state.Spend, want int64, now time.Time) []state.Spend {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []state.Spend
	for slot := sp.Slot; slot > sp.Slot-int64(sp.Slots) && want > 0; slot-- {
		k := slotRef{sp.Key, slot}
		r, ok := l.raised[k]
		if !ok || r.amount <= 0 || !now.Before(r.expires) {
			continue
		}
		n := min(r.amount, want)
		want -= n
		if r.amount -= n; r.amount == 0 {
			delete(l.raised, k)
		} else {
			l.raised[k] = r
		}
		back := sp
		back.Slot, back.Amount, back.Limit = slot, -n, 0
		out = append(out, back)
	}
	return out
}

// raise records the raises Observe added to the store. Expired entries go
// at the same time.
func (l *ledger) raise(raises []state.Spend, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, r := range l.raised {
		if !now.Before(r.expires) {
			delete(l.raised, k)
		}
	}
	for _, sp := range raises {
		l.addLocked(sp, sp.Amount, now)
	}
}

// restore puts back what takeBack took, when the store did not take it.
func (l *ledger) restore(backs []state.Spend, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, sp := range backs {
		l.addLocked(sp, -sp.Amount, now)
	}
}

// addLocked adds n to the raise of sp's slot. l.mu must be held.
func (l *ledger) addLocked(sp state.Spend, n int64, now time.Time) {
	k := slotRef{sp.Key, sp.Slot}
	r := l.raised[k]
	r.amount += n
	r.expires = later(r.expires, now.Add(sp.TTL))
	l.raised[k] = r
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
