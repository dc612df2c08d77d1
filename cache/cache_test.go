package cache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tollfree/tollfree/internal/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newTestCache returns a Cache on a Memory and a fake clock, whose joins
// are announced on the returned channel, and closes it when the test ends.
func newTestCache(t *testing.T) (*Cache, *clock.Fake, chan struct{}) {
	t.Helper()
	clk := clock.NewFake(epoch)
	c := New(Options{Backend: NewMemory(1<<20, clk), Clock: clk})
	joins := make(chan struct{}, 100)
	c.joined = func() { joins <- struct{}{} }
	t.Cleanup(c.Close)
	return c, clk, joins
}

func answer(content string) func(context.Context) (*Entry, bool, error) {
	return func(context.Context) (*Entry, bool, error) {
		return &Entry{Route: "groq/m", Content: content, FinishReason: "stop"}, true, nil
	}
}

// TestEmptyAnswersNeverCached (issue 10): an answer with nothing in it
// (blank content, no tool call; reasoning alone is no answer) is handed to
// the caller but never stored, by Do or Set, and one already stored (a disk
// cache written by an older build) is a miss.
func TestEmptyAnswersNeverCached(t *testing.T) {
	ctx := context.Background()
	for _, e := range []Entry{{}, {Content: " \n\t"}, {Reasoning: "thinking", FinishReason: "stop"}} {
		c, _, _ := newTestCache(t)
		k := testKey(1)
		got, _, _, err := c.Do(ctx, k, time.Hour, func(context.Context) (*Entry, bool, error) { x := e; return &x, true, nil })
		if err != nil || got.Content != e.Content {
			t.Fatalf("Do(%+v) = %+v, %v; want the entry handed back", e, got, err)
		}
		if _, hit := c.Get(ctx, k); hit {
			t.Errorf("Do stored the empty entry %+v", e)
		}
		c.Set(ctx, k, &e, time.Hour)
		if _, hit := c.Get(ctx, k); hit {
			t.Errorf("Set stored the empty entry %+v", e)
		}
		b, _ := e.MarshalBinary()
		if err := c.backend.Set(ctx, k, b, time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, hit := c.Get(ctx, k); hit {
			t.Errorf("an empty entry already stored is a hit: %+v", e)
		}
	}
	for _, e := range []Entry{{Content: "ok"}, {ToolCalls: []byte(`[{"id":"1"}]`)}} {
		if e.Empty() {
			t.Errorf("Empty(%+v) = true, want false: it is an answer", e)
		}
	}
}

func TestDoMissThenHit(t *testing.T) {
	c, clk, _ := newTestCache(t)
	ctx := context.Background()
	k := testKey(1)
	var calls int
	fn := func(ctx context.Context) (*Entry, bool, error) {
		calls++
		return answer("first")(ctx)
	}
	e, hit, shared, err := c.Do(ctx, k, time.Hour, fn)
	if err != nil || hit || shared || e.Content != "first" {
		t.Fatalf("first Do = %+v, hit %v, shared %v, err %v; want the answer, a miss", e, hit, shared, err)
	}
	if !e.Created.Equal(epoch) {
		t.Errorf("Created = %v, want the clock's %v", e.Created, epoch)
	}
	clk.Advance(time.Hour - time.Second)
	e, hit, _, err = c.Do(ctx, k, time.Hour, fn)
	if err != nil || !hit || e.Content != "first" {
		t.Errorf("second Do = %+v, hit %v, err %v; want a hit", e, hit, err)
	}
	if calls != 1 {
		t.Errorf("fn ran %d times, want 1", calls)
	}
	clk.Advance(time.Second)
	if _, hit, _, _ = c.Do(ctx, k, time.Hour, fn); hit {
		t.Errorf("Do after the ttl: hit, want a miss")
	}
	if calls != 2 {
		t.Errorf("fn ran %d times, want 2", calls)
	}
}

// blockingFn runs until release is closed, then answers; it reports its
// start on started and its ctx's end on cancelled.
type blockingFn struct {
	calls     atomic.Int32
	started   chan struct{}
	release   chan struct{}
	cancelled chan struct{}
}

func newBlockingFn() *blockingFn {
	return &blockingFn{started: make(chan struct{}, 10), release: make(chan struct{}), cancelled: make(chan struct{}, 10)}
}

func (b *blockingFn) fn(ctx context.Context) (*Entry, bool, error) {
	b.calls.Add(1)
	b.started <- struct{}{}
	select {
	case <-b.release:
		return &Entry{Route: "groq/m", Content: "shared answer"}, true, nil
	case <-ctx.Done():
		b.cancelled <- struct{}{}
		return nil, false, ctx.Err()
	}
}

type result struct {
	e           *Entry
	hit, shared bool
	err         error
}

func goDo(c *Cache, ctx context.Context, k Key, fn func(context.Context) (*Entry, bool, error)) <-chan result {
	ch := make(chan result, 1)
	go func() {
		e, hit, shared, err := c.Do(ctx, k, time.Hour, fn)
		ch <- result{e, hit, shared, err}
	}()
	return ch
}

func waitJoins(t *testing.T, joins <-chan struct{}, n int) {
	t.Helper()
	for range n {
		<-joins
	}
}

func TestDoCollapsesConcurrentCalls(t *testing.T) {
	c, _, joins := newTestCache(t)
	b := newBlockingFn()
	const n = 10
	var results []<-chan result
	for range n {
		results = append(results, goDo(c, context.Background(), testKey(1), b.fn))
	}
	waitJoins(t, joins, n)
	close(b.release)

	leaders := 0
	for i, ch := range results {
		r := <-ch
		if r.err != nil || r.hit || r.e == nil || r.e.Content != "shared answer" {
			t.Errorf("caller %d: got %+v, want the shared answer without error", i, r)
			continue
		}
		if !r.shared {
			leaders++
		}
	}
	if got := b.calls.Load(); got != 1 {
		t.Errorf("fn ran %d times, want 1", got)
	}
	if leaders != 1 {
		t.Errorf("%d callers reported shared false, want 1 (the one that started the call)", leaders)
	}
	if _, ok := c.Get(context.Background(), testKey(1)); !ok {
		t.Errorf("the shared answer was not stored")
	}
}

func TestDoOneWaiterCancels(t *testing.T) {
	c, _, joins := newTestCache(t)
	b := newBlockingFn()
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	a := goDo(c, ctxA, testKey(1), b.fn) // a starts the call
	<-b.started
	others := []<-chan result{goDo(c, context.Background(), testKey(1), b.fn), goDo(c, context.Background(), testKey(1), b.fn)}
	waitJoins(t, joins, 3)

	cancelA()
	r := <-a
	if !errors.Is(r.err, context.Canceled) || r.e != nil {
		t.Errorf("cancelled waiter: got %+v, want a nil entry and context.Canceled", r)
	}
	select {
	case <-b.cancelled:
		t.Fatalf("the shared call was cancelled when one of three waiters left")
	default:
	}
	close(b.release)
	for i, ch := range others {
		if r := <-ch; r.err != nil || r.e == nil || r.e.Content != "shared answer" || !r.shared {
			t.Errorf("waiter %d: got %+v, want the shared answer", i, r)
		}
	}
	if got := b.calls.Load(); got != 1 {
		t.Errorf("fn ran %d times, want 1", got)
	}
}

func TestDoAllWaitersCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	c, _, joins := newTestCache(t)
	b := newBlockingFn()
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	r1 := goDo(c, ctx1, testKey(1), b.fn)
	r2 := goDo(c, ctx2, testKey(1), b.fn)
	waitJoins(t, joins, 2)

	cancel1()
	if r := <-r1; !errors.Is(r.err, context.Canceled) {
		t.Errorf("waiter 1: err = %v, want context.Canceled", r.err)
	}
	cancel2()
	if r := <-r2; !errors.Is(r.err, context.Canceled) {
		t.Errorf("waiter 2: err = %v, want context.Canceled", r.err)
	}
	<-b.cancelled // the shared call saw its ctx end
	c.Close()     // and its goroutine is gone

	// A later caller starts a new call rather than joining the dead one.
	b2 := newBlockingFn()
	close(b2.release)
	if e, _, shared, err := c.Do(context.Background(), testKey(1), time.Hour, b2.fn); err != nil || e == nil || shared {
		t.Errorf("Do after all waiters left = %+v, shared %v, err %v; want a fresh answer", e, shared, err)
	}
	if _, ok := c.Get(context.Background(), testKey(1)); !ok {
		t.Errorf("the fresh answer was not stored")
	}
}

