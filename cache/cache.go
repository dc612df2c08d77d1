package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

// Backend stores encoded entries. Implementations are safe for concurrent
// use. Get returns ok false for a missing or expired key; the slice it
// returns must not be modified. Set may keep v; the caller must not modify
// it afterwards. A ttl <= 0 stores v without expiry.
type Backend interface {
	Get(ctx context.Context, k Key) (v []byte, ok bool, err error)
	Set(ctx context.Context, k Key, v []byte, ttl time.Duration) error
}

// TTLGetter is the optional ability of a Backend to say how long an entry
// has left (0 when it never expires). Tiered uses it to promote a slow hit
// into the fast tier for no longer than it lives in the slow one.
type TTLGetter interface {
	GetTTL(ctx context.Context, k Key) (v []byte, ttl time.Duration, ok bool, err error)
}

// DefaultMemoryBytes is the size of the Memory backend New makes when
// Options.Backend is nil, and of NewMemory(0, ...).
const DefaultMemoryBytes = 64 << 20

// Options configures a Cache. The zero value works.
type Options struct {
	// Backend stores the entries. Nil means NewMemory(DefaultMemoryBytes).
	Backend Backend
	// Clock stamps Entry.Created. Nil means clock.Real.
	Clock clock.Clock
	// OnError, when set, is told of every backend failure and every entry
	// that would not decode; the cache treats them as misses and carries on.
	// The errors carry no prompt or answer text. It may be called from
	// several goroutines at once, never with a lock held.
	OnError func(err error)
}

// Cache is the response cache: a Backend of encoded entries and a
// singleflight over misses. It is safe for concurrent use. Close cancels
// the shared calls still running and waits for them.
type Cache struct {
	backend Backend
	clock   clock.Clock
	onError func(error)

	mu    sync.Mutex // guards calls and each call's waiters
	calls map[Key]*call
	wg    sync.WaitGroup // one per running shared call

	joined func() // test hook: called after a Do registered as a waiter
}

// call is one shared call of fn and the waiters on it.
type call struct {
	ctx     context.Context // cancelled only when every waiter has gone
	cancel  context.CancelFunc
	waiters int           // guarded by Cache.mu
	done    chan struct{} // closed once e and err are set
	e       *Entry
	err     error
}

// New returns a Cache over o.Backend.
func New(o Options) *Cache {
	c := &Cache{backend: o.Backend, clock: o.Clock, onError: o.OnError, calls: make(map[Key]*call)}
	if c.clock == nil {
		c.clock = clock.Real{}
	}
	if c.backend == nil {
		c.backend = NewMemory(DefaultMemoryBytes, c.clock)
	}
	return c
}

// ErrNilEntry is returned by Do when fn returned neither an entry nor an
// error.
var ErrNilEntry = errors.New("cache: fn returned a nil entry and no error")

// Get returns the entry stored under k. A backend failure or an entry that
// will not decode is a miss, reported to Options.OnError, never a failure;
// an empty entry (Entry.Empty) is a miss too.
func (c *Cache) Get(ctx context.Context, k Key) (*Entry, bool) {
	b, ok, err := c.backend.Get(ctx, k)
	if err != nil {
		c.report(fmt.Errorf("cache: get %s: %w", k, err))
		return nil, false
	}
	if !ok {
		return nil, false
	}
	e := new(Entry)
	if err := e.UnmarshalBinary(b); err != nil {
		c.report(fmt.Errorf("cache: get %s: %w", k, err))
		return nil, false
	}
	if e.Empty() {
		// Stored before empty answers were refused (a disk cache outlives
		// the process): a miss, so that a route answers.
		return nil, false
	}
	return e, true
}

