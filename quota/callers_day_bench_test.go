package quota

import (
	"context"
	"flag"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/state/memstore"
)

// BenchmarkCallersDay drives a day of distinct visitors through Enter and
// Leave on the embedded store, on a fake clock, and reports the heap the
// day leaves live at its end (issue 18: a million visitors within 64 MB).
// Each visitor comes once, at a time spread evenly over the day, and asks
// two questions a minute apart, each answered at once with 700 tokens,
// under the per-visitor limits of seed 000's site (15 an hour, 40 a day,
// 50,000 tokens a day, 2 at once) and a site-wide day. At the end every
// visitor's day and tokens counters are still in their rolling day, so the
// end of the day is when the store holds the most.
//
//	go test -run '^$' -bench CallersDay -benchtime 1x ./quota/
func BenchmarkCallersDay(b *testing.B) {
	for _, callers := range []int{100_000, 1_000_000} {
		b.Run(strconv.Itoa(callers), func(b *testing.B) {
			for b.Loop() {
				mb := callersDay(b, callers)
				b.ReportMetric(mb, "MB")
				b.ReportMetric(mb*1e6/float64(callers), "MB/1M-callers")
			}
		})
	}
}

// callersDay runs the day of n visitors and returns the megabytes of heap
// still live at its end beyond what was live before it.
func callersDay(b *testing.B, n int) float64 {
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	st, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	book := New(Options{Store: st, Clock: clk})
	defer book.Close()
	limits := config.CallerLimits{PerHour: 15, PerDay: 40, TokensDay: 50000, Concurrent: 2}
	ctx := context.Background()
	ask := func(i int) {
		a := Ask{Caller: "visitor:" + strconv.Itoa(i), Limits: limits, Chain: "answer", SiteDay: 10 * n, Tokens: 900}
		p, err := book.Enter(ctx, a)
		if err != nil {
			b.Fatalf("visitor %d refused: %v", i, err)
		}
		if err := book.Leave(ctx, p, 700, true); err != nil {
			b.Fatal(err)
		}
	}

	before := testenv.LiveHeap()
	// Two sorted streams of questions, merged in time: each visitor's
	// first at i * day/n, its second a minute later.
	every := 24 * time.Hour / time.Duration(n)
	first := func(i int) time.Time { return start.Add(time.Duration(i) * every) }
	for i, j := 0, 0; j < n; {
		if i < n && !first(i).After(first(j).Add(time.Minute)) {
			clk.Set(first(i))
			ask(i)
			i++
			continue
		}
		clk.Set(first(j).Add(time.Minute))
		ask(j)
		j++
	}
	after := testenv.LiveHeap()
	if *dayHeapProfile != "" {
		testenv.WriteHeapProfile(b, *dayHeapProfile)
	}
	runtime.KeepAlive(st)
	runtime.KeepAlive(book)
	return float64(int64(after)-int64(before)) / 1e6
}

// dayHeapProfile names a file for a heap profile taken at the end of the
// day, store still open (-memprofile is taken after it closed):
//
//	go test -run '^$' -bench 'CallersDay/^1000000$' -benchtime 1x -o quota.test ./quota/ -args -dayheapprofile heap.out
//	go tool pprof -sample_index=inuse_space -top quota.test heap.out
var dayHeapProfile = flag.String("dayheapprofile", "", "write a heap profile at the end of BenchmarkCallersDay's day to this file")
