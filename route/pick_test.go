package route

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/state/memstore"
)

// fakeBudget answers Reserve and Left per route ID from its maps; a route
// in neither is reserved and unlimited.
type fakeBudget struct {
	reserveErr map[string]error
	rpdLeft    map[string]int64
	reserved   []string
}

func (b *fakeBudget) Reserve(_ context.Context, r *config.Route, _ int, _ float64) (*quota.Reservation, error) {
	if err := b.reserveErr[r.ID]; err != nil {
		return nil, err
	}
	b.reserved = append(b.reserved, r.ID)
	return &quota.Reservation{}, nil
}
func (b *fakeBudget) Settle(context.Context, *quota.Reservation, int, bool) error { return nil }
func (b *fakeBudget) Observe(context.Context, *config.Route, http.Header) error   { return nil }
func (b *fakeBudget) Left(_ context.Context, r *config.Route) (quota.Left, error) {
	var l quota.Left
	if n, ok := b.rpdLeft[r.ID]; ok {
		l.Route.RPD = quota.Window{Limit: 1000, Used: 1000 - n}
	}
	return l, nil
}

// TestPick: the one place a route is picked for a request, or skipped
// with its reason, in the order eligibility, hedging, context, budget.
func TestPick(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC))
	p, q := &config.Provider{Name: "p"}, &config.Provider{Name: "q"}
	mk := func(id string, pr *config.Provider, mod func(*config.Route)) *config.Route {
		rt := &config.Route{ID: id, Provider: pr, Model: id}
		if mod != nil {
			mod(rt)
		}
		return rt
	}
	routes := []*config.Route{
		mk("p/ok", p, nil),
		mk("p/disabled", p, func(r *config.Route) { r.Disabled, r.DisabledReason = true, "no key" }),
		mk("p/resting", p, nil),
		mk("q/provider-paused", q, nil),
		mk("x/no-adapter", &config.Provider{Name: "x"}, nil),
		mk("p/scarce", p, func(r *config.Route) { r.Scarce = true }),
		mk("p/few-left", p, nil),
		mk("p/small", p, func(r *config.Route) { r.MaxContext = 300 }),
		mk("p/spent", p, nil),
		mk("p/tpm-too-small", p, nil),
		mk("p/store-down", p, nil),
	}
	ch := &config.Chain{Name: "c", Routes: routes, AttemptTimeout: 10 * time.Second, Deadline: 30 * time.Second, MaxInFlight: 2, HedgeDelay: time.Second, HedgeMinDaily: 50}
	plan := &config.Plan{Chains: map[string]*config.Chain{"c": ch}, Routes: map[string]*config.Route{}}
	for _, rt := range routes {
		plan.Routes[rt.ID] = rt
	}
	store, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	budget := &fakeBudget{
		reserveErr: map[string]error{
			"p/spent":         &quota.SpentError{Route: "p/spent", Limit: "rpd", Until: clk.Now().Add(time.Hour)},
			"p/tpm-too-small": &quota.SpentError{Route: "p/tpm-too-small", Limit: "tpm", TooLarge: true},
			"p/store-down":    errors.New("store down"),
		},
		rpdLeft: map[string]int64{"p/few-left": 10},
	}
	up := &fakeUp{}
	r, err := New(Options{Plan: plan, Upstreams: map[string]Upstream{"p": up, "q": up}, Store: store, Budget: budget, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	now := clk.Now()
	if _, err := rest.Pause(ctx, store, rest.ProviderKey("q"), now, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	r.rests.Settle(ctx, plan.Routes["p/resting"], failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute}, false, now)
	req := &llm.Request{Messages: []llm.Message{{Role: "user", Content: strings.Repeat("words ", 200)}}}
	w, err := r.newWalk(ctx, plan.Chains["c"], "id", req, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		route  string
		hedge  bool
		want   pickResult
		reason string // a part of the skip's reason
	}{
		{"p/ok", false, picked, ""},
		{"p/ok", true, picked, ""},
		{"p/disabled", false, notEligible, "disabled: no key"},
		{"p/resting", false, notEligible, "resting (overloaded)"},
		{"q/provider-paused", false, notEligible, "paused by hand"},
		{"x/no-adapter", false, notEligible, "no adapter"},
		{"p/scarce", false, picked, ""},
		{"p/scarce", true, notHedgeable, ""},
		{"p/few-left", false, picked, ""},
		{"p/few-left", true, notHedgeable, ""},
		{"p/small", false, notFitting, "for a context of 300"},
		{"p/spent", false, noBudget, "budget: rpd spent"},
		{"p/tpm-too-small", false, notFitting, "too large for its tpm limit"},
		{"p/store-down", false, picked, ""},
	}
	for _, tt := range tests {
		tk, skip, why := w.pick(plan.Routes[tt.route], w.req, w.est, tt.hedge)
		if why != tt.want || !strings.Contains(skip.Reason, tt.reason) {
			t.Errorf("pick %s (hedge %v) = %d %q, want %d %q", tt.route, tt.hedge, why, skip.Reason, tt.want, tt.reason)
		}
		if why == picked && (tk.route != plan.Routes[tt.route] || tk.req == nil) {
			t.Errorf("pick %s: ticket %+v", tt.route, tk)
		}
		if why == picked && (tk.res == nil) != (tt.route == "p/store-down") {
			t.Errorf("pick %s: reservation %v; only a failed store goes without one", tt.route, tk.res)
		}
	}
	w.provFailed["p"] = true
	if _, skip, why := w.pick(plan.Routes["p/ok"], w.req, w.est, false); why != notEligible || !strings.Contains(skip.Reason, "provider p failed") {
		t.Errorf("a provider failed for this request: got %d %q", why, skip.Reason)
	}
}
