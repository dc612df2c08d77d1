package redisstore

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/tollfree/tollfree/state"
)

// Adds made after an answer (a reservation settled with the usage
// reported, a request in flight given back, a header's correction) are not
// waited for by anyone: AddLater queues them, and one goroutine applies
// what is queued in one script, merging the adds to the same slot. While a
// batch is on its way to Redis the next one gathers, so under load a batch
// carries many requests' adds for one round trip, and alone a request's
// adds go at once (no timer to wait out). A spend takes what is queued
// along, in the same round trip (a pipeline of the two scripts, the adds
// first), so that it counts them. A batch Redis cannot take is applied as
// Add applies it when Redis is away: to Local, pending, pushed when Redis
// returns; one whose reply timed out may have been applied by Redis too,
// and is then counted twice, as a timed-out Spend is. Close applies what
// is left. Flush waits for what was queued before it.
//
// A batch on its way (taken, not yet applied) may hold a give-back (a
// negative add: a request in flight released, tokens settled lower) that
// a spend after it needs: a caller allowed one request at a time asks
// again as soon as its answer came. So a spend whose window would not pass
// by the view (view.go) waits for the batches taken before it that give
// back to its counters; far from its limits, it never waits.

// maxBatch is how many merged adds one script applies at most.
const maxBatch = 256

// laterQueue is the adds waiting to be applied. Whoever applies some (the
// flusher, Flush, a Spend that carries them) takes them all at once as a
// batch with a number, and marks it done once applied; Flush waits for the
// batches taken before it.
type laterQueue struct {
	mu     sync.Mutex // guards every field but kick
	done   sync.Cond  // on mu: a batch was applied
	items  []state.Spend
	closed bool   // Close began: AddLater applies at once
	seq    uint64 // batches taken so far
	// open holds the batches taken and not yet applied, each with the
	// keys it gives back to (negative adds), nil for none.
	open map[uint64]map[string]struct{}
	kick chan struct{} // tells the flusher there is work; capacity 1
	// onWait, set by tests only, is called when a spend starts waiting
	// for a give-back on its way.
	onWait func()
}

func (q *laterQueue) init() {
	q.done.L = &q.mu
	q.open = make(map[uint64]map[string]struct{})
	q.kick = make(chan struct{}, 1)
}

// take takes what is queued as a batch (nil if nothing is), and returns its
// number, and the number of the last batch taken so far (its own
// included).
func (q *laterQueue) take() (batch []state.Spend, seq, last uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return nil, 0, q.seq
	}
	q.seq++
	var back map[string]struct{}
	for _, sp := range q.items {
		if sp.Amount < 0 {
			if back == nil {
				back = make(map[string]struct{})
			}
			back[sp.Key] = struct{}{}
		}
	}
	q.open[q.seq] = back
	batch, q.items = q.items, nil
	return batch, q.seq, q.seq
}

// givingBackLocked reports whether a batch up to last, not yet applied, gives
// back to a counter of spends that is checked. q.mu must be held.
func (q *laterQueue) givingBackLocked(last uint64, spends []state.Spend) bool {
	for seq, back := range q.open {
		if seq > last || back == nil {
			continue
		}
		for i := range spends {
			if spends[i].Limit <= 0 || spends[i].Amount <= 0 {
				continue
			}
			if _, ok := back[spends[i].Key]; ok {
				return true
			}
		}
	}
	return false
}

// waitGivenBack returns once no batch up to last that gives back to a
// counter of spends near its limit (near) is still on its way.
func (q *laterQueue) waitGivenBack(last uint64, spends []state.Spend, near func([]state.Spend) bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.givingBackLocked(last, spends) {
		return
	}
	q.mu.Unlock()
	isNear := near(spends)
	q.mu.Lock()
	if !isNear {
		return
	}
	for q.givingBackLocked(last, spends) {
		if q.onWait != nil {
			q.onWait()
		}
		q.done.Wait()
	}
}

// applied marks batch seq applied.
func (q *laterQueue) applied(seq uint64) {
	if seq == 0 {
		return
	}
	q.mu.Lock()
	delete(q.open, seq)
	q.done.Broadcast()
	q.mu.Unlock()
}

// wait returns once every batch up to last is applied.
func (q *laterQueue) wait(last uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.openUpTo(last) {
		q.done.Wait()
	}
}

func (q *laterQueue) openUpTo(last uint64) bool {
	for seq := range q.open {
		if seq <= last {
			return true
		}
	}
	return false
}

// AddLater queues spends to be added soon (state.Deferrer). It never
// blocks on Redis. After Close it applies them at once (to Local, the
// client being closed).
func (s *Store) AddLater(spends []state.Spend) {
	if len(spends) == 0 {
		return
	}
	// An add to a window this instance holds a share of goes to the
	// share: its units are in Redis's count already; one to a window
	// without a limit, to its tally (shares.go).
	if s.up.Load() {
		if spends = s.absorb(spends); len(spends) == 0 {
			return
		}
	}
	if s.givesBackNear(spends) {
		// Every instance must see it before the caller asks again:
		// applied now, the caller's answer waiting one round trip.
		s.applyBatch(context.Background(), spends)
		return
	}
	s.enqueue(spends)
}

