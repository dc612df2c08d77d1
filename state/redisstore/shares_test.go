package redisstore

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
)

// big is a window far from its limit: shares are granted on it.
func big(amount int64) state.Spend {
	return state.Spend{Key: "mock/model|rpd", Slot: 500, Slots: 25, Limit: 1_000_000, Amount: amount, TTL: 26 * time.Hour}
}

// rawCount is the count Redis holds for sp's current slot in s's
// namespace: what was spent and what is set aside in shares. It reads
// with a client of its own, so that it works after s is closed.
func rawCount(t *testing.T, s *Store, sp state.Spend) int64 {
	t.Helper()
	opt, err := redis.ParseURL(redisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	n, err := c.Get(context.Background(), s.counterKey(sp.Key, sp.Slot)).Int64()
	if err != nil {
		t.Fatalf("GET %s: %v", sp.Key, err)
	}
	return n
}

// TestSharesSpareRoundTrips: far from its limit, a window spent on again
// and again costs a round trip per share, not per spend (issue 18: Redis
// mode made a round trip per request), and every reading of it counts
// what was spent, not what is set aside.
func TestSharesSpareRoundTrips(t *testing.T) {
	u := redisURL(t)
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u)})
	var trips atomic.Int64
	ctx := CountRoundTrips(context.Background(), &trips)
	const n = 1000
	for range n {
		if failed, err := s.Spend(ctx, []state.Spend{big(1), rpm(100_000, 1)}); err != nil || failed != -1 {
			t.Fatalf("Spend = %d, %v; want -1, nil", failed, err)
		}
	}
	// The first spend asks for nothing, each later trip gets 128 more: 9
	// round trips, and a few more if a slow machine passed for an outage
	// (the shares then go back).
	if got := trips.Load(); got > n/50 {
		t.Errorf("%d spends made %d round trips, want at most %d", n, got, n/50)
	}
	if got := sumOf(t, s, big(0)); got != n {
		t.Errorf("Sums = %d after %d spends, want %d", got, n, n)
	}
	if raw := rawCount(t, s, big(0)); raw <= n {
		t.Errorf("Redis holds %d, want more than the %d spent: a share set aside", raw, n)
	}
	// Close gives the share back.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if raw := rawCount(t, s, big(0)); raw != n {
		t.Errorf("Redis holds %d after Close, want the %d spent", raw, n)
	}
}

// TestSharesNeverPassALimitTogether: instances holding shares still spend
// a window's limit exactly, never more, and nothing is set aside once
// they gave their shares back.
func TestSharesNeverPassALimitTogether(t *testing.T) {
	u := redisURL(t)
	ns := newNamespace(t, u)
	stores := []*Store{openStore(t, Options{URL: u, Namespace: ns}), openStore(t, Options{URL: u, Namespace: ns}), openStore(t, Options{URL: u, Namespace: ns})}
	const limit = 6400 // shares of up to 128 at first, then smaller
	sp := big(1)
	sp.Limit = limit
	if got := spendTogether(t, stores, 24, 3*limit, sp); got != limit {
		t.Errorf("passed = %d over three instances holding shares, want %d", got, limit)
	}
	for _, s := range stores {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if raw := rawCount(t, stores[0], big(0)); raw != limit {
		t.Errorf("Redis holds %d after every instance closed, want %d", raw, limit)
	}
}

// TestShareGivenBackWhenIdle: a share this instance stops spending on is
// given back at the maintenance loop's tick after next (a second or two),
// so that another instance near the limit gets it; one in use is kept.
func TestShareGivenBackWhenIdle(t *testing.T) {
	u := redisURL(t)
	clk := clock.NewFake(t0)
	hook, views := hooks()
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u), Clock: clk, hook: hook})
	// The refresh that follows the first subscribe sweeps too: past it,
	// only the clock's ticks and the test's own sweeps do.
	waitHook(t, views, "view")
	mustSpend(t, s, big(1), -1)
	mustSpend(t, s, big(1), -1)
	if raw := rawCount(t, s, big(0)); raw <= 2 {
		t.Fatalf("Redis holds %d after two spends, want a share set aside", raw)
	}
	// In use at every tick: kept.
	spent := int64(2)
	for range 3 {
		s.sweepShares(false)
		mustSpend(t, s, big(1), -1)
		spent++
	}
	if raw := rawCount(t, s, big(0)); raw <= spent {
		t.Fatalf("Redis holds %d after %d spends at every tick, want the share still set aside", raw, spent)
	}
	tick(t, "the idle share given back", clk, func() bool {
		s.Flush(context.Background())
		return rawCount(t, s, big(0)) == spent
	})
	if got := sumOf(t, s, big(0)); got != spent {
		t.Errorf("Sums = %d, want %d", got, spent)
	}
}

