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
