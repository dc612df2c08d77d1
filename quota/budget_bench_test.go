package quota

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state/memstore"
)

// BenchmarkRequestBudgets is what the budgets cost one request on local
// state with every limit on, as bench/gateway-limits.yaml sets them: the
// caller's limits (Admit), the route's and its account's (Reserve), and
// the settles after the answer (Settle, Leave). Issue 18 wants budgets
// nearly free: compare with the whole request's cost in the harness.
func BenchmarkRequestBudgets(b *testing.B) { benchRequestBudgets(b, 0, 0) }

// BenchmarkRequestBudgetsBusy is BenchmarkRequestBudgets on a clock that
// moves 100 µs a request (10,000 requests a second), after 700,000
// requests uncounted (70 s), so that every slot of the minute's windows
// holds counts, as on a busy gateway: what a spend's sum over the window's
// slots costs.
func BenchmarkRequestBudgetsBusy(b *testing.B) {
	benchRequestBudgets(b, 100*time.Microsecond, 700_000)
}

// benchRequestBudgets measures one request's budgets, the clock moving by
// every before each, after warm requests uncounted.
func benchRequestBudgets(b *testing.B, every time.Duration, warm int) {
	clk := clock.NewFake(t0)
	st, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	book := New(Options{Store: st, Clock: clk})
	p := &config.Provider{Name: "mock", Limits: config.Limits{RPM: 1e8, RPD: 1e9}}
	r := &config.Route{ID: "mock/gpt-4o-mini", Provider: p, Limits: config.Limits{RPM: 1e8, RPD: 1e9, TPM: 1e12, TPD: 1e12}}
	ask := Ask{Caller: "ip:127.0.0.1", Limits: config.CallerLimits{PerHour: 1e8, PerDay: 1e9, TokensDay: 1e12, Concurrent: 1e4}, SiteDay: 1e9, Tokens: 700}
	ctx := context.Background()
	step := func() {
		if every > 0 {
			clk.Advance(every)
		}
		pass, err := book.Admit(ctx, ask)
		if err != nil {
			b.Fatal(err)
		}
		res, err := book.Reserve(WithPass(ctx, pass), r, 700, 0.05)
		if err != nil {
			b.Fatal(err)
		}
		if err := book.Commit(ctx, pass); err != nil {
			b.Fatal(err)
		}
		_ = book.Settle(ctx, res, 650, true)
		_ = book.Leave(ctx, pass, 650, true)
	}
	for range warm {
		step()
	}
	b.ReportAllocs()
	for b.Loop() {
		step()
	}
}
