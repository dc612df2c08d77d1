package quota

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
	"github.com/tollfree/tollfree/state/redisstore"
)

// TestEnterMemstore runs every caller-limit scenario on the in-memory
// Store, whose slots expire by their TTL on the same fake clock, with two
// Books taking requests in turn.
func TestEnterMemstore(t *testing.T) {
	for _, sc := range askScenarios {
		t.Run(sc.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			st, err := memstore.Open(memstore.Options{Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			books := []*Book{New(Options{Store: st, Clock: clk}), New(Options{Store: st, Clock: clk})}
			sc.run(&askRig{t: t, books: books, clk: clk})
		})
	}
}

// TestEnterRedis runs every caller-limit scenario on a real Redis with two
// instances, each its own redisstore and Book, taking requests in turn:
// what one counts the other sees, atomically, so the two agree on every
// limit and on when it resets (issue 12: "counted in the same state as the
// routes' budgets, so every instance agrees").
func TestEnterRedis(t *testing.T) {
	url := testenv.RedisURL(t)
	for _, sc := range askScenarios {
		t.Run(sc.name, func(t *testing.T) {
			ns := testenv.Namespace(t, url)
			clk := clock.NewFake(t0)
			var books []*Book
			var stores []*redisstore.Store
			for range 2 {
				// A generous OpTimeout: a call served locally would count
				// for this instance only, and this test is about the
				// shared path.
				st, err := redisstore.Open(context.Background(), redisstore.Options{URL: url, Namespace: ns, Clock: clk, OpTimeout: 2 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				stores = append(stores, st)
				books = append(books, New(Options{Store: st, Clock: clk}))
			}
			sc.run(&askRig{t: t, books: books, clk: clk})
			for i, st := range stores {
				if h := st.Health(); !h.Connected {
					t.Errorf("instance %d served from local state (%s): the instances did not share the counts", i, h.LastError)
				}
			}
		})
	}
}

// TestEnterRedisAtOnce: two instances asked at once, many times over, let
// exactly a caller's day through between them; and while visitors exhaust
// the site's day at once, the owner, asking meanwhile, gets every question
// of its reserve (seed 004: "so the owner can always get through").
func TestEnterRedisAtOnce(t *testing.T) {
	url := testenv.RedisURL(t)
	ns := testenv.Namespace(t, url)
	clk := clock.NewFake(t0)
	var books []*Book
	for range 2 {
		st, err := redisstore.Open(context.Background(), redisstore.Options{URL: url, Namespace: ns, Clock: clk, OpTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		books = append(books, New(Options{Store: st, Clock: clk}))
	}
	// hammer sends n copies of a at once, alternating instances, and
	// returns how many were let through.
	hammer := func(n int, a Ask, wg *sync.WaitGroup, passed *atomic.Int32) {
		for i := range n {
			wg.Go(func() {
				_, err := books[i%2].Enter(context.Background(), a)
				var le *LimitError
				if err != nil && !errors.As(err, &le) {
					t.Errorf("Enter: %v", err)
				}
				if err == nil {
					passed.Add(1)
				}
			})
		}
	}
	var wg sync.WaitGroup
	var visitor atomic.Int32
	hammer(60, Ask{Caller: "v", Limits: config.CallerLimits{PerDay: 25}}, &wg, &visitor)
	wg.Wait()
	if n := visitor.Load(); n != 25 {
		t.Errorf("one caller asking 60 times at once: %d let through, want exactly its day's 25", n)
	}

	var visitors, owner atomic.Int32
	for i := range 60 {
		hammer(1, Ask{Caller: fmt.Sprintf("v%d", i), Limits: config.CallerLimits{PerDay: 25}, SiteDay: 30, Reserve: 10}, &wg, &visitors)
		if i%6 == 0 {
			hammer(1, Ask{Caller: "key:me", Owner: true, SiteDay: 30, Reserve: 10}, &wg, &owner)
		}
	}
	wg.Wait()
	// Visitors stop once the site's count, the owner's questions included,
	// reaches 30 less the reserve; the owner goes on to the whole 30.
	if v, o := visitors.Load(), owner.Load(); o != 10 || v > 20 || v+o < 20 || v+o > 30 {
		t.Errorf("60 visitors and the owner's 10 at once: %d visitors' and %d owner's let through; want all 10 of the owner's, and the visitors stopped where the site's count reached 20", v, o)
	}
}

// TestAdmitWithTheFirstReserve: on Redis, Admit counts nothing; the first
// Reserve checks the caller's limits and the route's budget in one call. A
// refused caller gets Enter's *LimitError and nothing is spent on the
// route; a spent route still counts the caller, who goes on to the next
// route; a route without limits makes the caller's spends alone.
func TestAdmitWithTheFirstReserve(t *testing.T) {
	url := testenv.RedisURL(t)
	clk := clock.NewFake(t0)
	st, err := redisstore.Open(context.Background(), redisstore.Options{URL: url, Namespace: testenv.Namespace(t, url), Clock: clk, OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := New(Options{Store: st, Clock: clk})
	p := &config.Provider{Name: "p"}
	m1 := &config.Route{ID: "p/m1", Provider: p, Limits: config.Limits{RPD: 1}}
	m2 := &config.Route{ID: "p/m2", Provider: p}
	ask := Ask{Caller: "v", Limits: config.CallerLimits{PerHour: 2}}
	ctx := context.Background()
	used := func(r *config.Route) int64 {
		t.Helper()
		l, err := b.Left(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return l.Route.RPD.Used
	}
	callerHour := func() int64 {
		t.Helper()
		sums, err := st.Sums(ctx, []state.Spend{hourWindow(clk.Now()).spend(makeNames(callerPrefix, "v", "").hour, 0, 0)})
		if err != nil {
			t.Fatal(err)
		}
		return sums[0]
	}
	admit := func() (*Pass, context.Context) {
		t.Helper()
		pass, err := b.Admit(ctx, ask)
		if err != nil {
			t.Fatalf("Admit: %v", err)
		}
		return pass, WithPass(ctx, pass)
	}

	// A first script run on a server that does not know the script yet
	// takes two round trips (EVALSHA, EVAL): not this test's.
	if _, err := st.Spend(ctx, []state.Spend{dayWindow(clk.Now()).spend("warm-up", 0, 1)}); err != nil {
		t.Fatal(err)
	}

	// 1: the caller and m1 together.
	pass, rctx := admit()
	if n := callerHour(); n != 0 {
		t.Fatalf("Admit counted %d already, want nothing until the first Reserve", n)
	}
	var trips atomic.Int64
	if _, err := b.Reserve(redisstore.CountRoundTrips(rctx, &trips), m1, 10, 0); err != nil {
		t.Fatalf("first Reserve: %v", err)
	}
	if n := trips.Load(); n != 1 {
		t.Errorf("the caller's limits and m1's budget took %d round trips, want 1", n)
	}
	if c, r := callerHour(), used(m1); c != 1 || r != 1 {
		t.Errorf("after the first Reserve: caller %d, m1 %d; want 1 and 1", c, r)
	}
	if err := b.Commit(ctx, pass); err != nil {
		t.Errorf("Commit after the Reserve: %v", err)
	}
	_ = b.Leave(ctx, pass, 0, false)

	// 2: m1 is spent; the caller is counted, and m2 reserved alone.
	_, rctx = admit()
	var se *SpentError
	if _, err := b.Reserve(rctx, m1, 10, 0); !errors.As(err, &se) {
		t.Fatalf("m1 spent: Reserve = %v, want a *SpentError", err)
	}
	if n := callerHour(); n != 2 {
		t.Errorf("the caller after a spent route: %d, want 2", n)
	}
	if _, err := b.Reserve(rctx, m2, 10, 0); err != nil {
		t.Errorf("m2 after m1 was spent: %v", err)
	}
	if n := callerHour(); n != 2 {
		t.Errorf("the caller after the second route: %d, want still 2", n)
	}

	// 3: the caller's hour is spent: refused, nothing spent anywhere.
	pass, rctx = admit()
	var le *LimitError
	if _, err := b.Reserve(rctx, m2, 10, 0); !errors.As(err, &le) || le.Name() != "caller hour" {
		t.Fatalf("caller past its hour: Reserve = %v, want a caller hour *LimitError", err)
	}
	if _, err := b.Reserve(rctx, m1, 10, 0); !errors.As(err, &le) {
		t.Errorf("a second Reserve for a refused caller = %v, want the refusal again", err)
	}
	if err := b.Commit(ctx, pass); !errors.As(err, &le) {
		t.Errorf("Commit of a refused pass = %v, want the refusal", err)
	}
	if c, r := callerHour(), used(m1); c != 2 || r != 1 {
		t.Errorf("after the refusal: caller %d, m1 %d; want 2 and 1: nothing counted", c, r)
	}

	// 4: no route tried (all resting, the cache): Commit checks alone.
	clk.Advance(time.Hour + 10*time.Minute)
	pass, _ = admit()
	if err := b.Commit(ctx, pass); err != nil {
		t.Errorf("Commit with no Reserve: %v", err)
	}
	if n := callerHour(); n != 1 {
		t.Errorf("the caller's new hour after Commit: %d, want 1", n)
	}
}
