package memstore

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t *testing.T, o Options) *Store {
	t.Helper()
	s, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) state.Store { return open(t, Options{}) })
	})
	t.Run("dir", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) state.Store { return open(t, Options{Dir: t.TempDir()}) })
	})
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func rpm(slot, limit, amount int64) state.Spend {
	return state.Spend{Key: "groq/llama|rpm", Slot: slot, Slots: 6, Limit: limit, Amount: amount, TTL: 2 * time.Minute}
}

func rpd(slot, limit, amount int64) state.Spend {
	return state.Spend{Key: "groq/llama|rpd", Slot: slot, Slots: 1, Limit: limit, Amount: amount, TTL: 48 * time.Hour}
}

func mustSpend(t *testing.T, s *Store, spends ...state.Spend) {
	t.Helper()
	failed, err := s.Spend(context.Background(), spends)
	if err != nil || failed != -1 {
		t.Fatalf("Spend = %d, %v; want -1, nil", failed, err)
	}
}

func checkSums(t *testing.T, s *Store, want []int64, spends ...state.Spend) {
	t.Helper()
	got, err := s.Sums(context.Background(), spends)
	if err != nil {
		t.Fatalf("Sums: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("Sums = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("Sums = %v, want %v", got, want)
			return
		}
	}
}

func checkRests(t *testing.T, s *Store, now time.Time, want ...state.Rest) {
	t.Helper()
	got, err := s.Rests(context.Background(), now)
	if err != nil {
		t.Fatalf("Rests: %v", err)
	}
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = storetest.SameRest(got[i], want[i])
	}
	if !ok {
		var g, w []string
		for _, r := range got {
			g = append(g, storetest.FormatRest(r))
		}
		for _, r := range want {
			w = append(w, storetest.FormatRest(r))
		}
		t.Errorf("Rests = %v, want %v", g, w)
	}
}

// flushed advances the fake clock past one flush and waits until the
// flusher has written and armed its next timer.
func flushed(t *testing.T, clk *clock.Fake, every time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatalf("flusher never waited: %v", err)
	}
	clk.Advance(every)
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatalf("flusher never came back: %v", err)
	}
}

