package clock

import (
	"context"
	"testing"
	"time"
)

func TestScaledReal(t *testing.T) {
	for _, tc := range []struct {
		speed float64
		d     time.Duration
		want  time.Duration
	}{
		{1, time.Second, time.Second},
		{600, 10 * time.Minute, time.Second},
		{0, time.Second, time.Second}, // zero means 1
		{-5, time.Second, time.Second},
		{1000, 3 * time.Second, 3 * time.Millisecond},
	} {
		c := NewScaled(time.Unix(0, 0), tc.speed)
		if got := c.Real(tc.d); got != tc.want {
			t.Errorf("NewScaled(speed %g).Real(%s) = %s, want %s", tc.speed, tc.d, got, tc.want)
		}
	}
}

// TestScaledRuns: a clock at x1000 shows a virtual minute pass in well under
// a real second, and its timers and deadlines fire on virtual time. It uses
// the wall clock, so it waits with a real deadline.
func TestScaledRuns(t *testing.T) {
	start := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
	c := NewScaled(start, 1000)
	realStart := time.Now()
	tm := c.NewTimer(time.Minute)
	select {
	case at := <-tm.C():
		if at.Before(start.Add(time.Minute)) {
			t.Errorf("timer fired showing %s, want at least %s", at, start.Add(time.Minute))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a virtual minute at x1000 did not pass within 10 real seconds")
	}
	if el := time.Since(realStart); el < 50*time.Millisecond {
		t.Errorf("a virtual minute at x1000 took %s of real time, want at least 60ms", el)
	}
	if got := c.Now(); got.Before(start.Add(time.Minute)) {
		t.Errorf("Now() = %s after the timer, want at least %s", got, start.Add(time.Minute))
	}
	fired := make(chan struct{})
	c.AfterFunc(30*time.Second, func() { close(fired) })
	ctx, cancel := WithTimeout(context.Background(), c, 20*time.Second)
	defer cancel()
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterFunc(30s) at x1000 did not run within 10 real seconds")
	}
	<-ctx.Done()
	if !Expired(ctx) {
		t.Errorf("WithTimeout on a Scaled clock ended with %v, want its deadline", context.Cause(ctx))
	}
	if tm := c.NewTimer(time.Hour); !tm.Stop() {
		t.Error("Stop on a pending timer = false, want true")
	}
}
