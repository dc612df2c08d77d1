// Package memstore owns the embedded default state.Store: budget counters,
// rests and pauses held in memory for one instance, and persisted under a
// data folder so that a restart forgets neither a rest nor today's counts.
//
// Counts change on every request, so they are written every FlushEvery
// (default one second): a crash loses at most that much counting. What is
// written is what changed: counters.json is a journal, a snapshot followed
// by one line per counter changed since, appended each flush, so a flush
// costs what the requests since the last one changed, not what the site
// remembers (issue 18: 130,000 callers made a 16 MB file rewritten every
// second). When the lines appended pass twice the last snapshot (and a
// megabyte), the file is rewritten whole from memory by write-then-rename
// and the journal starts again (journal.go). Rests and pauses change rarely
// and matter more, so SetRest and ClearRest write rests.json before they
// return. Keeping them in two files means a rest write never rewrites the
// counts and a counts flush never races a rest write. A write that fails (a
// full disk) leaves the change in effect in memory and the file marked
// dirty: the flusher retries it every FlushEvery until it works (issue 10),
// and Health says so meanwhile.
//
// Counts expire with their windows: a counter whose slots all passed their
// TTL no longer counts, leaves memory within nShards/sweepShards flushes
// (about four minutes) and is left out of the next rewrite. Most counters of a site
// with many visitors have one slot (a visitor's day); they live in a compact
// table of 20 bytes each, keyed by a hash of the key (table.go), and the
// rest in a map of full counters.
//
// Notes (learned limits and latencies) go to notes.json within a
// FlushEvery of a change, and at Close.
//
// Spend is on every request's path: it takes one mutex and, once a counter's
// current slot exists, allocates nothing.
package memstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
)

// Options configures a Store. The zero value is a memory-only store on the
// real clock.
type Options struct {
	// Dir is the folder holding counters.json and rests.json; it is created
	// if missing. Empty means memory only: nothing survives a restart.
	Dir string
	// Clock tells the time for slot expiry and for the flush timer. Default
	// clock.Real.
	Clock clock.Clock
	// FlushEvery is how often the counts changed are appended to Dir's
	// counters.json, a 256th of the compact table swept of expired
	// counters, and ended rests pruned; it bounds the counts a crash
	// loses. Default 1s.
	FlushEvery time.Duration
	// Logger hears when writing the files starts failing and when it works
	// again. Default slog.Default().
	Logger *slog.Logger
	// Files writes the files. Default Disk: write, sync, rename, and
	// appends to counters.json. A FileWriter that is not also an
	// AppendWriter gets counters.json rewritten whole at each flush that
	// has changes; tests pass one that fails like a full disk.
	Files FileWriter
}

// FileWriter replaces the file name under dir with data.
type FileWriter interface {
	WriteFile(dir, name string, data []byte) error
}

// FileWriterFunc adapts a function to FileWriter.
type FileWriterFunc func(dir, name string, data []byte) error

// WriteFile calls f.
func (f FileWriterFunc) WriteFile(dir, name string, data []byte) error { return f(dir, name, data) }

var _ FileWriter = FileWriterFunc(ReplaceFile)

