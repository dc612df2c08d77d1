// Package storetest owns the conformance suite that every state.Store passes,
// so that the in-memory store and the Redis store cannot drift apart in what
// Spend, Add, Sums and the rest methods mean (docs/STYLE.md: "One
// conformance suite runs against every implementation" of a store).
//
// The suite builds times from the wall clock (time.Now) because a shared
// store such as Redis expires keys on its own clock; a store under test should
// use clock.Real or a clock.Fake set close to time.Now.
package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollfree/tollfree/state"
)

// Run runs the conformance suite against the stores made by newStore. It
// calls newStore once per subtest; each call must return an empty store, and
// the store's cleanup (Close, deleting keys) belongs to newStore, through
// t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) state.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s state.Store)
	}{
		{"SpendChecksEveryWindow", testSpendChecksEveryWindow},
		{"SpendAllOrNothing", testSpendAllOrNothing},
		{"SpendSplit", testSpendSplit},
		{"SlidingWindow", testSlidingWindow},
		{"WideValues", testWideValues},
		{"OneSlotThenMore", testOneSlotThenMore},
		{"LimitZeroCounts", testLimitZeroCounts},
		{"NegativeAmountGivesBack", testNegativeAmountGivesBack},
		{"AddNeverChecks", testAddNeverChecks},
		{"Sums", testSums},
		{"ConcurrentSpendExact", testConcurrentSpendExact},
		{"Rests", testRests},
		{"ExpiredRestHidden", testExpiredRestHidden},
		{"ManualRestWins", testManualRestWins},
		{"ClearRest", testClearRest},
		{"PauseUntilLifted", testPauseUntilLifted},
		{"Notes", testNotes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newStore(t))
		})
	}
}

// minute returns a spend on a sliding minute of six 10-second slots.
func minute(key string, slot int64, limit, amount int64) state.Spend {
	return state.Spend{Key: key, Slot: slot, Slots: 6, Limit: limit, Amount: amount, TTL: 2 * time.Minute}
}

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func spend(t *testing.T, s state.Store, spends ...state.Spend) int {
	t.Helper()
	failed, err := s.Spend(ctxFor(t), spends)
	if err != nil {
		t.Fatalf("Spend: %v", err)
	}
	return failed
}

func sums(t *testing.T, s state.Store, spends ...state.Spend) []int64 {
	t.Helper()
	got, err := s.Sums(ctxFor(t), spends)
	if err != nil {
		t.Fatalf("Sums: %v", err)
	}
	return got
}

func wantSums(t *testing.T, s state.Store, want []int64, spends ...state.Spend) {
	t.Helper()
	if got := sums(t, s, spends...); !slices.Equal(got, want) {
		t.Errorf("Sums = %v, want %v", got, want)
	}
}

// testSpendSplit: a Store that checks two groups in one call
// (state.SplitSpender) adds the first group all or nothing, and the second
// only if the first was added, all or nothing too; an index at or past
// must names the second group's refused spend, the first group counted.
func testSpendSplit(t *testing.T, s state.Store) {
	split, ok := state.Find[state.SplitSpender](s)
	if !ok {
		t.Skip("this Store checks one group per call (no state.SplitSpender)")
	}
	hour := minute("caller:x|hour", 10, 3, 1)
	day := minute("caller:x|day", 10, 100, 1)
	rpm := minute("m1|rpm", 10, 2, 1)
	tpm := minute("m1|tpm", 10, 1000, 600)
	do := func(want, must int, spends ...state.Spend) {
		t.Helper()
		got, err := split.SpendSplit(ctxFor(t), spends, must)
		if err != nil || got != want {
			t.Fatalf("SpendSplit(must %d) = %d, %v; want %d", must, got, err, want)
		}
	}
	do(-1, 2, hour, day, rpm, tpm) // both groups: 1, 1, 1, 600
	do(3, 2, hour, day, rpm, tpm)  // the route's tokens are spent: the caller counts alone
	wantSums(t, s, []int64{2, 2, 1, 600}, hour, day, rpm, tpm)
	do(-1, 2, hour, day, rpm) // the route without its tokens: 3, 3, 2
	do(0, 2, hour, day, rpm)  // the caller's hour is spent: nothing counts
	wantSums(t, s, []int64{3, 3, 2, 600}, hour, day, rpm, tpm)
	// must 0: one group, the route's; must len: one group, the caller's.
	do(0, 0, rpm)
	do(-1, 1, day)
	do(1, 1, day, rpm)
	wantSums(t, s, []int64{5, 2}, day, rpm)
}

