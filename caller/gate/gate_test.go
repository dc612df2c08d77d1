package gate

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// entry is the result of an Enter run in its own goroutine.
type entry struct {
	leave func()
	err   error
}

// enterAsync runs Enter in a goroutine and returns its result channel.
func enterAsync(ctx context.Context, g *Gate) <-chan entry {
	ch := make(chan entry, 1)
	go func() {
		leave, err := g.Enter(ctx)
		ch <- entry{leave, err}
	}()
	return ch
}

func mustEnter(t *testing.T, g *Gate) func() {
	t.Helper()
	leave, err := g.Enter(context.Background())
	if err != nil {
		t.Fatalf("Enter: %v", err)
	}
	return leave
}

// waitFor waits until n requests wait in g's queue (each has started its
// timer on clk).
func waitFor(t *testing.T, clk *clock.Fake, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clk.BlockUntil(ctx, n); err != nil {
		t.Fatalf("waiting for %d queued requests: %v", n, err)
	}
}

func recv(t *testing.T, ch <-chan entry) entry {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(10 * time.Second): // a bound on a goroutine, not a clock
		t.Fatal("Enter did not return")
		return entry{}
	}
}

// TestGateQueues: past the cap a request waits for a turn, first come
// first served; past the queue it is refused at once.
func TestGateQueues(t *testing.T) {
	clk := clock.NewFake(t0)
	g := New(Options{Max: 2, Queue: 2, Wait: 2 * time.Second, Clock: clk})
	leave1 := mustEnter(t, g)
	leave2 := mustEnter(t, g)
	third := enterAsync(context.Background(), g)
	waitFor(t, clk, 1)
	fourth := enterAsync(context.Background(), g)
	waitFor(t, clk, 2)
	if _, err := g.Enter(context.Background()); !errors.Is(err, ErrBusy) {
		t.Fatalf("fifth with the queue full: %v, want ErrBusy at once", err)
	}
	if in, waiting := g.Load(); in != 2 || waiting != 2 {
		t.Errorf("load = %d in, %d waiting; want 2, 2", in, waiting)
	}
	leave1()
	leave1() // twice: one turn ended
	e := recv(t, third)
	if e.err != nil {
		t.Fatalf("third after a turn ended: %v", e.err)
	}
	select {
	case <-fourth:
		t.Fatal("fourth got a turn that was not free")
	default:
	}
	leave2()
	if e := recv(t, fourth); e.err != nil {
		t.Fatalf("fourth: %v", e.err)
	} else {
		e.leave()
	}
	e.leave()
	if in, waiting := g.Load(); in != 0 || waiting != 0 {
		t.Errorf("load after every request left = %d in, %d waiting", in, waiting)
	}
}

// TestGateWaitRunsOut: a request that waited its whole wait is refused,
// and leaves the queue.
func TestGateWaitRunsOut(t *testing.T) {
	clk := clock.NewFake(t0)
	g := New(Options{Max: 1, Queue: 1, Wait: 2 * time.Second, Clock: clk})
	leave := mustEnter(t, g)
	second := enterAsync(context.Background(), g)
	waitFor(t, clk, 1)
	clk.Advance(time.Second)
	select {
	case <-second:
		t.Fatal("refused before its wait ran out")
	default:
	}
	clk.Advance(time.Second)
	if e := recv(t, second); !errors.Is(e.err, ErrBusy) {
		t.Fatalf("after 2s: %v, want ErrBusy", e.err)
	}
	if in, waiting := g.Load(); in != 1 || waiting != 0 {
		t.Errorf("load = %d in, %d waiting; want 1, 0", in, waiting)
	}
	leave()
	mustEnter(t, g)()
}

