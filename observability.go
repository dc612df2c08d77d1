package tollfree

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/tollfree/tollfree/assistant/widget"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/httpapi"
	"github.com/tollfree/tollfree/httpapi/admin"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/status"
	"github.com/tollfree/tollfree/status/live"
	"github.com/tollfree/tollfree/status/page"
)

// Metrics is what exports the gateway's figures (package metrics, for
// Prometheus). The library does not build one itself, so that embedding
// tollfree does not pull Prometheus in: cmd/tollfree passes
// Options.Metrics.
type Metrics interface {
	route.Recorder
	Observer
	Handler() http.Handler
}

// Observer is told how each request ended, whoever asked (a Go program or
// the HTTP API): the gateway's flow (serve.go) calls it. Outcomes are a
// closed vocabulary, the same as package metrics' Outcome constants:
// "answered", "cached", "fallback", "failed", "rejected", "cancelled".
type Observer interface {
	Request(chain, outcome string, d time.Duration)
	CacheHit(chain string)
	FallbackServed(chain, kind string)
}

// The outcomes of a request, as told to the Observer.
const (
	outcomeAnswered  = "answered"
	outcomeCached    = "cached"
	outcomeFallback  = "fallback"
	outcomeFailed    = "failed"
	outcomeRejected  = "rejected"
	outcomeCancelled = "cancelled"
)

// observability is what watches the gateway (issue 6): live statistics, the
// status snapshot, and optionally metrics. It sees every attempt as a
// route.Recorder and every request as an Observer. Nothing here runs
// on the request path beyond those counters; snapshots are worked out when
// someone looks.
type observability struct {
	stats   *live.Stats
	status  *status.Source
	metrics Metrics // nil without Options.Metrics
}

var _ Observer = (*observability)(nil)

// recorders returns what must see every attempt besides the call log
// (live statistics, metrics). It runs before the router is built.
func (g *Gateway) recorders(o *Options) []route.Recorder {
	st := live.New(o.Plan)
	src := status.New(status.Options{Plan: o.Plan, Store: g.store, Budget: g.budget, Stats: st, Pacer: g.pacer, Clock: o.Clock})
	g.obs = &observability{stats: st, status: src}
	recs := []route.Recorder{st}
	if o.Metrics != nil {
		g.obs.metrics = o.Metrics(o.Plan, src)
		recs = append(recs, g.obs.metrics)
	}
	return recs
}

// handlers returns the operator's handlers to mount beside the API (status
// page, admin API, metrics), by ServeMux pattern. It runs after the router
// is built. With Plan.StatusPrivate (the default when gateway keys are
// set), the status page, its JSON and the metrics need a gateway key or
// the admin token (issue 10: they name every route, budget and failure).
func (g *Gateway) handlers(o *Options) map[string]http.Handler {
	var allowed func(*http.Request) bool
	if o.Plan.StatusPrivate {
		allowed = httpapi.BearerCheck(append(slices.Clone(o.Plan.GatewayKeys), o.Plan.AdminToken)...)
	}
	sp := page.New(page.Options{Status: g.obs.status, Logger: o.Logger, Authorized: allowed})
	adm := admin.New(admin.Options{Plan: o.Plan, Store: g.store, Prober: g.router, Token: o.Plan.AdminToken, Clock: o.Clock, Logger: o.Logger})
	h := map[string]http.Handler{
		"/status":      sp.HTML(),
		"/status.json": sp.JSON(),
		"/admin/":      adm,
		widget.Path:    widget.Handler(), // the chat widget (issue 14)
	}
	if g.obs.metrics != nil {
		h["/metrics"] = g.obs.metrics.Handler()
		if allowed != nil {
			h["/metrics"] = httpapi.RequireToken(h["/metrics"], allowed)
		}
	}
	return h
}

// MetricsFunc builds the gateway's Metrics from its plan and its status
// source (metrics.New in cmd/tollfree).
type MetricsFunc func(p *config.Plan, s *status.Source) Metrics

// Status returns what every chain, route and provider is doing now: the
// snapshot behind /status and /status.json.
func (g *Gateway) Status(ctx context.Context) (*status.Snapshot, error) {
	return g.obs.status.Snapshot(ctx)
}

// Request records one request of chain that ended with outcome (see
// Observer) after d.
func (o *observability) Request(chain, outcome string, d time.Duration) {
	if o.metrics != nil {
		o.metrics.Request(chain, outcome, d)
	}
	if outcome == outcomeFallback || outcome == outcomeFailed {
		o.stats.Unanswered(chain, d)
	}
}

// CacheHit records a request of chain answered from the cache.
func (o *observability) CacheHit(chain string) {
	if o.metrics != nil {
		o.metrics.CacheHit(chain)
	}
	o.stats.Cached(chain)
}

// FallbackServed records a fallback answer of chain of the given kind.
func (o *observability) FallbackServed(chain, kind string) {
	if o.metrics != nil {
		o.metrics.FallbackServed(chain, kind)
	}
}