func testSpendChecksEveryWindow(t *testing.T, s state.Store) {
	tests := []struct {
		name   string
		spends []state.Spend
		want   int
	}{
		{"all fit", []state.Spend{minute("a", 100, 10, 3), minute("b", 100, 5, 3)}, -1},
		{"second full", []state.Spend{minute("a", 100, 10, 3), minute("b", 100, 5, 3)}, 1},
		{"first full", []state.Spend{minute("b", 100, 100, 1), minute("a", 100, 10, 8)}, 1},
		{"exactly at limit", []state.Spend{minute("a", 100, 10, 7)}, -1},
		{"one over", []state.Spend{minute("a", 100, 10, 1)}, 0},
		{"first of two fails", []state.Spend{minute("a", 100, 10, 1), minute("b", 100, 100, 1)}, 0},
	}
	for _, tt := range tests {
		if got := spend(t, s, tt.spends...); got != tt.want {
			t.Errorf("%s: Spend = %d, want %d", tt.name, got, tt.want)
		}
	}
	// a: 3 + 7 = 10; b: 3 (in "first full" b fit but a did not, so neither was added).
	wantSums(t, s, []int64{10, 3}, minute("a", 100, 0, 0), minute("b", 100, 0, 0))
}

func testSpendAllOrNothing(t *testing.T, s state.Store) {
	if got := spend(t, s, minute("x", 7, 0, 4)); got != -1 {
		t.Fatalf("seed Spend = %d, want -1", got)
	}
	// Three counters; the third is over its limit, so neither of the first
	// two may be added.
	got := spend(t, s,
		minute("p", 7, 100, 1),
		state.Spend{Key: "q", Slot: 40, Slots: 1, Limit: 100, Amount: 1, TTL: time.Hour},
		minute("x", 7, 5, 2),
	)
	if got != 2 {
		t.Fatalf("Spend = %d, want 2", got)
	}
	wantSums(t, s, []int64{0, 0, 4},
		minute("p", 7, 0, 0),
		state.Spend{Key: "q", Slot: 40, Slots: 1, TTL: time.Hour},
		minute("x", 7, 0, 0))
}

// testWideValues: counts, slots and amounts past 32 bits (a mute's weight
// is 2^40; a store may keep small values more compactly, issue 18) count
// and check exactly.
func testWideValues(t *testing.T, s state.Store) {
	const weight = int64(1) << 40
	wide := func(slot, limit, amount int64) state.Spend {
		return state.Spend{Key: "wide", Slot: slot, Slots: 2, Limit: limit, Amount: amount, TTL: time.Hour}
	}
	if got := spend(t, s, wide(1<<40, 0, 7)); got != -1 {
		t.Fatalf("Spend at slot 2^40 = %d, want -1", got)
	}
	wantSums(t, s, []int64{7, 7, 0}, wide(1<<40, 0, 0), wide(1<<40+1, 0, 0), wide(1<<40+2, 0, 0))
	if got := spend(t, s, wide(5, weight, weight-1)); got != -1 {
		t.Fatalf("Spend 2^40-1 under limit 2^40 = %d, want -1", got)
	}
	if got := spend(t, s, wide(5, weight, 2)); got != 0 {
		t.Errorf("Spend 2 more under limit 2^40 = %d, want 0", got)
	}
	if got := spend(t, s, wide(5, weight, 1)); got != -1 {
		t.Errorf("Spend 1 more, to exactly 2^40 = %d, want -1", got)
	}
	wantSums(t, s, []int64{weight}, wide(5, 0, 0))
	if err := s.Add(ctxFor(t), []state.Spend{wide(5, 0, -weight-3)}); err != nil {
		t.Fatalf("Add: %v", err)
	}
	wantSums(t, s, []int64{-3}, wide(5, 0, 0))
}

