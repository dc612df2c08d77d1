package clock

import (
	"context"
	"time"
)

// Paced is a virtual clock for running real servers faster than the wall
// clock (`tollfree demo -speed 600`) without multiplying the machine's own
// time. Unlike Scaled, which is the wall clock times Speed, a Paced clock
// moves only while the code it times is waiting: its owner says, through
// busy, when some work is running (a request being parsed, an answer on
// its way over loopback), and the clock stands still until it is done. So
// the delays a component measures are the ones other components waited on
// the clock (an emulated provider's latency), never the scheduler's jitter
// times 600.
//
// Run moves it: Speed virtual seconds per real second while idle, each
// timer firing exactly at its deadline. A busy that stays true longer than
// maxHold of real time (a wait the owner did not account for) lets time
// run anyway, so a mistake slows the clock rather than freezing it.
type Paced struct {
	f     *Fake
	speed float64
	busy  func() bool
}

var _ Clock = (*Paced)(nil)

// Pacing: how often Run looks, how long it lets the woken code start its
// work after a timer fired, and how long a busy spell may stop time.
const (
	pacedTick    = 500 * time.Microsecond
	pacedSettle  = 2 * time.Millisecond
	pacedMaxHold = 200 * time.Millisecond
)

// NewPaced returns a clock showing start that, once Run, moves speed
// times faster than the wall clock whenever busy (nil: never) reports no
// work running. A speed of zero or less means 1.
func NewPaced(start time.Time, speed float64, busy func() bool) *Paced {
	if speed <= 0 {
		speed = 1
	}
	if busy == nil {
		busy = func() bool { return false }
	}
	return &Paced{f: NewFake(start), speed: speed, busy: busy}
}

// Speed returns the number of virtual seconds per idle real second.
func (p *Paced) Speed() float64 { return p.speed }

// Now returns the virtual time.
func (p *Paced) Now() time.Time { return p.f.Now() }

// NewTimer returns a timer that fires once the virtual time reaches now+d.
func (p *Paced) NewTimer(d time.Duration) Timer { return p.f.NewTimer(d) }

// AfterFunc calls f in its own goroutine once the virtual time reaches
// now+d.
func (p *Paced) AfterFunc(d time.Duration, f func()) Timer { return p.f.AfterFunc(d, f) }

// Run moves the clock until ctx ends.
func (p *Paced) Run(ctx context.Context) {
	tick := time.NewTicker(pacedTick)
	defer tick.Stop()
	last := time.Now()
	var held time.Duration
	var quietUntil time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			elapsed := now.Sub(last)
			last = now
			if now.Before(quietUntil) {
				continue
			}
			if p.busy() {
				if held += elapsed; held < pacedMaxHold {
					continue
				}
			} else {
				held = 0
			}
			if p.step(elapsed) {
				quietUntil = now.Add(pacedSettle)
			}
		}
	}
}

// step moves the clock by elapsed real time, stopping at the first timer
// due on the way; it reports whether a timer fired.
func (p *Paced) step(elapsed time.Duration) bool {
	target := p.f.Now().Add(time.Duration(float64(elapsed) * p.speed))
	if next, ok := p.f.Next(); ok && !next.After(target) {
		p.f.Set(next)
		return true
	}
	p.f.Set(target)
	return false
}