// TestShareGivenBackWhenItsSlotMovesOn: a share of a slot that has ended
// is given back to that slot.
func TestShareGivenBackWhenItsSlotMovesOn(t *testing.T) {
	u := redisURL(t)
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u)})
	mustSpend(t, s, big(1), -1)
	mustSpend(t, s, big(1), -1)
	next := big(1)
	next.Slot++
	mustSpend(t, s, next, -1)
	s.Flush(context.Background())
	if raw := rawCount(t, s, big(0)); raw != 2 {
		t.Errorf("the old slot holds %d, want the 2 spent in it", raw)
	}
	if got := sumOf(t, s, next); got != 3 {
		t.Errorf("the window's sum = %d, want 3", got)
	}
}

// TestNoShareNearALimitOrForExact: a small limit, a window near its limit
// and an Exact spend are checked against Redis at every spend, so that a
// caller allowed a few requests, or muted by another instance, is
// refused at once.
func TestNoShareNearALimitOrForExact(t *testing.T) {
	u := redisURL(t)
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u)})
	small := big(1)
	small.Key, small.Limit = "caller|hour", 31
	exact := big(1)
	exact.Key, exact.Exact = "caller|mute", true
	near := big(1)
	near.Key, near.Limit = "route|rpd", 1000
	for _, sp := range []state.Spend{small, exact, near} {
		if sp == near {
			fill := sp
			fill.Amount = 990
			mustSpend(t, s, fill, -1)
		}
		for range 3 {
			mustSpend(t, s, sp, -1)
		}
	}
	for sp, want := range map[state.Spend]int64{small: 3, exact: 3, near: 993} {
		if raw := rawCount(t, s, sp); raw != want {
			t.Errorf("%s: Redis holds %d, want %d (no share)", sp.Key, raw, want)
		}
	}
	// Another instance mutes: the next Exact spend is refused here.
	other := openStore(t, Options{URL: u, Namespace: s.tag[1 : len(s.tag)-1]})
	weight := exact
	weight.Amount = 1 << 40
	weight.Limit = 0
	if err := other.Add(context.Background(), []state.Spend{weight}); err != nil {
		t.Fatal(err)
	}
	mute := exact
	mute.Limit = 1 << 40
	mustSpend(t, s, mute, 0)
}

// TestAddsAfterAnswerGoToTheShare: the adds after an answer to a window
// held here (a give-back, tokens settled) change the share, and cost no
// round trip.
func TestAddsAfterAnswerGoToTheShare(t *testing.T) {
	u := redisURL(t)
	hook, views := hooks()
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u), Clock: clock.NewFake(t0), hook: hook})
	waitHook(t, views, "view") // no sweep from here on: the clock stands
	mustSpend(t, s, big(10), -1)
	mustSpend(t, s, big(10), -1)
	raw := rawCount(t, s, big(0))
	back := big(-5)
	back.Limit = 1_000_000
	more := big(3)
	more.Limit = 0
	s.AddLater([]state.Spend{back, more})
	s.Flush(context.Background())
	if got := rawCount(t, s, big(0)); got != raw {
		t.Errorf("Redis holds %d after the adds, want %d unchanged: they went to the share", got, raw)
	}
	if got := sumOf(t, s, big(0)); got != 18 {
		t.Errorf("Sums = %d, want 18 (20 spent, 5 given back, 3 added)", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rawCount(t, s, big(0)); got != 18 {
		t.Errorf("Redis holds %d after Close, want 18", got)
	}
}

// TestTallyOfAWindowWithoutALimit: adds to a window nothing checks (a
// route's tokens before a header taught their limit) are summed here and
// pushed at the next tick, not a round trip each; this instance counts
// them at once, and a limit checked later sees them.
func TestTallyOfAWindowWithoutALimit(t *testing.T) {
	u := redisURL(t)
	clk := clock.NewFake(t0)
	hook, views := hooks()
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u), Clock: clk, hook: hook})
	// The refresh that follows the first subscribe also pushes tallies:
	// past it, only the clock's ticks do.
	waitHook(t, views, "view")
	tokens := big(0)
	tokens.Key, tokens.Limit = "provider:mock|tpm", 0
	var trips atomic.Int64
	for range 50 {
		add := tokens
		add.Amount = 10
		s.AddLater([]state.Spend{add})
	}
	s.applyQueued(CountRoundTrips(context.Background(), &trips))
	if n := trips.Load(); n != 0 {
		t.Errorf("50 adds to a window without a limit made %d round trips, want 0 before the tick", n)
	}
	if got := sumOf(t, s, tokens); got != 500 {
		t.Errorf("this instance counts %d, want 500", got)
	}
	tick(t, "the tally pushed", clk, func() bool {
		s.applyQueued(context.Background())
		n, _ := s.client.Get(context.Background(), s.counterKey(tokens.Key, tokens.Slot)).Int64()
		return n == 500
	})

	// Tallied again, then a limit learned: the check counts the tally.
	more := tokens
	more.Amount = 400
	s.AddLater([]state.Spend{more})
	limited := tokens
	limited.Limit, limited.Amount = 1000, 200
	mustSpend(t, s, limited, 0)
	if got := sumOf(t, s, tokens); got != 900 {
		t.Errorf("after the refused spend, %d counted, want 900", got)
	}
}

