package quota

import (
	"context"
	"errors"
	"sync"
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
// exactly a caller's day through between them, and the site's day with
// the owner's reserve held back.
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
	const requests = 60
	visitor := Ask{Caller: "v", Limits: config.CallerLimits{PerDay: 25}}
	site := Ask{Caller: "w", SiteDay: 30, Reserve: 10} // 20 for visitors
	for _, tc := range []struct {
		name string
		ask  Ask
		want int
	}{{"caller day", visitor, 25}, {"site day less the reserve", site, 20}} {
		passed := make(chan bool, requests)
		var wg sync.WaitGroup
		for i := range requests {
			wg.Go(func() {
				_, err := books[i%2].Enter(context.Background(), tc.ask)
				var le *LimitError
				if err != nil && !errors.As(err, &le) {
					t.Errorf("Enter: %v", err)
				}
				passed <- err == nil
			})
		}
		wg.Wait()
		close(passed)
		n := 0
		for ok := range passed {
			if ok {
				n++
			}
		}
		if n != tc.want {
			t.Errorf("%s: %d of %d let through, want exactly %d", tc.name, n, requests, tc.want)
		}
	}
}