// Do returns the entry cached under k (hit true), or else the result of fn.
//
// Identical calls in flight at the same moment share one call of fn: the
// first starts it on a context that keeps the first caller's values but is
// cancelled only when every waiter has gone (or Close is called); later
// ones wait for it and report shared true. Each waiter stops waiting when
// its own ctx ends, returning an error that wraps context.Cause(ctx),
// without cancelling the call for the others.
//
// When fn returns a non-empty entry (see Entry.Empty) with cacheable true
// and a nil error, and ttl > 0, the entry is stored for ttl before any
// waiter returns, so a Do that starts after one returned is a hit (a store
// failure goes to OnError). Errors, empty entries, and answers fn calls not
// cacheable (fallbacks, partial answers), are handed to the waiters but
// never stored.
// Every caller gets its own copy of the Entry struct; ToolCalls is shared
// and must not be modified. A panic in fn becomes an error for every waiter.
func (c *Cache) Do(ctx context.Context, k Key, ttl time.Duration, fn func(ctx context.Context) (*Entry, bool, error)) (e *Entry, hit bool, shared bool, err error) {
	if e, ok := c.Get(ctx, k); ok {
		return e, true, false, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, false, false, fmt.Errorf("cache: do: %w", context.Cause(ctx))
	}
	c.mu.Lock()
	cl, shared := c.calls[k]
	if !shared {
		callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		cl = &call{ctx: callCtx, cancel: cancel, done: make(chan struct{})}
		c.calls[k] = cl
		c.wg.Add(1)
		go c.run(cl, k, ttl, fn)
	}
	cl.waiters++
	c.mu.Unlock()
	if c.joined != nil {
		c.joined()
	}

	select {
	case <-cl.done:
		if cl.err != nil {
			return nil, false, shared, cl.err
		}
		cp := *cl.e
		return &cp, false, shared, nil
	case <-ctx.Done():
		c.leave(k, cl)
		return nil, false, shared, fmt.Errorf("cache: wait for shared call: %w", context.Cause(ctx))
	}
}

// leave drops one waiter from cl; the last one out cancels the call and
// takes it out of the flight, so that a later caller starts afresh.
func (c *Cache) leave(k Key, cl *call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl.waiters--
	if cl.waiters > 0 {
		return
	}
	if c.calls[k] == cl {
		delete(c.calls, k)
	}
	cl.cancel()
}

// run calls fn for cl, hands the result to the waiters, stores it if it
// may be, then takes cl out of the flight.
func (c *Cache) run(cl *call, k Key, ttl time.Duration, fn func(context.Context) (*Entry, bool, error)) {
	defer c.wg.Done()
	defer cl.cancel()
	e, cacheable, err := invoke(cl.ctx, fn)
	if err == nil && e == nil {
		err = ErrNilEntry
	}
	if err == nil && e.Created.IsZero() {
		e.Created = c.clock.Now()
	}
	if err == nil && cacheable && ttl > 0 {
		// Stored before the waiters are released, so that a Do that starts
		// after one returns is a hit. The answer is paid for: keep it even if
		// every waiter has gone.
		c.store(context.WithoutCancel(cl.ctx), k, e, ttl)
	}
	c.mu.Lock()
	if c.calls[k] == cl {
		delete(c.calls, k)
	}
	c.mu.Unlock()
	cl.e, cl.err = e, err
	close(cl.done)
}

func invoke(ctx context.Context, fn func(context.Context) (*Entry, bool, error)) (e *Entry, cacheable bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, cacheable, err = nil, false, fmt.Errorf("cache: shared call panicked: %v", r)
		}
	}()
	return fn(ctx)
}

// store encodes e and stores it, unless it is empty: an answer with no
// text and no tool call is a failure, and a cached one would be served
// again for the whole ttl, surviving restarts on disk (issue 10).
func (c *Cache) store(ctx context.Context, k Key, e *Entry, ttl time.Duration) {
	if e.Empty() {
		return
	}
	b, err := e.MarshalBinary()
	if err == nil {
		err = c.backend.Set(ctx, k, b, ttl)
	}
	if err != nil {
		c.report(fmt.Errorf("cache: set %s: %w", k, err))
	}
}

func (c *Cache) report(err error) {
	if c.onError != nil {
		c.onError(err)
	}
}

// Close cancels every shared call still running and waits until their
// goroutines have returned. Waiters on a cancelled call get fn's error. Call
// it at shutdown, once no Do can start any more: it must not run
// concurrently with Do. A Do after Close returns starts a new call.
func (c *Cache) Close() {
	c.mu.Lock()
	for _, cl := range c.calls {
		cl.cancel()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// Set stores e under k for ttl, for answers assembled outside Do (a streamed
// answer that ended cleanly). An empty entry is not stored. Backend errors
// go to OnError.
func (c *Cache) Set(ctx context.Context, k Key, e *Entry, ttl time.Duration) {
	if e == nil || ttl <= 0 {
		return
	}
	c.store(ctx, k, e, ttl)
}
