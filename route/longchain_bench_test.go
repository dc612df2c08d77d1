package route

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

// Long chains (issue 18, item 5): a chain of 50 routes of which the first
// 49 are resting or spent must be walked in under 50 µs, so that a busy
// day costs nothing for the routes it skips.
//
// What is measured: one Router.Chat on a real Router (rests and budgets in
// a memstore, a quota.Book, the real clock) whose upstream answers in
// process at once (instantUpstream: no HTTP, no JSON), so that ns/op is
// the walk itself. "skip-none" is the same request on a chain of the 50th
// route alone: the difference between a case and it is what the 49 skips
// cost. The 50th route has a budget too (a large rpd), so every case
// reserves and settles it as a limited route does.
//
//	go test -run '^$' -bench LongChain -benchmem ./route/
func BenchmarkLongChain(b *testing.B) {
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
			lc := newLongChain(b)
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
	budget *quota.Book
	r      *Router
	clk    clock.Clock
}

func newLongChain(tb testing.TB) *longChain {
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
	store, err := memstore.Open(memstore.Options{Clock: clk})
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
		store.Close()
	})
	return &longChain{plan: plan, store: store, budget: budget, r: r, clk: clk}
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