// enqueue queues adds for the flusher; after Close it applies them at once.
func (s *Store) enqueue(spends []state.Spend) {
	q := &s.later
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		s.applyBatch(context.Background(), spends)
		return
	}
	q.items = append(q.items, spends...)
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// givesBackNear reports whether spends give back (a negative Amount) to a
// window past half its Limit by the view: a caller allowed a few requests
// at once, or near its tokens for the day, whose next request may go to
// another instance. Far from their limits, give-backs are queued.
func (s *Store) givesBackNear(spends []state.Spend) bool {
	if !s.up.Load() {
		return false
	}
	near := false
	for i := range spends {
		if spends[i].Amount < 0 && spends[i].Limit > 0 {
			near = true
		}
	}
	if !near {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for _, sp := range spends {
		if sp.Amount >= 0 || sp.Limit <= 0 {
			continue
		}
		if seen, own := s.windowLocked(sp, now); 2*(seen+own) > sp.Limit {
			return true
		}
	}
	return false
}

// Flush applies every add queued or tallied (shares.go) before it, and
// returns when they are in Redis (or, Redis away, in Local).
func (s *Store) Flush(ctx context.Context) {
	s.pushTallies() // shares.go
	last := s.applyQueued(ctx)
	s.later.wait(last)
}

// applyQueued applies what is queued, and returns the number of the last
// batch taken so far.
func (s *Store) applyQueued(ctx context.Context) uint64 {
	batch, seq, last := s.later.take()
	if len(batch) > 0 {
		if s.hook != nil {
			s.hook("batch") // a batch is on its way
		}
		s.applyBatch(ctx, batch)
	}
	s.later.applied(seq)
	return last
}

// flushLoop applies queued adds until ctx ends; Close then applies what
// is left.
func (s *Store) flushLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.later.kick:
		}
		s.applyQueued(context.Background())
	}
}

// closeLater stops the queue (later adds apply at once) and applies what
// is left.
func (s *Store) closeLater() {
	s.later.mu.Lock()
	s.later.closed = true
	s.later.mu.Unlock()
	s.Flush(context.Background())
}

// applyBatch merges the adds to the same slot and applies them, maxBatch
// at a time, with Add's fallback to Local.
func (s *Store) applyBatch(ctx context.Context, items []state.Spend) {
	merged := mergeAdds(items)
	for len(merged) > 0 {
		n := min(len(merged), maxBatch)
		// Add never loses an add: what Redis does not take goes to Local,
		// pending. Its error only says that Local failed too.
		if err := s.Add(ctx, merged[:n]); err != nil {
			s.logger.Warn("redisstore: adds queued after answers were not applied", "count", n, "error", errorText(err))
		}
		merged = merged[n:]
	}
}

// mergeAdds sums the adds made to the same window slot, in the order each
// slot was first added to, and drops those that sum to zero.
func mergeAdds(items []state.Spend) []state.Spend {
	type at struct {
		key   string
		slot  int64
		slots int
	}
	idx := make(map[at]int, len(items))
	out := make([]state.Spend, 0, len(items))
	for _, sp := range items {
		k := at{sp.Key, sp.Slot, sp.Slots}
		if i, ok := idx[k]; ok {
			out[i].Amount += sp.Amount
			out[i].TTL = max(out[i].TTL, sp.TTL)
			continue
		}
		idx[k] = len(out)
		sp.Limit = 0
		out = append(out, sp)
	}
	kept := out[:0]
	for _, sp := range out {
		if sp.Amount != 0 {
			kept = append(kept, sp)
		}
	}
	return kept
}

// roundTrips counts the commands and pipelines sent to Redis under a
// context that CountRoundTrips made.
type roundTrips struct{}

// tripsKey is the context key of a round-trip counter.
type tripsKey struct{}

// CountRoundTrips returns ctx carrying n: every command or pipeline sent to
// Redis under it (or a context made from it) adds 1 to n. What is no
// request's own is not counted: what a server that does not know a script
// yet costs once (the refused EVALSHA, the SCRIPT LOAD), and a new
// connection's handshake (go-redis sends HELLO, then CLIENT SETINFO in a
// pipeline, and AUTH and SELECT when configured, under the context of the
// call that found no idle connection; a test that counted them failed
// about one run in 30). Tests count what one request costs with it.
func CountRoundTrips(ctx context.Context, n *atomic.Int64) context.Context {
	return context.WithValue(ctx, tripsKey{}, n)
}

// tripCounter is the counter ctx carries, nil for none: the hooks look
// at the commands only then.
func tripCounter(ctx context.Context) *atomic.Int64 {
	n, _ := ctx.Value(tripsKey{}).(*atomic.Int64)
	return n
}

func (roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if n := tripCounter(ctx); n != nil && counted(cmd) {
			n.Add(1)
		}
		return err
	}
}

func (roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		n := tripCounter(ctx)
		if n == nil {
			return err
		}
		for _, cmd := range cmds {
			if !counted(cmd) {
				return err
			}
		}
		n.Add(1)
		return err
	}
}

// counted reports whether cmd is a request's own (see CountRoundTrips).
func counted(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "script", "hello", "client", "auth", "select":
		return false
	}
	return !redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT")
}

var _ redis.Hook = roundTrips{}
