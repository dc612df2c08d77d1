package clock

import (
	"time"
)

// Scaled is a wall clock sped up by a factor: Speed virtual seconds pass per
// real second, counted from the moment it was made, and timers fire after
// their virtual duration divided by Speed. `tollfree demo -speed 600` runs
// the emulator and the gateway on one so that a day's quotas, rests and
// resets play out in minutes (issue 7). It is safe for concurrent use.
type Scaled struct {
	start time.Time // virtual time at realStart
	real  time.Time // when the clock was made, with its monotonic reading
	speed float64
}

var _ Clock = (*Scaled)(nil)

// NewScaled returns a clock that shows start now and then runs speed times
// faster than the wall clock. A speed of zero or less means 1.
func NewScaled(start time.Time, speed float64) *Scaled {
	if speed <= 0 {
		speed = 1
	}
	return &Scaled{start: start, real: time.Now(), speed: speed}
}

// Speed returns the number of virtual seconds per real second.
func (s *Scaled) Speed() float64 { return s.speed }

// Now returns the virtual time.
func (s *Scaled) Now() time.Time {
	return s.start.Add(time.Duration(float64(time.Since(s.real)) * s.speed))
}

// Real returns how long a virtual duration d lasts on the wall clock.
func (s *Scaled) Real(d time.Duration) time.Duration {
	return time.Duration(float64(d) / s.speed)
}

// NewTimer returns a timer that fires after the virtual duration d. Its
// channel carries the virtual time.
func (s *Scaled) NewTimer(d time.Duration) Timer {
	t := &scaledTimer{ch: make(chan time.Time, 1)}
	t.t = time.AfterFunc(s.Real(d), func() {
		select {
		case t.ch <- s.Now():
		default:
		}
	})
	return t
}

// AfterFunc calls f in its own goroutine after the virtual duration d.
func (s *Scaled) AfterFunc(d time.Duration, f func()) Timer {
	return &scaledTimer{t: time.AfterFunc(s.Real(d), f)}
}

type scaledTimer struct {
	t  *time.Timer
	ch chan time.Time // nil for AfterFunc timers
}

func (t *scaledTimer) C() <-chan time.Time { return t.ch }
func (t *scaledTimer) Stop() bool          { return t.t.Stop() }
