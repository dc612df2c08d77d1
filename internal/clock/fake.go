package clock

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Fake is a Clock that moves only when told to. Timers fire, in order of
// their deadlines, when Advance or Set passes them. It is safe for
// concurrent use.
type Fake struct {
	mu      sync.Mutex // guards now, timers, seq, waiters
	now     time.Time
	timers  []*fakeTimer
	seq     int
	waiters []waiter
}

type waiter struct {
	n  int       // wake when at least n timers are pending, or
	at time.Time // when non-zero, wake when a timer due at at is pending
	ch chan struct{}
}

var _ Clock = (*Fake)(nil)

// NewFake returns a Fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the fake time reaches now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	return f.add(d, nil)
}

// AfterFunc calls fn in its own goroutine when the fake time reaches now+d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	return f.add(d, fn)
}

func (f *Fake) add(d time.Duration, fn func()) *fakeTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	t := &fakeTimer{f: f, at: f.now.Add(d), fn: fn, seq: f.seq}
	if fn == nil {
		t.ch = make(chan time.Time, 1)
	}
	if d <= 0 {
		f.fire(t)
		return t
	}
	f.timers = append(f.timers, t)
	f.notifyLocked()
	return t
}

// fire runs with f.mu held.
func (f *Fake) fire(t *fakeTimer) {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.ch <- f.now:
	default:
	}
}

// Advance moves the fake time forward by d, firing every timer it passes.
func (f *Fake) Advance(d time.Duration) {
	f.Set(f.Now().Add(d))
}

// Set moves the fake time to t (never backwards), firing every timer it passes
// in deadline order; each fires with the clock showing its own deadline.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		sort.SliceStable(f.timers, func(i, j int) bool {
			if f.timers[i].at.Equal(f.timers[j].at) {
				return f.timers[i].seq < f.timers[j].seq
			}
			return f.timers[i].at.Before(f.timers[j].at)
		})
		if len(f.timers) == 0 || f.timers[0].at.After(t) {
			break
		}
		next := f.timers[0]
		f.timers = f.timers[1:]
		if next.at.After(f.now) {
			f.now = next.at
		}
		f.fire(next)
	}
	if t.After(f.now) {
		f.now = t
	}
}

// Waiters returns how many timers are pending.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// BlockUntil waits until at least n timers are pending, or ctx is done. Tests
// call it before Advance so that the code under test has reached its wait.
func (f *Fake) BlockUntil(ctx context.Context, n int) error {
	return f.block(ctx, waiter{n: n})
}

// block waits until w is satisfied (see waiter) or ctx is done.
func (f *Fake) block(ctx context.Context, w waiter) error {
	f.mu.Lock()
	if f.satisfiedLocked(w) {
		f.mu.Unlock()
		return nil
	}
	w.ch = make(chan struct{})
	f.waiters = append(f.waiters, w)
	f.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// satisfiedLocked runs with f.mu held.
func (f *Fake) satisfiedLocked(w waiter) bool {
	if w.at.IsZero() {
		return len(f.timers) >= w.n
	}
	return f.hasTimerLocked(w.at)
}

// notifyLocked runs with f.mu held.
func (f *Fake) notifyLocked() {
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if f.satisfiedLocked(w) {
			close(w.ch)
			continue
		}
		kept = append(kept, w)
	}
	f.waiters = kept
}

type fakeTimer struct {
	f   *Fake
	at  time.Time
	fn  func()
	ch  chan time.Time
	seq int
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	for i, x := range t.f.timers {
		if x == t {
			t.f.timers = append(t.f.timers[:i], t.f.timers[i+1:]...)
			return true
		}
	}
	return false
}

// BlockUntilDeadline waits until a timer due at exactly t is pending, or
// ctx is done. Tests use it to know that the code under test has started
// the wait they mean to end (a chain sleeping until a rest is over), where
// counting timers would be ambiguous.
func (f *Fake) BlockUntilDeadline(ctx context.Context, t time.Time) error {
	return f.block(ctx, waiter{at: t})
}

// hasTimerLocked runs with f.mu held.
func (f *Fake) hasTimerLocked(t time.Time) bool {
	for _, x := range f.timers {
		if x.at.Equal(t) {
			return true
		}
	}
	return false
}