// testOneSlotThenMore: many counters that each hold one slot (visitors'
// days), some of which then gain a second: every sum stays its own.
func testOneSlotThenMore(t *testing.T, s state.Store) {
	day := func(i int, slot, amount int64) state.Spend {
		return state.Spend{Key: fmt.Sprintf("visitor:%d|day", i), Slot: slot, Slots: 24, Amount: amount, TTL: 25 * time.Hour}
	}
	const n = 200
	var first []state.Spend
	for i := range n {
		first = append(first, day(i, 500, int64(i+1)))
	}
	if got := spend(t, s, first...); got != -1 {
		t.Fatalf("Spend = %d, want -1", got)
	}
	for i := 0; i < n; i += 3 {
		if got := spend(t, s, day(i, 501, 1000)); got != -1 {
			t.Fatalf("Spend = %d, want -1", got)
		}
	}
	var at []state.Spend
	want := make([]int64, n)
	for i := range n {
		at = append(at, day(i, 501, 0))
		want[i] = int64(i + 1)
		if i%3 == 0 {
			want[i] += 1000
		}
	}
	wantSums(t, s, want, at...)
	// The window ending at slot 524 no longer holds slot 500.
	if got := sums(t, s, day(0, 524, 0), day(1, 524, 0)); !slices.Equal(got, []int64{1000, 0}) {
		t.Errorf("Sums at slot 524 = %v, want [1000 0]", got)
	}
}

func testSlidingWindow(t *testing.T, s state.Store) {
	// One unit in each of slots 10..15.
	for slot := int64(10); slot <= 15; slot++ {
		if got := spend(t, s, minute("w", slot, 0, 1)); got != -1 {
			t.Fatalf("Spend at slot %d = %d, want -1", slot, got)
		}
	}
	tests := []struct {
		slot int64
		want int64
	}{
		{9, 0},
		{10, 1},
		{12, 3},
		{15, 6}, // 10..15
		{16, 5}, // 11..16: slot 10 no longer counts
		{18, 3}, // 13..18
		{20, 1}, // 15..20
		{21, 0}, // 16..21
	}
	for _, tt := range tests {
		if got := sums(t, s, minute("w", tt.slot, 0, 0)); got[0] != tt.want {
			t.Errorf("window ending at slot %d: sum = %d, want %d", tt.slot, got[0], tt.want)
		}
	}
	// A limit sees only the window: at slot 17 the window 12..17 holds 4.
	if got := spend(t, s, minute("w", 17, 6, 2)); got != -1 {
		t.Errorf("Spend 2 at slot 17 under limit 6 = %d, want -1", got)
	}
	if got := spend(t, s, minute("w", 17, 6, 1)); got != 0 {
		t.Errorf("Spend 1 more at slot 17 under limit 6 = %d, want 0", got)
	}
	// One slot per day: yesterday never counts.
	day := func(n, limit, amount int64) state.Spend {
		return state.Spend{Key: "d", Slot: n, Slots: 1, Limit: limit, Amount: amount, TTL: 48 * time.Hour}
	}
	if got := spend(t, s, day(20000, 5, 5)); got != -1 {
		t.Fatalf("Spend day 20000 = %d, want -1", got)
	}
	if got := spend(t, s, day(20000, 5, 1)); got != 0 {
		t.Errorf("Spend over day 20000 = %d, want 0", got)
	}
	if got := spend(t, s, day(20001, 5, 5)); got != -1 {
		t.Errorf("Spend day 20001 = %d, want -1", got)
	}
}

func testLimitZeroCounts(t *testing.T, s state.Store) {
	for i := range 3 {
		if got := spend(t, s, minute("z", 1, 0, 1000)); got != -1 {
			t.Fatalf("Spend %d with limit 0 = %d, want -1", i, got)
		}
	}
	wantSums(t, s, []int64{3000}, minute("z", 1, 0, 0))
	// A limit that is set afterwards sees the counted amount.
	if got := spend(t, s, minute("z", 1, 3000, 1)); got != 0 {
		t.Errorf("Spend over 3000 = %d, want 0", got)
	}
}

