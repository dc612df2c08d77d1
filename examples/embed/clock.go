package main

import (
	"time"

	"github.com/tollfree/tollfree"
)

// wallClock is the wall clock written against tollfree.Clock, passed in
// Options.Clock. Nil would do the same; it is here to show that a program
// outside the module can implement the clock every deadline, rest and
// budget window is measured on, so that its own tests can pass a fake one
// and advance time instead of sleeping.
type wallClock struct{}

var _ tollfree.Clock = wallClock{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) NewTimer(d time.Duration) tollfree.Timer { return timer{time.NewTimer(d)} }

func (wallClock) AfterFunc(d time.Duration, f func()) tollfree.Timer {
	return timer{time.AfterFunc(d, f)}
}

// timer is a *time.Timer as a tollfree.Timer.
type timer struct{ t *time.Timer }

func (t timer) C() <-chan time.Time { return t.t.C }
func (t timer) Stop() bool          { return t.t.Stop() }