// Store is an in-memory state.Store, optionally persisted under a folder.
// It is safe for concurrent use. Close it to flush and stop its flusher.
type Store struct {
	clock  clock.Clock
	dir    string
	every  time.Duration
	logger *slog.Logger
	files  FileWriter

	// fileMu serializes writes of each file and keeps them in the order their
	// contents were taken, so an older copy never overwrites a newer one.
	countsFileMu sync.Mutex
	flushBuf     []byte // the journal lines of a flush, kept for the next; guarded by countsFileMu
	restsFileMu  sync.Mutex
	notesFileMu  sync.Mutex

	mu sync.Mutex // guards counters, small, changed, changedSmall, rewrite, journal, snapshot, sweepAt, rests, restsGen, restsWritten, notes, notesDirty, the errors
	// counters holds the counters that small cannot (more than one slot,
	// or a value past 32 bits), by the same hash of their key (state.HashKey),
	// so a Spend hashes each key once. A key is in counters or small,
	// never both.
	counters map[uint64]*counter
	small    table
	// changed and changedSmall are the counters changed since the last
	// flush, to append to the journal: full ones each once (counter.changed),
	// small ones by hash, repeated (sorted out at the flush). Kept only
	// with a Dir.
	changed      []*counter
	changedSmall []uint64
	// rewrite makes the next flush write counters.json whole: after a
	// failed write (an append may have left a torn line), or a load that
	// found an older format or a torn line.
	rewrite bool
	// journal is the bytes appended since counters.json was last written
	// whole, snapshot the bytes that write took.
	journal, snapshot int64
	sweepAt           int // the next shard of small that prune sweeps
	rests             map[string]state.Rest
	// restsView is every rest in rests, sorted by key, made again at
	// each change under mu and never changed after: Rests, read at every
	// request, reads it without mu (issue 18: the one lock of the counters
	// was taken once more per request for rests that rarely change).
	restsView atomic.Pointer[[]state.Rest]
	// restsGen numbers the changes of rests; restsWritten is the change
	// rests.json holds (persistRests). While it is behind, after a failed
	// write, the flusher writes it again (issue 10: a rest decided while
	// the disk is full is written once it frees).
	restsGen, restsWritten uint64
	// countsErr and restsErr are the last write error of each file, nil
	// once a write works; they feed Health and log each failure once.
	countsErr, restsErr, notesErr error
	notes                         map[string]note
	notesDirty                    bool // notes changed since the last write

	stop      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

var _ state.Store = (*Store)(nil)

// Open returns a Store, loading the files under o.Dir if there are any, and
// starts its flusher. A file that cannot be read (but for the torn last
// line a crash leaves in counters.json) is an error naming the file; move
// the file away to start without it.
func Open(o Options) (*Store, error) {
	s := &Store{
		clock:    o.Clock,
		dir:      o.Dir,
		every:    o.FlushEvery,
		logger:   o.Logger,
		files:    o.Files,
		counters: make(map[uint64]*counter),
		rests:    make(map[string]state.Rest),
		notes:    make(map[string]note),
		stop:     make(chan struct{}),
	}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	if s.every <= 0 {
		s.every = time.Second
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if s.files == nil {
		s.files = Disk{}
	}
	if s.dir != "" {
		if err := s.load(); err != nil {
			return nil, fmt.Errorf("memstore: open: %w", err)
		}
	}
	s.wg.Go(s.flushLoop)
	return s, nil
}

// Close stops the flusher and writes the counts changed since the last
// flush, and the rests if their last write failed. The Store still answers afterwards,
// in memory only. Close is idempotent.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.stop)
		s.wg.Wait()
		if ferr := errors.Join(s.flushCounts(), s.flushRests(), s.flushNotes()); ferr != nil {
			err = fmt.Errorf("memstore: close: %w", ferr)
		}
	})
	return err
}

func (s *Store) flushLoop() {
	for {
		t := s.clock.NewTimer(s.every)
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-t.C():
		}
		s.prune()
		_ = s.flushCounts() // noted by persisted
		_ = s.flushRests()
		_ = s.flushNotes()
	}
}

// Health returns the error of the last write of the files under Dir, nil
// when both last writes worked (or there is no Dir).
func (s *Store) Health() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.countsErr, s.restsErr, s.notesErr)
}

// persisted records the outcome of writing file, logging only when writing
// it starts failing and when it works again. s.mu must not be held.
func (s *Store) persisted(file string, err error) {
	s.mu.Lock()
	last := &s.countsErr
	switch file {
	case restsFile:
		last = &s.restsErr
	case notesFile:
		last = &s.notesErr
	}
	was := *last
	*last = err
	s.mu.Unlock()
	switch {
	case err != nil && was == nil:
		s.logger.Error("memstore: writing the state file failed; the state holds in memory and the write is retried every flush, but a crash now would lose it",
			"dir", s.dir, "file", file, "error", err)
	case err == nil && was != nil:
		s.logger.Warn("memstore: writing the state file works again", "dir", s.dir, "file", file)
	}
}