// TestViewKeepsTheNewestSlots: the view of the shared counts stops growing
// at viewCap slots, dropping those used longest ago, so that a million
// visitors a day do not make an instance hold a million slots (issue 18,
// item 4); a window used at every request stays.
func TestViewKeepsTheNewestSlots(t *testing.T) {
	u := redisURL(t)
	clk := clock.NewFake(t0)
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u), Clock: clk})
	route := big(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range 3 * viewCap {
		clk.Advance(time.Millisecond)
		visitor := state.Spend{Key: "caller:" + strconv.Itoa(i) + "|hour", Slot: 7, Slots: 6, TTL: time.Hour}
		s.learnLocked([]state.Spend{visitor, route}, []int64{1, 0, int64(i + 1), 0}, clk.Now())
	}
	if n := len(s.view); n > viewCap {
		t.Errorf("the view holds %d slots after %d visitors, want at most %d", n, 3*viewCap, viewCap)
	}
	if s.view[slotKey{key: route.Key, slot: route.Slot}] == nil {
		t.Errorf("the route's slot, used at every request, was dropped from the view")
	}
	if s.view[slotKey{key: "caller:0|hour", slot: 7}] != nil {
		t.Errorf("the first visitor's slot, used longest ago, is still in the view")
	}
}

// TestShareStaysAGrant: a window spent on and given back at every request
// (a caller's requests in flight) whose call goes to Redis for another
// window's sake is taken from its share, not asked of Redis again: its
// share used to grow by a grant at every such trip, until the shares
// alone filled the window and the caller was refused for "10000 requests
// in progress" with 64 in flight (bench/run.sh, Redis, 64 connections).
func TestShareStaysAGrant(t *testing.T) {
	u := redisURL(t)
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u)})
	conc := big(1)
	conc.Key = "caller:x|conc"
	hour := big(1)
	hour.Key, hour.Limit = "caller:x|hour", 1024 // shares of 32: a trip every 32
	for i := range 800 {
		if failed, err := s.Spend(context.Background(), []state.Spend{conc, hour}); err != nil || failed != -1 {
			t.Fatalf("request %d: Spend = %d, %v; want -1, nil", i, failed, err)
		}
		leave := conc
		leave.Amount = -1
		s.AddLater([]state.Spend{leave})
	}
	s.Flush(context.Background())
	if raw := rawCount(t, s, conc); raw > 2*maxShare {
		t.Errorf("Redis counts %d requests in flight with none, want at most a share (%d)", raw, 2*maxShare)
	}
	if got := sumOf(t, s, conc); got != 0 {
		t.Errorf("Sums = %d requests in flight, want 0", got)
	}
}

