package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

// TestAddLaterLosesNothing: adds queued after answers reach Redis, for
// every instance, once flushed and at the latest at Close; a second
// instance sees them.
func TestAddLaterLosesNothing(t *testing.T) {
	u := redisURL(t)
	ns := newNamespace(t, u)
	other := openStore(t, Options{URL: u, Namespace: ns})
	s, err := Open(context.Background(), Options{URL: u, Namespace: ns, OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		s.AddLater([]state.Spend{rpm(0, 1), day(0, 2)})
	}
	s.Flush(context.Background())
	if got := sumOf(t, other, rpm(0, 0)); got != 100 {
		t.Errorf("after Flush, the other instance sees %d in the minute, want 100", got)
	}
	for range 50 {
		s.AddLater([]state.Spend{rpm(0, -1), day(0, 2)})
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := sumOf(t, other, rpm(0, 0)); got != 50 {
		t.Errorf("after Close, the other instance sees %d in the minute, want 100 - 50 = 50", got)
	}
	if got := sumOf(t, other, day(0, 0)); got != 300 {
		t.Errorf("after Close, the other instance sees %d in the day, want 150 adds of 2 = 300", got)
	}
}

// TestSpendCountsWhatWasQueued: a spend checks with the adds queued before
// it (a request in flight given back, say), whether they are still queued,
// on their way, or applied: a caller with one request at a time is never
// refused by its own last request.
func TestSpendCountsWhatWasQueued(t *testing.T) {
	u := redisURL(t)
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u)})
	conc := state.Spend{Key: "caller:x|conc", Slot: 100, Slots: 2, Limit: 1, Amount: 1, TTL: 30 * time.Minute}
	back := conc
	back.Amount, back.Limit = -1, 0
	for i := range 200 {
		got, err := s.Spend(context.Background(), []state.Spend{conc})
		if err != nil || got != -1 {
			t.Fatalf("request %d: Spend = %d, %v; want -1: the last one was given back before it", i, got, err)
		}
		s.AddLater([]state.Spend{back})
	}
	s.Flush(context.Background())
	if got := sumOf(t, s, conc); got != 0 {
		t.Errorf("in flight after 200 requests each given back: %d, want 0", got)
	}
}

// TestSpendWaitsForAGiveBackOnItsWay: near its limit, a spend waits for a
// batch already on its way that gives back to its counter, rather than be
// refused by a count that batch lowers.
func TestSpendWaitsForAGiveBackOnItsWay(t *testing.T) {
	u := redisURL(t)
	taken, release := make(chan struct{}), make(chan struct{})
	var once, twice sync.Once
	hook := func(what string) {
		switch what {
		case "batch":
			once.Do(func() {
				close(taken)
				<-release // until the spend waits for it
			})
		case "waiting":
			twice.Do(func() { close(release) })
		}
	}
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u), hook: hook})
	t.Cleanup(func() { twice.Do(func() { close(release) }) }) // before Close
	conc := state.Spend{Key: "caller:x|conc", Slot: 100, Slots: 2, Limit: 1, Amount: 1, TTL: 30 * time.Minute}
	back := conc
	back.Amount, back.Limit = -1, 0
	mustSpend(t, s, conc, -1)
	s.AddLater([]state.Spend{back})
	<-taken // the flusher holds the give-back, not yet sent
	n, err := s.Spend(context.Background(), []state.Spend{conc})
	if err != nil || n != -1 {
		t.Errorf("the next request, its last one given back on the way: Spend = %d, %v; want -1", n, err)
	}
}

// TestAddLaterWithRedisAway: a batch Redis cannot take goes to Local,
// pending, and reaches Redis when it returns.
func TestAddLaterWithRedisAway(t *testing.T) {
	u := redisURL(t)
	ns := newNamespace(t, u)
	opt, _ := redis.ParseURL(u)
	p := startProxy(t, opt.Addr)
	local, err := memstore.Open(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	s := openStore(t, Options{URL: p.url(t, u), Namespace: ns, Local: local, OpTimeout: 100 * time.Millisecond})
	direct := openStore(t, Options{URL: u, Namespace: ns})
	eventually(t, "connect through the proxy", func() bool { return s.Health().Connected })
	mustSpend(t, s, rpm(10, 3), -1)

	p.down()
	s.AddLater([]state.Spend{rpm(0, 4)})
	s.Flush(context.Background())
	if s.Health().Connected {
		t.Fatalf("still connected with Redis away")
	}
	if got := sumOf(t, s, rpm(0, 0)); got != 7 {
		t.Errorf("with Redis away, the instance counts %d, want 3 + 4 = 7", got)
	}
	p.up(t)
	eventually(t, "reconnect", func() bool { return s.Health().Connected })
	if got := sumOf(t, direct, rpm(0, 0)); got != 7 {
		t.Errorf("after Redis returned, Redis counts %d, want the add made while away too: 7", got)
	}
}

// TestSpendSplit: the first group all or nothing, then the second only if
// the first was added.
func TestSpendSplit(t *testing.T) {
	u := redisURL(t)
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u)})
	caller := state.Spend{Key: "caller:x|hour", Slot: 10, Slots: 6, Limit: 2, Amount: 1, TTL: time.Hour}
	route := state.Spend{Key: "m1|rpd", Slot: 10, Slots: 1, Limit: 1, Amount: 1, TTL: time.Hour}
	split := func(want int) {
		t.Helper()
		got, err := s.SpendSplit(context.Background(), []state.Spend{caller, route}, 1)
		if err != nil || got != want {
			t.Fatalf("SpendSplit = %d, %v; want %d", got, err, want)
		}
	}
	split(-1) // both
	split(1)  // the route is spent: the caller is counted alone
	split(0)  // the caller is spent: nothing is counted
	if c, r := sumOf(t, s, caller), sumOf(t, s, route); c != 2 || r != 1 {
		t.Errorf("caller %d, route %d; want 2 and 1", c, r)
	}
}