func testNegativeAmountGivesBack(t *testing.T, s state.Store) {
	if got := spend(t, s, minute("n", 5, 10, 10)); got != -1 {
		t.Fatalf("Spend 10 = %d, want -1", got)
	}
	if got := spend(t, s, minute("n", 5, 10, 1)); got != 0 {
		t.Fatalf("Spend over = %d, want 0", got)
	}
	if got := spend(t, s, minute("n", 5, 10, -4)); got != -1 {
		t.Fatalf("Spend -4 = %d, want -1", got)
	}
	wantSums(t, s, []int64{6}, minute("n", 5, 0, 0))
	if err := s.Add(ctxFor(t), []state.Spend{minute("n", 5, 0, -6)}); err != nil {
		t.Fatalf("Add -6: %v", err)
	}
	wantSums(t, s, []int64{0}, minute("n", 5, 0, 0))
	// A give-back is never refused, even when the window is over its limit.
	if err := s.Add(ctxFor(t), []state.Spend{minute("n", 5, 0, 20)}); err != nil {
		t.Fatalf("Add 20: %v", err)
	}
	if got := spend(t, s, minute("n", 5, 10, -5)); got != -1 {
		t.Errorf("Spend -5 over the limit = %d, want -1", got)
	}
	wantSums(t, s, []int64{15}, minute("n", 5, 0, 0))
}