func TestDoWaiterDeadlineOnFakeClock(t *testing.T) {
	c, clk, joins := newTestCache(t)
	b := newBlockingFn()
	ctx, cancel := clock.WithTimeout(context.Background(), clk, 5*time.Second)
	defer cancel()
	r := goDo(c, ctx, testKey(1), b.fn)
	waitJoins(t, joins, 1)
	clk.Advance(5 * time.Second)
	if got := <-r; !errors.Is(got.err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want one wrapping context.DeadlineExceeded", got.err)
	}
	<-b.cancelled
}

func TestDoDoesNotStore(t *testing.T) {
	boom := errors.New("all routes resting")
	tests := []struct {
		name    string
		ttl     time.Duration
		fn      func(context.Context) (*Entry, bool, error)
		wantErr error // nil: want the entry back
	}{
		{"error", time.Hour, func(context.Context) (*Entry, bool, error) { return nil, false, boom }, boom},
		{"error with entry", time.Hour, func(context.Context) (*Entry, bool, error) { return &Entry{Content: "partial"}, true, boom }, boom},
		{"fallback", time.Hour, func(context.Context) (*Entry, bool, error) { return &Entry{Content: "search results"}, false, nil }, nil},
		{"ttl zero", 0, answer("fine"), nil},
		{"nil entry", time.Hour, func(context.Context) (*Entry, bool, error) { return nil, true, nil }, ErrNilEntry},
		{"panic", time.Hour, func(context.Context) (*Entry, bool, error) { panic("adapter bug") }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, _ := newTestCache(t)
			e, _, _, err := c.Do(context.Background(), testKey(1), tt.ttl, tt.fn)
			switch {
			case tt.name == "panic":
				if err == nil || e != nil {
					t.Errorf("Do = %+v, %v; want an error for the panic", e, err)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) || e != nil {
					t.Errorf("Do = %+v, %v; want nil, %v", e, err, tt.wantErr)
				}
			case err != nil || e == nil:
				t.Errorf("Do = %+v, %v; want the entry", e, err)
			}
			if _, ok := c.Get(context.Background(), testKey(1)); ok {
				t.Errorf("the result was stored, want nothing stored")
			}
		})
	}
}