func TestRestartKeepsCountsRestsAndPauses(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	rest := state.Rest{Key: "groq/llama", Until: t0.Add(time.Hour), Class: "rate_day", Reason: "429 rpd", Since: t0}
	pause := state.Rest{Key: "provider:mistral", Class: "paused", Reason: "by admin", Manual: true, Since: t0}
	ended := state.Rest{Key: "cerebras/qwen", Until: t0.Add(time.Minute), Class: "overloaded", Since: t0}

	s, err := Open(Options{Dir: dir, Clock: clk})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	mustSpend(t, s, rpm(100, 10, 3), rpd(20000, 100, 3))
	ctx := context.Background()
	for _, r := range []state.Rest{rest, pause, ended} {
		if err := s.SetRest(ctx, r); err != nil {
			t.Fatalf("SetRest: %v", err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	clk.Advance(90 * time.Second) // the minute rest has ended, the slots live on
	s2 := open(t, Options{Dir: dir, Clock: clk})
	checkSums(t, s2, []int64{3, 3}, rpm(100, 0, 0), rpd(20000, 0, 0))
	checkRests(t, s2, clk.Now(), rest, pause)
	if failed, _ := s2.Spend(ctx, []state.Spend{rpm(100, 10, 8)}); failed != 0 {
		t.Errorf("Spend past the restored count = %d, want 0", failed)
	}

	// Long after: the minute's slots expired, the day's slot is kept.
	clk.Advance(time.Hour)
	s3 := open(t, Options{Dir: dir, Clock: clk})
	checkSums(t, s3, []int64{0, 3}, rpm(100, 0, 0), rpd(20000, 0, 0))
}

func TestCrashLosesAtMostOneFlush(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	const every = time.Second
	s, err := Open(Options{Dir: dir, Clock: clk, FlushEvery: every})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()

	mustSpend(t, s, rpm(100, 0, 5))
	flushed(t, clk, every)
	mustSpend(t, s, rpm(100, 0, 2)) // after the last flush: lost in a crash
	pause := state.Rest{Key: "groq/llama", Class: "paused", Manual: true, Since: clk.Now()}
	if err := s.SetRest(context.Background(), pause); err != nil {
		t.Fatalf("SetRest: %v", err)
	}

	// Crash: open the folder again without closing s.
	s2 := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every})
	checkSums(t, s2, []int64{5}, rpm(100, 0, 0))
	checkRests(t, s2, clk.Now(), pause)
}

func TestCorruptSnapshot(t *testing.T) {
	tests := []struct {
		file    string
		content string
		want    string
	}{
		{countersFile, "{not json", "move it away to start with empty counters"},
		{restsFile, `{"version":1,"rests":[{"key":3}]}`, "move it away to start without rests"},
		{countersFile, `{"version":7,"counters":{}}`, "version 7"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tt.file)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(Options{Dir: dir})
			if err == nil {
				s.Close()
				t.Fatalf("Open with a corrupt %s: no error", tt.file)
			}
			for _, want := range []string{path, tt.want} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Open error = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestPruneDropsExpiredSlots(t *testing.T) {
	clk := clock.NewFake(t0)
	s := open(t, Options{Clock: clk})
	mustSpend(t, s, rpm(100, 0, 4), rpd(20000, 0, 1))
	rest := state.Rest{Key: "r", Until: t0.Add(30 * time.Second), Class: "overloaded", Since: t0}
	if err := s.SetRest(context.Background(), rest); err != nil {
		t.Fatal(err)
	}
	flushed(t, clk, 3*time.Minute) // past the minute's TTL, within the day's
	for range nShards / sweepShards {
		flushed(t, clk, time.Second) // a whole sweep of the compact table
	}
	minuteKept, dayKept := held(s, rpm(0, 0, 0).Key), held(s, rpd(0, 0, 0).Key)
	s.mu.Lock()
	_, restKept := s.rests["r"]
	s.mu.Unlock()
	if minuteKept || !dayKept || restKept {
		t.Errorf("after pruning: minute counter kept %v (want false), day counter kept %v (want true), ended rest kept %v (want false)",
			minuteKept, dayKept, restKept)
	}
	checkSums(t, s, []int64{0, 1}, rpm(100, 0, 0), rpd(20000, 0, 0))
}

// held reports whether the store holds key in memory, live or not.
func held(s *Store, key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := state.HashKey(key)
	if _, ok := s.counters[h]; ok {
		return true
	}
	sh := s.small.shard(h)
	if len(sh.e) == 0 {
		return false
	}
	i, ok := sh.find(h, 0)
	return ok && sh.e[i].exp != 0
}

func TestExpiredSlotNotCountedBeforePrune(t *testing.T) {
	clk := clock.NewFake(t0)
	s := open(t, Options{Clock: clk, FlushEvery: time.Hour})
	mustSpend(t, s, rpm(100, 0, 4))
	clk.Set(t0.Add(2*time.Minute + time.Nanosecond))
	checkSums(t, s, []int64{0}, rpm(100, 0, 0))
}

func TestSpendRejectsBadSpends(t *testing.T) {
	s := open(t, Options{})
	tests := []struct {
		name string
		sp   state.Spend
	}{
		{"zero slots", state.Spend{Key: "k", Slots: 0, TTL: time.Minute}},
		{"zero ttl", state.Spend{Key: "k", Slots: 1}},
	}
	for _, tt := range tests {
		if _, err := s.Spend(context.Background(), []state.Spend{tt.sp}); err == nil {
			t.Errorf("%s: Spend error = nil, want one", tt.name)
		}
	}
}

func TestSpendDoesNotAllocate(t *testing.T) {
	s := open(t, Options{})
	spends := []state.Spend{rpm(100, 1<<40, 1), rpd(20000, 1<<40, 1)}
	mustSpend(t, s, spends...)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := s.Spend(context.Background(), spends); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Spend allocates %v times per call, want 0", allocs)
	}
}

func BenchmarkSpend(b *testing.B) {
	s, err := Open(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		spends := []state.Spend{rpm(100, 1<<40, 1), rpd(20000, 1<<40, 1)}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Spend(ctx, spends); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			spends := []state.Spend{rpm(100, 1<<40, 1), rpd(20000, 1<<40, 1)}
			for pb.Next() {
				if _, err := s.Spend(ctx, spends); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// A spend that carries its key's hash (Spend.KeyHash, as the quota package
// sends them) counts on the same counter as one that does not, small and
// full counters alike, and survives a restart under the same name.
func TestKeyHashNamesTheSameCounter(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	s := open(t, Options{Dir: dir, Clock: clk})
	hashed := func(sp state.Spend) state.Spend {
		sp.KeyHash = state.HashKey(sp.Key)
		return sp
	}
	mustSpend(t, s, rpm(100, 0, 2), hashed(rpd(0, 0, 3)))
	mustSpend(t, s, hashed(rpm(100, 0, 1)), rpd(0, 0, 1))
	mustSpend(t, s, hashed(rpm(101, 0, 5))) // a second slot: a full counter
	if err := s.Add(context.Background(), []state.Spend{hashed(rpd(0, 0, -2))}); err != nil {
		t.Fatal(err)
	}
	checkSums(t, s, []int64{8, 2}, rpm(101, 0, 0), rpd(0, 0, 0))
	checkSums(t, s, []int64{8, 2}, hashed(rpm(101, 0, 0)), hashed(rpd(0, 0, 0)))
	if failed, err := s.Spend(context.Background(), []state.Spend{hashed(rpd(0, 3, 2))}); err != nil || failed != 0 {
		t.Errorf("a hashed spend past the limit the unhashed ones filled: Spend = %d, %v; want 0, nil", failed, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, Options{Dir: dir, Clock: clk})
	checkSums(t, s2, []int64{8, 2}, rpm(101, 0, 0), hashed(rpd(0, 0, 0)))
}

// TestCounterSumKeptByAdd: a counter keeps its last window sum and adds
// to it, so that a busy window is not summed again at every spend; the
// kept sum is always what summing the live slots gives, whatever the
// adds (late ones to older slots, negative ones, slots that expired and
// are added to again) and however the window and the clock move.
func TestCounterSumKeptByAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 31))
	brute := func(c *counter, sp *state.Spend, now int64) int64 {
		var sum int64
		for _, sl := range c.slots {
			if sl.idx > sp.Slot-int64(sp.Slots) && sl.idx <= sp.Slot && sl.expires > now {
				sum += sl.n
			}
		}
		return sum
	}
	for _, slots := range []int{1, 3, 61, 241} {
		c := &counter{key: "k"}
		const size = int64(250 * time.Millisecond)
		now := int64(1_000_000) * size
		for i := range 20000 {
			now += rng.Int64N(size / 2)
			cur := now / size
			ttl := int64(slots+1) * size
			if rng.IntN(10) == 0 {
				ttl = rng.Int64N(int64(slots+2) * size) // an odd TTL, shorter than the window
			}
			idx := cur - rng.Int64N(int64(slots)+2) // now's slot, an older one, or one just out
			amount := rng.Int64N(100) - 10
			sp := &state.Spend{Key: "k", Slot: cur, Slots: slots}
			if got, want := c.sum(sp, now), brute(c, sp, now); got != want {
				t.Fatalf("%d slots, step %d: sum %d, want %d", slots, i, got, want)
			}
			c.add(idx, amount, now+ttl, now)
			if got, want := c.sum(sp, now), brute(c, sp, now); got != want {
				t.Fatalf("%d slots, step %d, after adding %d to slot %d (now's %d): sum %d, want %d", slots, i, amount, idx, cur, got, want)
			}
		}
	}
}