// counter is one Spend.Key's slots, sorted by index.
type counter struct {
	key     string
	slots   []slot
	changed bool // listed in Store.changed
	// win is the last window sum worked out (see sum), kept up to date by
	// add: a busy minute of quarter-second slots holds 241 of them, and
	// summing them at every spend of every request cost 1.6 µs a request
	// on a gateway with every limit on (quota's BenchmarkRequestBudgetsBusy:
	// 3.6 µs where 1-second slots cost 2.0); the window moves once a slot.
	win windowSum
}

// windowSum is a counter's sum over the window of slots slots ending at
// slot, true while no slot it counted has expired (until minExp). slots 0
// is no sum.
type windowSum struct {
	slot, slots int64
	sum         int64
	minExp      int64
}

type slot struct {
	idx     int64
	n       int64
	expires int64 // unix nanoseconds after which the slot no longer counts
}

// sum returns the total of the live slots in the window ending at sp.Slot.
func (c *counter) sum(sp *state.Spend, now int64) int64 {
	if w := &c.win; w.slots == int64(sp.Slots) && w.slot == sp.Slot && now < w.minExp {
		return w.sum
	}
	first := sp.Slot - int64(sp.Slots) + 1
	var sum int64
	minExp := int64(math.MaxInt64)
	for i := len(c.slots) - 1; i >= 0; i-- {
		sl := &c.slots[i]
		if sl.idx < first {
			break
		}
		if sl.idx <= sp.Slot && sl.expires > now {
			sum += sl.n
			minExp = min(minExp, sl.expires)
		}
	}
	c.win = windowSum{slot: sp.Slot, slots: int64(sp.Slots), sum: sum, minExp: minExp}
	return sum
}

// add adds amount to slot idx and keeps it until expires. Expired slots
// are dropped when the oldest has expired (a slot given a late add, a
// settle, may outlive a newer one; an expired one left in between counts
// for nothing, and an add to it starts it again from zero).
func (c *counter) add(idx, amount, expires, now int64) {
	if len(c.slots) > 0 && c.slots[0].expires <= now {
		c.dropExpired(now)
	}
	w := &c.win
	inWin := w.slots > 0 && idx <= w.slot && idx > w.slot-w.slots
	i := len(c.slots)
	for i > 0 && c.slots[i-1].idx > idx {
		i--
	}
	if i > 0 && c.slots[i-1].idx == idx {
		sl := &c.slots[i-1]
		if sl.expires <= now {
			sl.n = 0
			w.minExp = min(w.minExp, expires)
		}
		sl.n += amount
		sl.expires = max(sl.expires, expires)
		if inWin {
			w.sum += amount
		}
		return
	}
	c.slots = slices.Insert(c.slots, i, slot{idx: idx, n: amount, expires: expires})
	if inWin {
		w.sum += amount
		w.minExp = min(w.minExp, expires)
	}
}

// dropExpired removes expired slots, keeping the slice's capacity.
func (c *counter) dropExpired(now int64) {
	kept := c.slots[:0]
	for _, sl := range c.slots {
		if sl.expires > now {
			kept = append(kept, sl)
		}
	}
	c.slots = kept
}

// validate reports a programmer error in spends without allocating when
// there is none.
func validate(spends []state.Spend) error {
	for i := range spends {
		sp := &spends[i]
		if sp.Slots < 1 {
			return fmt.Errorf("spend %d (%s): slots %d, want at least 1", i, sp.Key, sp.Slots)
		}
		if sp.TTL <= 0 {
			return fmt.Errorf("spend %d (%s): ttl %v, want more than 0", i, sp.Key, sp.TTL)
		}
	}
	return nil
}

