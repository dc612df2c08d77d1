package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/state"
)

var t0 = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// day is a spend on a day's one slot.
func day(limit, amount int64) state.Spend {
	return state.Spend{Key: "groq/m|rpd", Slot: 20619, Slots: 1, Limit: limit, Amount: amount, TTL: 26 * time.Hour}
}

// spendAll spends 1 at a time on s until a spend is refused, and returns
// how many passed.
func spendAll(t *testing.T, s *Store, limit int64) int {
	t.Helper()
	return spendUntilRefused(t, s, day(limit, 1))
}

// spendUntilRefused spends sp on s again and again until a spend is
// refused, and returns how many passed.
func spendUntilRefused(t *testing.T, s *Store, sp state.Spend) int {
	t.Helper()
	for n := 0; n < 1000; n++ {
		failed, err := s.Spend(context.Background(), []state.Spend{sp})
		if err != nil {
			t.Fatalf("Spend: %v", err)
		}
		if failed >= 0 {
			return n
		}
	}
	t.Fatal("Spend never refused")
	return 0
}

// waitView waits for s's view of sp's window to see want, a "view" event
// at a time, advancing nothing.
func waitView(t *testing.T, s *Store, views <-chan string, sp state.Spend, want int64) {
	t.Helper()
	for {
		s.mu.Lock()
		seen, own := s.windowLocked(sp, s.clock.Now())
		s.mu.Unlock()
		if seen+own == want {
			return
		}
		waitHook(t, views, "view")
	}
}

// tick advances clk a second at a time, firing the stores' probes and
// refreshes, until cond holds.
func tick(t *testing.T, what string, clk *clock.Fake, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		clk.Advance(time.Second)
		time.Sleep(10 * time.Millisecond) // waiting for Redis and the stores' goroutines, not for the clock
	}
}

// TestOutageSpendsAShareAndReseeds: two instances cut off from Redis spend
// together only what was left of a cap, each its share (issue 10, item 4:
// each fell back to a whole local budget), and a Redis restarted empty is
// re-seeded with everything they knew, not only their outage's spends.
func TestOutageSpendsAShareAndReseeds(t *testing.T) {
	rs := testenv.StartRedis(t)
	clk := clock.NewFake(t0)
	hookA, viewsA := hooks()
	hookB, viewsB := hooks()
	const limit = 20
	a := openStore(t, Options{URL: rs.URL(), Namespace: "share", Clock: clk, OpTimeout: 300 * time.Millisecond, hook: hookA})
	b := openStore(t, Options{URL: rs.URL(), Namespace: "share", Clock: clk, OpTimeout: 300 * time.Millisecond, hook: hookB})
	mustSpend(t, a, day(limit, 3), -1)
	mustSpend(t, b, day(limit, 4), -1)
	// a last saw 3; its refresh, a second later, sees 7. A "view" may come
	// from a refresh that ran before b's spend: wait for the view itself.
	clk.Advance(time.Second)
	waitView(t, a, viewsA, day(limit, 0), 7)
	waitView(t, b, viewsB, day(limit, 0), 7)
	for name, s := range map[string]*Store{"a": a, "b": b} {
		if n := s.Health().Instances; n != 2 {
			t.Errorf("%s: Health.Instances = %d, want 2", name, n)
		}
	}

	rs.Kill()
	// 13 were left; each may spend half, 6.
	if n := spendAll(t, a, limit); n != 6 {
		t.Errorf("a spent %d with Redis away, want 6 (half of the 13 left, rounded down)", n)
	}
	if n := spendAll(t, b, limit); n != 6 {
		t.Errorf("b spent %d with Redis away, want 6", n)
	}
	if got := sumOf(t, a, day(0, 0)); got != 13 {
		t.Errorf("a's count with Redis away = %d, want 13 (7 seen, 6 its own)", got)
	}

	rs.Start() // empty
	tick(t, "both back on Redis", clk, func() bool { return a.Health().Connected && b.Health().Connected })
	if got := sumOf(t, a, day(0, 0)); got != 19 {
		t.Errorf("Redis's count after it came back empty = %d, want 19 (7 before, 12 during the outage)", got)
	}
	mustSpend(t, b, day(limit, 2), 0)
	mustSpend(t, b, day(limit, 1), -1)
	mustSpend(t, a, day(limit, 1), 0)
}

// TestInstancesFollowHeartbeats: an instance counts the instances whose
// heartbeat it sees, and one that closes stops counting at once.
func TestInstancesFollowHeartbeats(t *testing.T) {
	u := redisURL(t)
	ns := newNamespace(t, u)
	a := openStore(t, Options{URL: u, Namespace: ns})
	if n := a.Health().Instances; n != 1 {
		t.Errorf("alone: Health.Instances = %d, want 1", n)
	}
	b, err := Open(context.Background(), Options{URL: u, Namespace: ns, OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mustSpend(t, a, rpm(0, 1), -1)
	if n := a.Health().Instances; n != 2 {
		t.Errorf("with b open: Health.Instances = %d, want 2", n)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	mustSpend(t, a, rpm(0, 1), -1)
	if n := a.Health().Instances; n != 1 {
		t.Errorf("after b closed: Health.Instances = %d, want 1", n)
	}
}