// TestUnshareableWindowsKeepNoRecord: a window whose limit is too small to
// be shared (every caller's hour, day, tokens and requests at once) leaves
// no record of its key and slot among the shares, only a hash (issue 18,
// item 4: four records of 130 bytes a visitor, for every visitor of the
// last second or two); an add to it without a limit still goes to Redis
// at once, not to a tally, since another instance checks it.
func TestUnshareableWindowsKeepNoRecord(t *testing.T) {
	u := redisURL(t)
	clk := clock.NewFake(t0)
	hook, views := hooks()
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u), Clock: clk, hook: hook})
	waitHook(t, views, "view") // the refresh after the first subscribe; then only ticks sweep
	const visitors = 200
	hour := func(i int) state.Spend {
		return state.Spend{Key: "caller:" + strconv.Itoa(i) + "|hour", Slot: 7, Slots: 6, Limit: 15, Amount: 1, TTL: 70 * time.Minute}
	}
	for i := range visitors {
		mustSpend(t, s, hour(i), -1)
		mustSpend(t, s, hour(i), -1) // spent on again: still nothing to share
	}
	for i := range visitors {
		add := hour(i)
		add.Limit = 0
		s.AddLater([]state.Spend{add})
	}
	s.applyQueued(context.Background())
	for i := range visitors {
		if got := rawCount(t, s, hour(i)); got != 3 {
			t.Fatalf("visitor %d: Redis counts %d, want 3: an add to a window checked here was tallied", i, got)
		}
	}
	s.shares.mu.Lock()
	n := len(s.shares.m)
	s.shares.mu.Unlock()
	if n != 0 {
		t.Errorf("the shares hold %d records after %d visitors' windows that can never be shared, want 0", n, visitors)
	}
}

// TestSharesInTheLastEighthOfAFarLimit: a window whose limit is far above
// its spends keeps its shares in the last eighth of the limit, while what
// is left is many shares (issue 18: a day of a billion tokens was asked
// about at every request for its last 125 million, and Redis mode ran at
// 0.55 of its rate until midnight); near the limit in shares, none.
func TestSharesInTheLastEighthOfAFarLimit(t *testing.T) {
	u := redisURL(t)
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u)})
	far := big(1) // asks for 128: far from its limit while 8 × 128 are left
	fill := far
	fill.Amount = far.Limit - 10_000
	mustSpend(t, s, fill, -1)
	for range 3 {
		mustSpend(t, s, far, -1)
	}
	if raw := rawCount(t, s, far); raw <= fill.Amount+3 {
		t.Errorf("Redis holds %d after %d spent in the last eighth of a limit of %d, want a share set aside", raw, fill.Amount+3, far.Limit)
	}
	near := big(1)
	near.Key = "route|tpd"
	fill = near
	fill.Amount = near.Limit - 1_000 // under 8 × 128 left
	mustSpend(t, s, fill, -1)
	for range 3 {
		mustSpend(t, s, near, -1)
	}
	if raw := rawCount(t, s, near); raw != fill.Amount+3 {
		t.Errorf("Redis holds %d with under eight shares left, want the %d spent (no share)", raw, fill.Amount+3)
	}
}

// TestSharesOfAFarLimitNeverPassItTogether: three instances sharing a
// window far above its spends, from its last eighth down to nothing, spend
// it exactly: the shares they keep past the eighth never let them pass it.
func TestSharesOfAFarLimitNeverPassItTogether(t *testing.T) {
	u := redisURL(t)
	ns := newNamespace(t, u)
	stores := []*Store{openStore(t, Options{URL: u, Namespace: ns}), openStore(t, Options{URL: u, Namespace: ns}), openStore(t, Options{URL: u, Namespace: ns})}
	sp := big(1) // a limit of 1,000,000: shares of 128 while 8 × 128 × 3 are left
	const left = 10_000
	fill := sp
	fill.Amount = sp.Limit - left
	mustSpend(t, stores[0], fill, -1)
	const first = 2_000
	if got := spendTogether(t, stores, 24, first, sp); got != first {
		t.Fatalf("passed = %d of %d, far from the limit", got, first)
	}
	if raw := rawCount(t, stores[0], big(0)); raw <= fill.Amount+first {
		t.Errorf("Redis holds %d after %d spent, want more: shares set aside in the last eighth", raw, fill.Amount+first)
	}
	if got := spendTogether(t, stores, 24, 3*left, sp); got != left-first {
		t.Errorf("passed = %d of the last %d, over three instances holding shares", got, left-first)
	}
	for _, s := range stores {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if raw := rawCount(t, stores[0], big(0)); raw != sp.Limit {
		t.Errorf("Redis holds %d after every instance closed, want %d", raw, sp.Limit)
	}
}
