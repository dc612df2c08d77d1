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
	mu sync.Mutex // guards the list of open reservations, and raised
	// open is the newest of the reservations made and not yet settled,
	// linked through their prev and next: a reservation is opened and
	// closed on every attempt, and linking it in and out costs a few
	// pointer writes where a map cost a hash and a probe each (issue 18,
	// item 2). Only unseen walks the list, on a response with headers.
	open *Reservation
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
	return ledger{raised: make(map[slotRef]raise)}
}

// opened marks res as in flight. It is called before the store counts res,
// so that a correction running meanwhile errs on the high side.
func (l *ledger) opened(res *Reservation) {
	l.mu.Lock()
	res.prev, res.next, res.open = nil, l.open, true
	if l.open != nil {
		l.open.prev = res
	}
	l.open = res
	l.mu.Unlock()
}

// closed marks res as no longer in flight; closing it twice is harmless.
func (l *ledger) closed(res *Reservation) {
	l.mu.Lock()
	l.unlinkLocked(res)
	l.mu.Unlock()
}

// unlinkLocked takes res out of the list of open reservations, if it is
// there. l.mu must be held.
func (l *ledger) unlinkLocked(res *Reservation) {
	if !res.open {
		return
	}
	if res.prev != nil {
		res.prev.next = res.next
	} else {
		l.open = res.next
	}
	if res.next != nil {
		res.next.prev = res.prev
	}
	res.prev, res.next, res.open = nil, nil, false
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
	for res := l.open; res != nil; {
		next := res.next
		if now.Sub(res.At) >= maxOpen {
			l.unlinkLocked(res)
			res = next
			continue
		}
		for j := range res.nSpends() {
			rs := res.spend(j)
			for i, sp := range spends {
				if rs.Key == sp.Key && inWindow(sp, rs.Slot) {
					out[i] += rs.Amount
				}
			}
		}
		res = next
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
