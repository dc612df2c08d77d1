package quota

import (
	"testing"
	"time"

	"github.com/tollfree/tollfree/state"
)

// TestLedgerCountsWhatIsInFlight: the reservations opened and not closed
// are what unseen sums, whatever order they close in; closing twice is
// harmless, and one open past maxOpen drops out.
func TestLedgerCountsWhatIsInFlight(t *testing.T) {
	l := newLedger()
	win := state.Spend{Key: "m|tpm", Slot: 100, Slots: 13}
	open := func(at time.Time, amount int64) *Reservation {
		res := &Reservation{At: at, Tokens: int(amount), tmpl: &spendTmpl{n: 1, tokens: 1}}
		res.tmpl.spends[0] = state.Spend{Key: "m|tpm", Slot: 100}
		l.opened(res)
		return res
	}
	unseen := func(now time.Time) int64 { return l.unseen([]state.Spend{win}, now)[0] }
	a, b, c, d := open(t0, 1), open(t0, 10), open(t0, 100), open(t0, 1000)
	if got := unseen(t0); got != 1111 {
		t.Fatalf("four in flight: unseen %d, want 1111", got)
	}
	l.closed(b) // in the middle
	l.closed(d) // the newest, the list's head
	l.closed(d) // again: nothing changes
	if got := unseen(t0); got != 101 {
		t.Fatalf("after closing two: unseen %d, want 101", got)
	}
	e := open(t0.Add(maxOpen/2), 10000)
	if got := unseen(t0.Add(maxOpen)); got != 10000 {
		t.Fatalf("at maxOpen after the first: unseen %d, want only the newest, 10000", got)
	}
	l.closed(a) // dropped already: harmless
	l.closed(e)
	if got := unseen(t0.Add(maxOpen)); got != 0 || l.open != nil {
		t.Fatalf("all closed: unseen %d, list head %v; want 0 and empty", got, l.open)
	}
	if a.open || c.open {
		t.Fatalf("dropped reservations still marked open: a %v, c %v", a.open, c.open)
	}
}