// TestGateCallerGone: a caller that goes away while waiting leaves the
// queue with its context's error, not ErrBusy.
func TestGateCallerGone(t *testing.T) {
	clk := clock.NewFake(t0)
	g := New(Options{Max: 1, Queue: 1, Clock: clk})
	leave := mustEnter(t, g)
	ctx, cancel := context.WithCancel(context.Background())
	second := enterAsync(ctx, g)
	waitFor(t, clk, 1)
	cancel()
	if e := recv(t, second); !errors.Is(e.err, context.Canceled) || errors.Is(e.err, ErrBusy) {
		t.Fatalf("cancelled while waiting: %v, want context.Canceled", e.err)
	}
	if _, waiting := g.Load(); waiting != 0 {
		t.Errorf("%d still waiting", waiting)
	}
	leave()
	if in, _ := g.Load(); in != 0 {
		t.Errorf("%d in after every request left", in)
	}
}

// TestGateNeverOverCap: many requests at once never have more than Max in.
func TestGateNeverOverCap(t *testing.T) {
	const max = 3
	g := New(Options{Max: max, Queue: 1000, Wait: time.Hour, Clock: clock.NewFake(t0)})
	var in, peak atomic.Int32
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			leave, err := g.Enter(context.Background())
			if err != nil {
				t.Errorf("Enter: %v", err)
				return
			}
			n := in.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			in.Add(-1)
			leave()
		})
	}
	wg.Wait()
	if p := peak.Load(); p > max {
		t.Errorf("peak in = %d, want at most %d", p, max)
	}
	if n, waiting := g.Load(); n != 0 || waiting != 0 {
		t.Errorf("load after all = %d in, %d waiting", n, waiting)
	}
}

func TestGateDefaults(t *testing.T) {
	g := New(Options{})
	if g.max != DefaultMax || g.queue != DefaultQueue || g.wait != DefaultWait {
		t.Errorf("defaults = %d, %d, %s", g.max, g.queue, g.wait)
	}
}

// TestGateOwnerAhead: the owner waits ahead of the visitors already
// queued, and is not refused for a full queue.
func TestGateOwnerAhead(t *testing.T) {
	clk := clock.NewFake(t0)
	g := New(Options{Max: 1, Queue: 1, Wait: 2 * time.Second, Clock: clk})
	leave := mustEnter(t, g)
	visitor := enterAsync(context.Background(), g)
	waitFor(t, clk, 1)
	if _, err := g.Enter(context.Background()); !errors.Is(err, ErrBusy) {
		t.Fatalf("a visitor with the queue full: %v, want ErrBusy", err)
	}
	owner := make(chan entry, 1)
	go func() {
		leave, err := g.EnterAhead(context.Background())
		owner <- entry{leave, err}
	}()
	waitFor(t, clk, 2)
	if in, waiting := g.Load(); in != 1 || waiting != 2 {
		t.Errorf("load = %d in, %d waiting; want 1, 2", in, waiting)
	}
	leave()
	o := recv(t, owner)
	if o.err != nil {
		t.Fatalf("the owner: %v", o.err)
	}
	select {
	case <-visitor:
		t.Fatal("the visitor got the turn the owner was waiting for")
	default:
	}
	o.leave()
	v := recv(t, visitor)
	if v.err != nil {
		t.Fatalf("the visitor after the owner: %v", v.err)
	}
	v.leave()
	if in, waiting := g.Load(); in != 0 || waiting != 0 || g.ahead != 0 {
		t.Errorf("load after every request left = %d in, %d waiting, %d ahead", in, waiting, g.ahead)
	}
}

// TestGateOwnerWaitRunsOut: an owner whose wait ran out leaves the queue
// and its place ahead.
func TestGateOwnerWaitRunsOut(t *testing.T) {
	clk := clock.NewFake(t0)
	g := New(Options{Max: 1, Queue: 1, Wait: 2 * time.Second, Clock: clk})
	leave := mustEnter(t, g)
	owner := make(chan entry, 1)
	go func() {
		leave, err := g.EnterAhead(context.Background())
		owner <- entry{leave, err}
	}()
	waitFor(t, clk, 1)
	clk.Advance(2 * time.Second)
	if o := recv(t, owner); !errors.Is(o.err, ErrBusy) {
		t.Fatalf("the owner after its wait: %v, want ErrBusy", o.err)
	}
	if _, waiting := g.Load(); waiting != 0 || g.ahead != 0 {
		t.Errorf("%d waiting, %d ahead after the owner left", waiting, g.ahead)
	}
	leave()
}