// failingBackend fails every call.
type failingBackend struct{ err error }

func (f failingBackend) Get(context.Context, Key) ([]byte, bool, error) { return nil, false, f.err }
func (f failingBackend) Set(context.Context, Key, []byte, time.Duration) error {
	return f.err
}

func TestBackendErrorsAreMisses(t *testing.T) {
	boom := errors.New("redis: connection refused")
	var mu sync.Mutex
	var reported []error
	c := New(Options{Backend: failingBackend{boom}, Clock: clock.NewFake(epoch), OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	}})
	defer c.Close()
	e, hit, _, err := c.Do(context.Background(), testKey(1), time.Hour, answer("still answers"))
	if err != nil || hit || e == nil || e.Content != "still answers" {
		t.Fatalf("Do on a failing backend = %+v, hit %v, err %v; want fn's answer", e, hit, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 2 {
		t.Fatalf("OnError got %d errors, want 2 (get and set)", len(reported))
	}
	for _, err := range reported {
		if !errors.Is(err, boom) {
			t.Errorf("reported %v, want it to wrap %v", err, boom)
		}
	}
}

func TestCorruptEntryIsMiss(t *testing.T) {
	m := NewMemory(1<<20, clock.NewFake(epoch))
	var reported atomic.Int32
	c := New(Options{Backend: m, OnError: func(error) { reported.Add(1) }})
	mustSet(t, m, testKey(1), []byte{99, 1, 2, 3}, time.Hour)
	if _, ok := c.Get(context.Background(), testKey(1)); ok {
		t.Errorf("Get of a corrupt entry: hit, want a miss")
	}
	if reported.Load() != 1 {
		t.Errorf("OnError calls = %d, want 1", reported.Load())
	}
}

func TestDoCallersGetCopies(t *testing.T) {
	c, _, joins := newTestCache(t)
	b := newBlockingFn()
	r1 := goDo(c, context.Background(), testKey(1), b.fn)
	r2 := goDo(c, context.Background(), testKey(1), b.fn)
	waitJoins(t, joins, 2)
	close(b.release)
	e1, e2 := (<-r1).e, (<-r2).e
	e1.Content = "changed by caller 1"
	if e2.Content != "shared answer" {
		t.Errorf("caller 2 saw caller 1's change: %q", e2.Content)
	}
}
