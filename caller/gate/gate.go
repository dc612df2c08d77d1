// Package gate caps the requests the gateway works on at once, every
// caller and chain together (issue 12: "a burst queues briefly (bounded)
// or is refused cleanly, instead of piling onto the providers"). Past the
// cap a request waits its turn in a queue, first come first served, for at
// most a set time; when the queue is full, or the wait is over, it is
// refused at once with ErrBusy, which the server answers 503 with
// Retry-After.
//
// The owner (issue 12: "an owner who always gets through") enters with
// EnterAhead: it waits ahead of every other request and a full queue does
// not turn it away, so a crowd of visitors cannot keep it out; it still
// waits for a turn, so it cannot push the gateway past its cap either.
//
// The cap is per instance: it guards this process's connections and the
// providers from one instance's burst. Limits that every instance must
// agree on (requests per caller, the site's day) are counted in the shared
// Store by package quota.
package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

// The defaults of Options, as config's server.max_requests, queue_length
// and queue_wait.
const (
	DefaultMax   = 64
	DefaultQueue = 64
	DefaultWait  = 2 * time.Second
)

// ErrBusy is wrapped by Enter's error when the gateway is at its cap and
// the request cannot wait: the queue is full, or the wait ran out.
var ErrBusy = errors.New("the gateway is busy")

// Options configure a Gate. Zero fields take the defaults.
type Options struct {
	// Max is how many requests may be in at once. Default DefaultMax.
	Max int
	// Queue is how many more may wait for a turn. Default DefaultQueue.
	Queue int
	// Wait is the longest a request waits. Default DefaultWait.
	Wait time.Duration
	// Clock times the wait. Default clock.Real.
	Clock clock.Clock
}

// Gate admits at most Max requests at once. It is safe for concurrent use.
type Gate struct {
	max, queue int
	wait       time.Duration
	clock      clock.Clock

	mu       sync.Mutex // guards inFlight, waiters and ahead
	inFlight int
	waiters  []*waiter // those entered ahead first, each group in arrival order
	ahead    int       // how many of waiters entered ahead
}

// waiter is one request waiting for a turn. ready is closed, and granted
// set under Gate.mu, when a leaving request hands it its turn.
type waiter struct {
	ready   chan struct{}
	granted bool
	ahead   bool
}

// New returns a Gate.
func New(o Options) *Gate {
	if o.Max <= 0 {
		o.Max = DefaultMax
	}
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	return &Gate{max: o.Max, queue: o.Queue, wait: o.Wait, clock: o.Clock}
}

// Enter waits for a turn and returns the function that ends it; call it
// once the request is over (calling it again does nothing). It returns an
// error wrapping ErrBusy when the queue is full or the wait ran out, and
// ctx's error when ctx ends first (a caller that went away).
func (g *Gate) Enter(ctx context.Context) (leave func(), err error) {
	return g.enter(ctx, false)
}

// EnterAhead is Enter for the owner: it waits ahead of every request that
// came by Enter (behind those that came by EnterAhead before it), and is
// never refused for a full queue, only when its wait runs out.
func (g *Gate) EnterAhead(ctx context.Context) (leave func(), err error) {
	return g.enter(ctx, true)
}

func (g *Gate) enter(ctx context.Context, ahead bool) (leave func(), err error) {
	g.mu.Lock()
	if g.inFlight < g.max && len(g.waiters) == 0 {
		g.inFlight++
		g.mu.Unlock()
		return g.leaver(), nil
	}
	if !ahead && len(g.waiters)-g.ahead >= g.queue {
		in, waiting := g.inFlight, len(g.waiters)
		g.mu.Unlock()
		return nil, fmt.Errorf("gate: %d requests in and %d waiting: %w", in, waiting, ErrBusy)
	}
	w := &waiter{ready: make(chan struct{}), ahead: ahead}
	if ahead {
		g.waiters = slices.Insert(g.waiters, g.ahead, w)
		g.ahead++
	} else {
		g.waiters = append(g.waiters, w)
	}
	g.mu.Unlock()

	t := g.clock.NewTimer(g.wait)
	defer t.Stop()
	select {
	case <-w.ready:
		return g.leaver(), nil
	case <-t.C():
		err = fmt.Errorf("gate: waited %s for a turn: %w", g.wait, ErrBusy)
	case <-ctx.Done():
		err = ctx.Err()
	}
	g.mu.Lock()
	if w.granted {
		// The turn came as the wait ended: it is this request's to end.
		g.mu.Unlock()
		if ctx.Err() != nil {
			g.leave()
			return nil, ctx.Err()
		}
		return g.leaver(), nil
	}
	if i := slices.Index(g.waiters, w); i >= 0 {
		g.waiters = slices.Delete(g.waiters, i, i+1)
		if w.ahead {
			g.ahead--
		}
	}
	g.mu.Unlock()
	return nil, err
}

// leaver returns a function that ends one turn, once.
func (g *Gate) leaver() func() {
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			g.leave()
		}
	}
}

// leave ends a turn: the first waiter takes it over, or the count drops.
func (g *Gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiters) > 0 {
		w := g.waiters[0]
		g.waiters[0] = nil
		g.waiters = g.waiters[1:]
		if w.ahead {
			g.ahead--
		}
		w.granted = true
		close(w.ready)
		return
	}
	g.inFlight--
}

// Load returns how many requests are in and how many wait, for metrics and
// the status page.
func (g *Gate) Load() (in, waiting int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight, len(g.waiters)
}
