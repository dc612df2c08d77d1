package quota

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/tollfree/tollfree/state"
)

// fakeStore is an in-memory state.Store: counters only, slots kept forever
// (a window only ever sums its own slots, so expiry does not change sums).
type fakeStore struct {
	mu     sync.Mutex // guards counts, err, spends
	counts map[string]map[int64]int64
	err    error // returned by every call when set
	spends int   // Spend calls
}

var _ state.Store = (*fakeStore)(nil)

func newFakeStore() *fakeStore { return &fakeStore{counts: make(map[string]map[int64]int64)} }

func (f *fakeStore) sumLocked(sp state.Spend) int64 {
	var n int64
	slots := f.counts[sp.Key]
	for s := sp.Slot - int64(max(sp.Slots, 1)) + 1; s <= sp.Slot; s++ {
		n += slots[s]
	}
	return n
}

func (f *fakeStore) addLocked(sp state.Spend) {
	m := f.counts[sp.Key]
	if m == nil {
		m = make(map[int64]int64)
		f.counts[sp.Key] = m
	}
	m[sp.Slot] += sp.Amount
}

// checkHashes panics on a spend whose KeyHash is set and is not its Key's
// (state.Spend): every test through fakeStore checks the names' hashes
// the Book keeps.
func checkHashes(spends []state.Spend) {
	for _, sp := range spends {
		if sp.KeyHash != 0 && sp.KeyHash != state.HashKey(sp.Key) {
			panic(fmt.Sprintf("spend on %q carries KeyHash %#x, want %#x", sp.Key, sp.KeyHash, state.HashKey(sp.Key)))
		}
	}
}

func (f *fakeStore) Spend(ctx context.Context, spends []state.Spend) (int, error) {
	checkHashes(spends)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spends++
	if f.err != nil {
		return 0, f.err
	}
	for i, sp := range spends {
		if sp.Limit > 0 && f.sumLocked(sp)+sp.Amount > sp.Limit {
			return i, nil
		}
	}
	for _, sp := range spends {
		f.addLocked(sp)
	}
	return -1, nil
}

func (f *fakeStore) Add(ctx context.Context, spends []state.Spend) error {
	checkHashes(spends)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	for _, sp := range spends {
		f.addLocked(sp)
	}
	return nil
}

func (f *fakeStore) Sums(ctx context.Context, spends []state.Spend) ([]int64, error) {
	checkHashes(spends)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	out := make([]int64, len(spends))
	for i, sp := range spends {
		out[i] = f.sumLocked(sp)
	}
	return out, nil
}

func (f *fakeStore) SetRest(ctx context.Context, r state.Rest) error                { return nil }
func (f *fakeStore) ClearRest(ctx context.Context, key string, m bool) error        { return nil }
func (f *fakeStore) Rests(ctx context.Context, now time.Time) ([]state.Rest, error) { return nil, nil }
func (f *fakeStore) SetNote(context.Context, string, []byte, time.Duration) error   { return nil }
func (f *fakeStore) Notes(context.Context, string) (map[string][]byte, error)       { return nil, nil }

// keys lists every counter key, sorted.
func (f *fakeStore) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ks []string
	for k := range f.counts {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (f *fakeStore) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// errDown returns the error of a Store whose backend is down.
func errDown() error { return fmt.Errorf("redis: dial: %w", state.ErrUnavailable) }
