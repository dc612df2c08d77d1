package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

// TestLocalMirrorsOnlyTheView: Local mirrors this instance's spends on the
// slots the view holds, and no others (issue 18, item 4: mirroring every
// visitor's counts made Redis mode hold local mode's memory again, 100 MB
// a million visitors). Half again as many visitors as the view keeps ask
// once, each with a route's day: the route and the visitors the view kept
// are in Local with their counts; the visitors it dropped are not.
func TestLocalMirrorsOnlyTheView(t *testing.T) {
	u := redisURL(t)
	ns := newNamespace(t, u)
	clk := clock.NewFake(t0)
	local, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	s := openStore(t, Options{URL: u, Namespace: ns, Local: local, Clock: clk})
	if !s.Health().Connected {
		t.Fatalf("store not connected to Redis: %s", s.Health().LastError)
	}
	ctx := context.Background()
	visitor := func(i int) state.Spend {
		return state.Spend{Key: fmt.Sprintf("visitor:%d|day", i), Slot: 1000, Slots: 24, Limit: 40, Amount: 1, TTL: 25 * time.Hour}
	}
	route := state.Spend{Key: "groq/m|rpd", Slot: 20619, Slots: 1, Limit: 1 << 40, Amount: 1, TTL: 26 * time.Hour}
	const n, batch = viewCap * 3 / 2, 64
	batches := 0
	for i := 0; i < n; i += batch {
		spends := []state.Spend{route}
		for j := i; j < min(i+batch, n); j++ {
			spends = append(spends, visitor(j))
		}
		if failed, err := s.Spend(ctx, spends); err != nil || failed >= 0 {
			t.Fatalf("Spend of visitors %d on = %d, %v; want -1, nil", i, failed, err)
		}
		batches++
		clk.Advance(time.Millisecond) // the view drops the visitors seen first
	}
	spends := make([]state.Spend, n)
	for i := range spends {
		spends[i] = visitor(i)
	}
	got, err := local.Sums(ctx, spends)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	inView := make([]bool, n)
	viewed := 0
	for i := range spends {
		if s.view[slotKey{key: spends[i].Key, slot: spends[i].Slot}] != nil {
			inView[i] = true
			viewed++
		}
	}
	s.mu.Unlock()
	mirrored := 0
	for i, c := range got {
		if c != 0 {
			mirrored++
		}
		if inView[i] && c != 1 {
			t.Fatalf("visitor %d: Local counts %d, want 1: the view holds it", i, c)
		}
	}
	if viewed == n {
		t.Fatalf("the view holds all %d visitors: the test did not pass its cap", n)
	}
	if mirrored != viewed {
		t.Errorf("Local holds the counts of %d visitors, the view %d: a visitor the view dropped still costs Local its counters", mirrored, viewed)
	}
	if r, err := local.Sums(ctx, []state.Spend{route}); err != nil || r[0] != int64(batches) {
		t.Errorf("Local's count of the route's day = %v, %v; want %d, one per spend", r, err, batches)
	}
}