func testAddNeverChecks(t *testing.T, s state.Store) {
	add := []state.Spend{minute("a", 3, 1, 5), minute("b", 3, 1, 7)}
	for range 2 {
		if err := s.Add(ctxFor(t), add); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	wantSums(t, s, []int64{10, 14}, minute("a", 3, 0, 0), minute("b", 3, 0, 0))
}

func testSums(t *testing.T, s state.Store) {
	if err := s.Add(ctxFor(t), []state.Spend{minute("s", 50, 0, 2), minute("s", 52, 0, 3), minute("t", 52, 0, 9)}); err != nil {
		t.Fatalf("Add: %v", err)
	}
	tests := []struct {
		name   string
		spends []state.Spend
		want   []int64
	}{
		{"none", nil, []int64{}},
		{"missing key", []state.Spend{minute("nothing", 52, 0, 0)}, []int64{0}},
		{"two slots", []state.Spend{minute("s", 52, 0, 0)}, []int64{5}},
		{"amount and limit ignored", []state.Spend{minute("s", 52, 1, 100)}, []int64{5}},
		{"narrow window", []state.Spend{{Key: "s", Slot: 52, Slots: 1, TTL: time.Minute}}, []int64{3}},
		{"same key twice", []state.Spend{minute("s", 52, 0, 0), minute("s", 50, 0, 0)}, []int64{5, 2}},
		{"order kept", []state.Spend{minute("t", 52, 0, 0), minute("s", 52, 0, 0)}, []int64{9, 5}},
	}
	for _, tt := range tests {
		got := sums(t, s, tt.spends...)
		if len(got) == 0 && len(tt.want) == 0 {
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: Sums = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func testConcurrentSpendExact(t *testing.T, s state.Store) {
	const (
		workers  = 32
		attempts = 300
		limit    = 100
	)
	// Each attempt spends on a shared per-minute counter and a per-day
	// counter with a looser limit; only the minute counter binds.
	spends := []state.Spend{
		minute("c|rpm", 900, limit, 1),
		{Key: "c|rpd", Slot: 3, Slots: 1, Limit: 1000, Amount: 1, TTL: 48 * time.Hour},
	}
	var next, passed, refused atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= attempts {
				failed, err := s.Spend(context.Background(), spends)
				if err != nil {
					errs <- err
					return
				}
				switch failed {
				case -1:
					passed.Add(1)
				case 0:
					refused.Add(1)
				default:
					errs <- fmt.Errorf("Spend failed at %d, want -1 or 0", failed)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Spend: %v", err)
	}
	if got := passed.Load(); got != limit {
		t.Errorf("passed = %d, want %d", got, limit)
	}
	if got := refused.Load(); got != attempts-limit {
		t.Errorf("refused = %d, want %d", got, attempts-limit)
	}
	wantSums(t, s, []int64{limit, limit}, spends...)
}

func restsAt(t *testing.T, s state.Store, now time.Time) []state.Rest {
	t.Helper()
	got, err := s.Rests(ctxFor(t), now)
	if err != nil {
		t.Fatalf("Rests: %v", err)
	}
	slices.SortFunc(got, func(a, b state.Rest) int { return strings.Compare(a.Key, b.Key) })
	return got
}

func setRest(t *testing.T, s state.Store, r state.Rest) {
	t.Helper()
	if err := s.SetRest(ctxFor(t), r); err != nil {
		t.Fatalf("SetRest(%s): %v", r.Key, err)
	}
}

func clearRest(t *testing.T, s state.Store, key string, manual bool) {
	t.Helper()
	if err := s.ClearRest(ctxFor(t), key, manual); err != nil {
		t.Fatalf("ClearRest(%s, %v): %v", key, manual, err)
	}
}

// SameRest reports whether two rests are equal, comparing times as instants.
func SameRest(a, b state.Rest) bool {
	return a.Key == b.Key && a.Class == b.Class && a.Reason == b.Reason &&
		a.Manual == b.Manual && a.Until.Equal(b.Until) && a.Since.Equal(b.Since)
}

// FormatRest formats a rest for a test message; it holds no secrets, only
// the key, class, reason and times.
func FormatRest(r state.Rest) string {
	until := "lifted"
	if !r.Until.IsZero() {
		until = r.Until.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("{%s %s %q manual=%v until=%s since=%s}",
		r.Key, r.Class, r.Reason, r.Manual, until, r.Since.UTC().Format(time.RFC3339Nano))
}

func wantRests(t *testing.T, s state.Store, now time.Time, want ...state.Rest) {
	t.Helper()
	got := restsAt(t, s, now)
	slices.SortFunc(want, func(a, b state.Rest) int { return strings.Compare(a.Key, b.Key) })
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = SameRest(got[i], want[i])
	}
	if !ok {
		f := func(rs []state.Rest) []string {
			out := make([]string, len(rs))
			for i, r := range rs {
				out[i] = FormatRest(r)
			}
			return out
		}
		t.Errorf("Rests(%s) = %v, want %v", now.UTC().Format(time.RFC3339), f(got), f(want))
	}
}

// base returns the wall-clock time rounded to a millisecond, so that a store
// that keeps millisecond precision compares equal.
func base() time.Time { return time.Now().Round(0).Truncate(time.Millisecond) }

func testRests(t *testing.T, s state.Store) {
	now := base()
	a := state.Rest{Key: "groq/llama", Until: now.Add(time.Minute), Class: "rate_minute", Reason: "429 rpm", Since: now}
	b := state.Rest{Key: "provider:groq", Until: now.Add(time.Hour), Class: "auth", Reason: "401", Since: now}
	wantRests(t, s, now)
	setRest(t, s, a)
	setRest(t, s, b)
	wantRests(t, s, now, a, b)
	// A newer automatic rest replaces an automatic one.
	a2 := a
	a2.Until, a2.Class, a2.Reason = now.Add(5*time.Minute), "overloaded", "503"
	setRest(t, s, a2)
	wantRests(t, s, now, a2, b)
	clearRest(t, s, a.Key, false)
	wantRests(t, s, now, b)
	clearRest(t, s, "never-set", false)
	clearRest(t, s, "never-set", true)
	wantRests(t, s, now, b)
}

func testExpiredRestHidden(t *testing.T, s state.Store) {
	now := base()
	r := state.Rest{Key: "m", Until: now.Add(time.Minute), Class: "rate_minute", Since: now}
	over := state.Rest{Key: "over", Until: now.Add(-time.Second), Class: "overloaded", Since: now.Add(-time.Minute)}
	setRest(t, s, r)
	setRest(t, s, over)
	wantRests(t, s, now, r)
	wantRests(t, s, now.Add(59*time.Second), r)
	wantRests(t, s, now.Add(time.Minute))
	wantRests(t, s, now.Add(2*time.Minute))
}

func testManualRestWins(t *testing.T, s state.Store) {
	now := base()
	pause := state.Rest{Key: "r", Class: "paused", Reason: "by admin", Manual: true, Since: now}
	auto := state.Rest{Key: "r", Until: now.Add(time.Minute), Class: "overloaded", Reason: "503", Since: now}
	setRest(t, s, pause)
	setRest(t, s, auto) // must not replace the pause
	wantRests(t, s, now, pause)
	clearRest(t, s, "r", false) // a probe that succeeded must not lift it
	wantRests(t, s, now, pause)
	// A hand's new pause replaces a hand's pause; an automatic rest is
	// replaced by a pause.
	pause2 := pause
	pause2.Reason = "maintenance"
	setRest(t, s, pause2)
	setRest(t, s, state.Rest{Key: "s", Until: now.Add(time.Minute), Class: "overloaded", Since: now})
	pauseS := state.Rest{Key: "s", Class: "paused", Manual: true, Since: now}
	setRest(t, s, pauseS)
	wantRests(t, s, now, pause2, pauseS)
	clearRest(t, s, "r", true)
	wantRests(t, s, now, pauseS)
	// Once lifted, an automatic rest may be set again.
	setRest(t, s, auto)
	wantRests(t, s, now, auto, pauseS)
}

func testClearRest(t *testing.T, s state.Store) {
	now := base()
	auto := state.Rest{Key: "a", Until: now.Add(time.Minute), Class: "timeout", Since: now}
	setRest(t, s, auto)
	clearRest(t, s, "a", true) // a hand lifts an automatic rest too
	wantRests(t, s, now)
	setRest(t, s, auto)
	clearRest(t, s, "a", false)
	wantRests(t, s, now)
}

func testPauseUntilLifted(t *testing.T, s state.Store) {
	now := base()
	pause := state.Rest{Key: "provider:mistral", Class: "paused", Reason: "budget", Manual: true, Since: now}
	setRest(t, s, pause)
	for _, at := range []time.Time{now, now.Add(24 * time.Hour), now.AddDate(10, 0, 0)} {
		wantRests(t, s, at, pause)
	}
	got := restsAt(t, s, now)
	if len(got) != 1 || !got[0].Until.IsZero() {
		t.Fatalf("paused rest Until = %v, want the zero time", got)
	}
	if !got[0].Active(now.AddDate(100, 0, 0)) {
		t.Errorf("pause is not active in a hundred years")
	}
	clearRest(t, s, pause.Key, true)
	wantRests(t, s, now)
}

func testNotes(t *testing.T, s state.Store) {
	ctx := ctxFor(t)
	set := func(key, value string) {
		t.Helper()
		if err := s.SetNote(ctx, key, []byte(value), time.Hour); err != nil {
			t.Fatalf("SetNote(%q): %v", key, err)
		}
	}
	want := func(prefix string, w map[string]string) {
		t.Helper()
		got, err := s.Notes(ctx, prefix)
		if err != nil {
			t.Fatalf("Notes(%q): %v", prefix, err)
		}
		gs := make(map[string]string, len(got))
		for k, v := range got {
			gs[k] = string(v)
		}
		if fmt.Sprint(gs) != fmt.Sprint(w) {
			t.Errorf("Notes(%q) = %v, want %v", prefix, gs, w)
		}
	}
	want("limit:", map[string]string{})
	set("limit:groq/a|rpd", "1000")
	set("limit:groq/a|rpd", "500") // replaces
	set("limit:g*[?]|tpm", "6000") // pattern characters are plain text
	set("latency:groq/a", "120")
	want("limit:", map[string]string{"limit:groq/a|rpd": "500", "limit:g*[?]|tpm": "6000"})
	want("limit:g*", map[string]string{"limit:g*[?]|tpm": "6000"})
	want("latency:", map[string]string{"latency:groq/a": "120"})
	want("", map[string]string{"limit:groq/a|rpd": "500", "limit:g*[?]|tpm": "6000", "latency:groq/a": "120"})
	if err := s.SetNote(ctx, "x", []byte("1"), 0); err == nil {
		t.Error("SetNote with ttl 0: no error")
	}
	if err := s.SetNote(ctx, "", []byte("1"), time.Hour); err == nil {
		t.Error("SetNote with an empty key: no error")
	}
}