// Spend checks every spend's window and, only if all pass, adds every Amount.
// A spend with Limit 0, or an Amount of 0 or less (a give-back), is never
// refused. It returns -1 when all were added, or the index of the first
// spend that did not fit.
func (s *Store) Spend(_ context.Context, spends []state.Spend) (int, error) {
	if err := validate(spends); err != nil {
		return -1, fmt.Errorf("memstore: spend: %w", err)
	}
	return s.spend(spends, len(spends)), nil
}

// SpendSplit checks spends[:must] all or nothing, then spends[must:] the
// same way, under one hold of the lock (state.SplitSpender): a request's
// caller limits and its first route's budget cost one call (issue 18,
// item 2), as they cost one round trip on Redis.
func (s *Store) SpendSplit(_ context.Context, spends []state.Spend, must int) (int, error) {
	if err := validate(spends); err != nil {
		return -1, fmt.Errorf("memstore: spend: %w", err)
	}
	if must < 0 || must > len(spends) {
		return -1, fmt.Errorf("memstore: spend: must %d out of 0..%d", must, len(spends))
	}
	return s.spend(spends, must), nil
}

// spend is SpendSplit, validated: Spend is spend(spends, len(spends)).
func (s *Store) spend(spends []state.Spend, must int) int {
	now := s.clock.Now().UnixNano()
	// Each counter is looked up once, for its check and its add: a small
	// one's key is hashed once.
	var buf [16]ref
	refs := buf[:0]
	if len(spends) > len(buf) {
		refs = make([]ref, 0, len(spends))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range spends {
		refs = append(refs, s.lookupLocked(&spends[i], now))
	}
	if i := s.firstOverLocked(spends[:must], refs, now); i >= 0 {
		return i
	}
	failed, n := -1, len(spends)
	if i := s.firstOverLocked(spends[must:], refs[must:], now); i >= 0 {
		failed, n = must+i, must
	}
	for i := range n {
		s.addLocked(&spends[i], refs[i], now)
	}
	return failed
}

// firstOverLocked returns the index of the first spend its window cannot
// take, -1 if every one fits. A spend with Limit 0, or an Amount of 0 or
// less (a give-back), always fits. s.mu must be held.
func (s *Store) firstOverLocked(spends []state.Spend, refs []ref, now int64) int {
	for i := range spends {
		sp := &spends[i]
		if sp.Limit <= 0 || sp.Amount <= 0 {
			continue
		}
		if s.sumLocked(sp, refs[i], now)+sp.Amount > sp.Limit {
			return i
		}
	}
	return -1
}

// Add adds every Amount without checking.
func (s *Store) Add(_ context.Context, spends []state.Spend) error {
	if err := validate(spends); err != nil {
		return fmt.Errorf("memstore: add: %w", err)
	}
	now := s.clock.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range spends {
		s.addLocked(&spends[i], s.lookupLocked(&spends[i], now), now)
	}
	return nil
}

// ref is where a key's counter is: c when it is full, else the key's hash
// in small and where its entry was found.
type ref struct {
	c *counter
	h uint64
	l loc
}

// lookupLocked finds sp.Key's counter. s.mu must be held.
func (s *Store) lookupLocked(sp *state.Spend, now int64) ref {
	h := hashOf(sp)
	if c := s.counters[h]; c != nil {
		return ref{c: c, h: h}
	}
	return ref{h: h, l: s.small.locate(h, now)}
}

// sumLocked returns sp's window sum; r is sp.Key's lookup. s.mu must be
// held.
func (s *Store) sumLocked(sp *state.Spend, r ref, now int64) int64 {
	if r.c != nil {
		return r.c.sum(sp, now)
	}
	e := s.small.at(r.h, r.l)
	if e == nil || !e.live(now) || int64(e.slot) > sp.Slot || int64(e.slot) <= sp.Slot-int64(sp.Slots) {
		return 0
	}
	return int64(e.n)
}

// maxChangedSmall bounds the list of small counters changed while flushes
// fail (a full disk for hours): past it, the list is dropped and the next
// flush that works writes the whole file instead.
const maxChangedSmall = 1 << 20

// recentlyChanged reports whether h is among the last entries of
// changed: a busy caller's counters are changed at every request, and
// listing them once per request until the next flush cost a megabyte
// under load (issue 18, item 7). The flush sorts and skips repeats anyway.
func recentlyChanged(changed []uint64, h uint64) bool {
	for i := len(changed) - 1; i >= 0 && i >= len(changed)-16; i-- {
		if changed[i] == h {
			return true
		}
	}
	return false
}

// addLocked adds sp.Amount to its counter, in small while it fits there;
// r is sp.Key's lookup, made under the same hold of s.mu.
func (s *Store) addLocked(sp *state.Spend, r ref, now int64) {
	expires := now + int64(sp.TTL)
	c := r.c
	if c == nil {
		added := addAt(s.small.at(r.h, r.l), sp.Slot, sp.Amount, expires, now)
		if !added {
			// An earlier spend of the same call may have promoted the
			// key; else the table adds it, unless it needs a full counter.
			c = s.counters[r.h]
			added = c == nil && s.small.add(r.h, sp.Slot, sp.Amount, expires, now)
		}
		if added {
			if sp.Amount < 0 {
				// A count given back to 0 counts what no entry does:
				// its entry leaves the table at once, not at its
				// expiry (a request at once given back at its answer,
				// a mirror taken out: redisstore's view.go).
				if e, ok := s.small.get(r.h, now); ok && e.n == 0 {
					s.small.take(r.h, now)
				}
			}
			if s.dir != "" && !recentlyChanged(s.changedSmall, r.h) {
				if len(s.changedSmall) >= maxChangedSmall {
					s.changedSmall, s.rewrite = s.changedSmall[:0], true
				}
				s.changedSmall = append(s.changedSmall, r.h)
			}
			return
		}
	}
	if c == nil {
		// A second slot, or a value past 32 bits: promote to a full
		// counter, which the journal names by its key from now on.
		c = &counter{key: sp.Key, slots: make([]slot, 0, 2)}
		if e, ok := s.small.take(r.h, now); ok {
			c.slots = append(c.slots, slot{idx: int64(e.slot), n: int64(e.n), expires: e.expiresAt()})
		}
		s.counters[r.h] = c
	}
	c.add(sp.Slot, sp.Amount, expires, now)
	if s.dir != "" && !c.changed {
		c.changed = true
		s.changed = append(s.changed, c)
	}
}

// Sums returns each spend's window sum.
func (s *Store) Sums(_ context.Context, spends []state.Spend) ([]int64, error) {
	if err := validate(spends); err != nil {
		return nil, fmt.Errorf("memstore: sums: %w", err)
	}
	out := make([]int64, len(spends))
	now := s.clock.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range spends {
		out[i] = s.sumLocked(&spends[i], s.lookupLocked(&spends[i], now), now)
	}
	return out, nil
}

// SetRest records r, unless a Manual rest of the same key is active and r is
// not Manual. With a Dir, the rests are on disk before SetRest returns; if
// writing fails the rest still holds in memory, the error wraps
// state.ErrNotPersisted, and the flusher retries the write until it works.
func (s *Store) SetRest(_ context.Context, r state.Rest) error {
	if r.Key == "" {
		return errors.New("memstore: set rest: empty key")
	}
	s.mu.Lock()
	if old, ok := s.rests[r.Key]; ok && old.Manual && !r.Manual && old.Active(s.clock.Now()) {
		s.mu.Unlock()
		return nil
	}
	s.rests[r.Key] = r
	gen := s.changedRestsLocked()
	s.mu.Unlock()
	if err := s.persistRests(gen); err != nil {
		return fmt.Errorf("memstore: set rest %s: %w: %w", r.Key, state.ErrNotPersisted, err)
	}
	return nil
}

// ClearRest removes the rest of key: with manual false only an automatic
// one. With a Dir, the change is on disk before ClearRest returns, or the
// error wraps state.ErrNotPersisted as SetRest's does.
func (s *Store) ClearRest(_ context.Context, key string, manual bool) error {
	s.mu.Lock()
	old, ok := s.rests[key]
	if !ok || (old.Manual && !manual) {
		s.mu.Unlock()
		return nil
	}
	delete(s.rests, key)
	gen := s.changedRestsLocked()
	s.mu.Unlock()
	if err := s.persistRests(gen); err != nil {
		return fmt.Errorf("memstore: clear rest %s: %w: %w", key, state.ErrNotPersisted, err)
	}
	return nil
}

// changedRestsLocked publishes the rests after a change and returns the
// change's number. s.mu must be held.
func (s *Store) changedRestsLocked() uint64 {
	s.publishRestsLocked()
	s.restsGen++
	return s.restsGen
}

// persistRests returns once rests.json holds change gen of the rests
// (changedRestsLocked) or a later one, writing it if no one did. The
// writes are a group commit: the rests are taken when a write starts,
// so the changes that queued behind one write are all on disk after the
// next, and their callers return without writing again. Rests are
// written before the request that caused them is answered (a SIGKILL
// keeps them), and a failing route's rest is decided on the request's
// goroutine: one write each, in turn, held a burst of requests behind
// as many fsyncs (14 of them, past their deadlines, in a CI run of the
// chaos test on a slow disk).
func (s *Store) persistRests(gen uint64) error {
	if s.dir == "" {
		return nil
	}
	s.restsFileMu.Lock()
	defer s.restsFileMu.Unlock()
	s.mu.Lock()
	if s.restsWritten >= gen {
		s.mu.Unlock()
		return nil
	}
	rests, cur := s.allRests(), s.restsGen
	s.mu.Unlock()
	return s.saveRests(rests, cur)
}

// Rests returns every rest active at now, sorted by key.
func (s *Store) Rests(_ context.Context, now time.Time) ([]state.Rest, error) {
	all := s.allRests()
	out := make([]state.Rest, 0, len(all))
	for _, r := range all {
		if r.Active(now) {
			out = append(out, r)
		}
	}
	return out, nil
}

// allRests is every rest, sorted by key, as last published: not to be
// changed.
func (s *Store) allRests() []state.Rest {
	if all := s.restsView.Load(); all != nil {
		return *all
	}
	return nil
}

// publishRestsLocked makes restsView again from rests and returns it:
// every rest, sorted by key. s.mu must be held.
func (s *Store) publishRestsLocked() []state.Rest {
	all := s.restsLocked()
	s.restsView.Store(&all)
	return all
}

// restsLocked returns every rest, sorted by key. s.mu must be held.
func (s *Store) restsLocked() []state.Rest {
	out := make([]state.Rest, 0, len(s.rests))
	for _, r := range s.rests {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b state.Rest) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// sweepShards is how many shards of small each prune sweeps: every
// expired single-slot counter leaves memory within nShards/sweepShards
// flushes (about four minutes by default), and a flush scans a 256th of the
// counters, not all of them (a million callers: about 8,000 entries, tens
// of microseconds).
const sweepShards = 1

// prune drops expired slots, empty counters and ended rests.
func (s *Store) prune() {
	now := s.clock.Now()
	nanos := now.UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, c := range s.counters {
		c.dropExpired(nanos)
		if len(c.slots) == 0 {
			delete(s.counters, key)
		}
	}
	for range sweepShards {
		s.small.sweep(s.sweepAt, nanos)
		s.sweepAt = (s.sweepAt + 1) % nShards
	}
	s.pruneNotesLocked(now)
	// An ended rest stays in rests.json until the next rest write; load
	// skips it.
	ended := false
	for key, r := range s.rests {
		if !r.Active(now) {
			delete(s.rests, key)
			ended = true
		}
	}
	if ended {
		s.publishRestsLocked()
	}
}
