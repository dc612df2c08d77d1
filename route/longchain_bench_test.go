package route

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
	"github.com/tollfree/tollfree/state/redisstore"
)

// Long chains (issue 18, item 5): a chain of 50 routes of which the first
// 49 are resting or spent must be walked in under 50 µs, so that a busy
// day costs nothing for the routes it skips.
//
// What is measured: one Router.Chat on a real Router (rests and budgets in
// a state store, a quota.Book, the real clock) whose upstream answers in
// process at once (instantUpstream: no HTTP, no JSON), so that ns/op is
// the walk itself. "skip-none" is the same request on a chain of the 50th
// route alone: the difference between a case and it is what the 49 skips
// cost. The 50th route has a budget too (a large rpd), so every case
// reserves and settles it as a limited route does. The resting cases also
// read their 49 rests from the store once a request (skip-none reads
// none); the spent cases skip from what the quota.Book remembers of the
// store's refusals (quota/spent.go), asking the store again at most once
// a second per route. "mem" keeps the state in a memstore; "redis" in
// Redis (REDIS_URL or 127.0.0.1:6379), where every store call is a round
// trip on loopback.
//
//	go test -run '^$' -bench LongChain -benchmem ./route/
func BenchmarkLongChain(b *testing.B) {
	for _, st := range []string{"mem", "redis"} {
		b.Run(st, func(b *testing.B) { benchLongChain(b, st) })
	}
}

func benchLongChain(b *testing.B, st string) {
	for _, c := range []struct {
		name  string
		chain string
		held  func(i int) string // how route i of the 49 is held back
	}{
		{"skip-none", "one", nil},
		{"skip-49-resting", "long", func(int) string { return "rest" }},
		{"skip-49-spent", "long", func(int) string { return "spent" }},
		{"skip-49-mixed", "long", func(i int) string { return [2]string{"rest", "spent"}[i%2] }},
	} {
		b.Run(c.name, func(b *testing.B) {
			lc := newLongChain(b, st)
			if c.held != nil {
				for i := range longChainSkipped {
					lc.hold(b, i, c.held(i))
				}
			}
			ch := lc.plan.Chains[c.chain]
			req := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "What does tollfree do?"}}}
			ctx := context.Background()
			last := lc.plan.Routes[longChainRoute(longChainSkipped)]
			// One walk first: whatever is learned once (a spent window)
			// is learned before the timing starts, as on a busy day.
			if res, err := lc.r.Chat(ctx, ch, "warm", req); err != nil || res.Route != last {
				b.Fatalf("warm-up walk: %v, %v; want an answer of %s", res, err, last.ID)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := lc.r.Chat(ctx, ch, "bench", req)
				if err != nil || res.Route != last {
					b.Fatalf("walk: %v; want an answer of %s", err, last.ID)
				}
			}
			b.StopTimer()
			lc.checkConnected(b)
		})
	}
}

// longChainSkipped is how many routes of the long chain come before the
// one that answers.
const longChainSkipped = 49

func longChainRoute(i int) string { return fmt.Sprintf("p/m%02d", i) }

// longChain is a Router over a chain of 50 routes of one provider, which
// answers in process.
type longChain struct {
	plan   *config.Plan
	store  state.Store
	redis  *redisstore.Store // the store, when in Redis
	budget *quota.Book
	r      *Router
	clk    clock.Clock
}

func newLongChain(tb testing.TB, st string) *longChain {
	tb.Helper()
	var y strings.Builder
	y.WriteString("providers:\n  p:\n    base_url: http://127.0.0.1:9/v1\n    dialect: openai\n    api_key: ${BENCH_API_KEY}\n    models:\n")
	for i := range longChainSkipped {
		fmt.Fprintf(&y, "      m%02d: {rpd: 1}\n", i)
	}
	fmt.Fprintf(&y, "      m%02d: {rpd: 1000000000}\n", longChainSkipped)
	y.WriteString("chains:\n  long:\n    routes: [")
	for i := range longChainSkipped + 1 {
		if i > 0 {
			y.WriteString(", ")
		}
		y.WriteString(longChainRoute(i))
	}
	fmt.Fprintf(&y, "]\n  one:\n    routes: [%s]\n", longChainRoute(longChainSkipped))
	plan, err := config.Parse("bench.yaml", []byte(y.String()), func(k string) string {
		if k == "BENCH_API_KEY" {
			return "sk-bench-0001"
		}
		return ""
	})
	if err != nil {
		tb.Fatalf("config: %v", err)
	}
	clk := clock.Real{}
	var store state.Store
	var rs *redisstore.Store
	switch st {
	case "redis":
		url := testenv.RedisURL(tb)
		rs, err = redisstore.Open(context.Background(), redisstore.Options{
			URL: url, Namespace: testenv.Namespace(tb, url), OpTimeout: 2 * time.Second,
			Logger: slog.New(slog.DiscardHandler),
		})
		store = rs
	default:
		store, err = memstore.Open(memstore.Options{Clock: clk})
	}
	if err != nil {
		tb.Fatal(err)
	}
	budget := quota.New(quota.Options{Store: store, Clock: clk})
	r, err := New(Options{Plan: plan, Upstreams: map[string]Upstream{"p": instantUpstream{}}, Store: store, Budget: budget, Clock: clk})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		r.Close()
		budget.Close()
		if c, ok := store.(interface{ Close() error }); ok {
			c.Close()
		}
	})
	return &longChain{plan: plan, store: store, redis: rs, budget: budget, r: r, clk: clk}
}

// checkConnected fails a Redis benchmark whose store fell back to local
// state: its figure would not be Redis's.
func (lc *longChain) checkConnected(tb testing.TB) {
	if lc.redis == nil {
		return
	}
	if h := lc.redis.Health(); !h.Connected {
		tb.Fatalf("the store fell back to local state (%s): the figure is not Redis's", h.LastError)
	}
}

// hold holds route i back: "rest" rests it for the day (as a 429 saying
// the day is spent would), "spent" fills its one request a day.
func (lc *longChain) hold(tb testing.TB, i int, how string) {
	tb.Helper()
	ctx := context.Background()
	rt := lc.plan.Routes[longChainRoute(i)]
	now := lc.clk.Now()
	switch how {
	case "rest":
		err := lc.store.SetRest(ctx, state.Rest{Key: rt.ID, Until: now.Add(24 * time.Hour), Class: failure.RateDay.String(), Since: now})
		if err != nil {
			tb.Fatal(err)
		}
	case "spent":
		res, err := lc.budget.Reserve(ctx, rt, 100, 0)
		if err != nil {
			tb.Fatalf("spending %s's day: %v", rt.ID, err)
		}
		if err := lc.budget.Settle(ctx, res, 100, true); err != nil {
			tb.Fatal(err)
		}
	default:
		tb.Fatalf("hold %q: no such way", how)
	}
}

// instantUpstream answers every call at once, in process.
type instantUpstream struct{}

func (instantUpstream) Chat(_ context.Context, call provider.Call) (*llm.Response, error) {
	return &llm.Response{Model: call.Model, Content: "tollfree routes requests.", FinishReason: "stop",
		Usage: llm.Usage{PromptTokens: 12, CompletionTokens: 5, TotalTokens: 17}, UsageKnown: true}, nil
}

func (instantUpstream) Stream(context.Context, provider.Call) (llm.Stream, error) {
	return nil, fmt.Errorf("instantUpstream: no streams")
}
