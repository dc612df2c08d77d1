// Package clock owns time for everything in tollfree that waits or measures:
// attempt deadlines, hedge delays, rests, quota windows and the emulator's
// latencies. Code takes a Clock instead of calling the time package, so tests
// drive time with a Fake and never sleep (docs/STYLE.md: "Time comes from
// an injected clock").
package clock

import (
	"context"
	"time"
)

// Clock tells the time and schedules work. Real and *Fake implement it; both
// are safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that sends the time on C after d.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a time.Timer that a Fake can fire.
type Timer interface {
	// C is nil for timers made by AfterFunc.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// Real is the wall clock.
type Real struct{}

var _ Clock = Real{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{t: time.NewTimer(d)} }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{t: time.AfterFunc(d, f)}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

// Sleep waits for d on c, or until ctx is done, whichever comes first. It
// returns ctx.Err() when ctx ended the wait.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// WithTimeout is context.WithTimeout on c: the returned context is cancelled
// with context.DeadlineExceeded as its cause once d has passed on c. A Fake
// clock therefore expires deadlines when a test advances it.
func WithTimeout(ctx context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := c.(Real); ok {
		return context.WithTimeout(ctx, d)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	t := c.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	return ctx, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}

// Expired reports whether ctx ended because its deadline passed, on either
// clock (context.WithTimeout or WithTimeout above).
func Expired(ctx context.Context) bool {
	return ctx.Err() != nil && (context.Cause(ctx) == context.DeadlineExceeded || ctx.Err() == context.DeadlineExceeded)
}
