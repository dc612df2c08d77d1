// Package metrics exports tollfree's counters in the Prometheus format, on
// a registry of its own (never the global one), so that embedding the
// gateway never collides with a program's own metrics. It is the only
// package that imports the Prometheus client.
//
// Counters and histograms are fed as things happen: every attempt through
// RecordAttempt (it implements route.Recorder), every request, cache hit and
// fallback through Request, CacheHit and FallbackServed. Their children are
// made up front for every chain, route (and route of each chain, for the
// rescues of broken streams and the polite retries) and label value of the
// closed vocabulary in names.go, so recording is a map lookup and an atomic
// add, with no allocation. Gauges of state (budgets used and left, rests in
// force, each route's state) are read from a status.Source when Prometheus
// scrapes, and never otherwise.
package metrics

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/status"
	"github.com/tollfree/tollfree/status/figures"
)

// Snapshotter is where the state gauges are read from at scrape time;
// *status.Source implements it.
type Snapshotter interface {
	Snapshot(ctx context.Context) (*status.Snapshot, error)
}

// Options configure Metrics. Plan is required.
type Options struct {
	Plan *config.Plan
	// Status may be nil: no state gauges.
	Status Snapshotter
}

// Metrics holds tollfree's collectors on its own registry. It is safe for
// concurrent use.
type Metrics struct {
	reg    *prometheus.Registry
	status Snapshotter

	// routes and chains are built by New and only read afterwards.
	routes map[string]*routeSet
	chains map[string]*chainSet
	pairs  map[pair]*pairSet
	rests  map[rest.Key]*[failure.NumClasses]prometheus.Counter
	other  *chainSet // for chains outside the plan

	scrape sync.Mutex // one scrape at a time sets the state gauges
	used   *prometheus.GaugeVec
	left   *prometheus.GaugeVec
	limit  *prometheus.GaugeVec
	rest   *prometheus.GaugeVec
	state  *prometheus.GaugeVec
	errs   prometheus.Counter
}

type routeSet struct {
	attempts  [failure.NumClasses]prometheus.Counter
	latency   prometheus.Observer
	tokensIn  prometheus.Counter
	tokensOut prometheus.Counter
}

// pair is a route of a chain.
type pair struct{ chain, route string }

// pairSet counts what a route did for a chain: the broken streams it
// finished, by method (indexed as figures.Methods), and the polite retries
// made on it, by outcome (indexed by retryOutcome).
type pairSet struct {
	rescues [figures.NumMethods]prometheus.Counter
	retries [len(retryOutcomes)]prometheus.Counter
	probes  [len(retryOutcomes)]prometheus.Counter // probes at the edge, by outcome
}

type chainSet struct {
	requests  map[string]prometheus.Counter
	duration  prometheus.Observer
	cacheHits prometheus.Counter
	fallbacks map[string]prometheus.Counter
}

var _ route.Recorder = (*Metrics)(nil)

// latencyBuckets suit free LLM routes: from a fast 100 ms answer to a
// reasoning model's minute.
var latencyBuckets = []float64{0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60}

// New returns Metrics with a child for every chain and route of the plan.
func New(o Options) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(), status: o.Status,
		routes: make(map[string]*routeSet, len(o.Plan.Routes)),
		chains: make(map[string]*chainSet, len(o.Plan.Chains)),
		pairs:  make(map[pair]*pairSet),
		rests:  make(map[rest.Key]*[failure.NumClasses]prometheus.Counter),
	}
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameRequests,
		Help: "Requests by chain and outcome (answered, cached, fallback, failed, rejected, cancelled)."}, []string{LabelChain, LabelOutcome})
	reqDur := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: NameRequestSeconds,
		Help: "Time to answer a request, by chain.", Buckets: latencyBuckets}, []string{LabelChain})
	attempts := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameAttempts,
		Help: "Upstream attempts by route and outcome (the failure class)."}, []string{LabelRoute, LabelOutcome})
	attDur := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: NameAttemptSeconds,
		Help: "Latency of attempts that answered, by route.", Buckets: latencyBuckets}, []string{LabelRoute})
	tokens := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameTokens,
		Help: "Tokens reported by answering routes, by route and direction (in: prompt, out: completion)."}, []string{LabelRoute, LabelDirection})
	rests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameRests,
		Help: "Rests started by failures, by rest key (route or provider:<name>) and failure class."}, []string{LabelKey, LabelClass})
	cache := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameCacheHits,
		Help: "Requests answered from the cache, by chain."}, []string{LabelChain})
	fallbacks := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameFallbacks,
		Help: "Fallback answers served when no route answered, by chain and kind (message, search, error)."}, []string{LabelChain, LabelKind})
	m.used = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameBudgetUsed,
		Help: "Budget used in the current window, by budget (route or provider:<name>) and window (rpm, rpd, tpm, tpd; rph, tph, tpmo, rpmo where limited). Read at scrape time."}, []string{LabelKey, LabelWindow})
	m.left = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameBudgetLeft,
		Help: "Budget left in the current window (limit minus used, at least 0), where a limit is known."}, []string{LabelKey, LabelWindow})
	m.limit = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameBudgetLimit,
		Help: "Limit of the window in force (configured or learned from headers), where one is known."}, []string{LabelKey, LabelWindow})
	m.rest = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameResting,
		Help: "1 for each rest or pause in force, by key (route or provider:<name>) and class (a failure class or paused)."}, []string{LabelKey, LabelClass})
	m.state = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameRouteState,
		Help: "1 for each route's current state (ready, failing, resting, paused, exhausted, disabled)."}, []string{LabelRoute, LabelState})
	m.errs = prometheus.NewCounter(prometheus.CounterOpts{Name: NameScrapeErrors,
		Help: "Scrapes whose state gauges could not be read in full from the state store."})
	rescues := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameStreamRescues,
		Help: "Streams that broke after their first token and that a route finished, by chain, route (the one that finished it) and method (prefix, instruct, afresh: nothing had been streamed yet)."}, []string{LabelChain, LabelRoute, LabelMethod})
	retries := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NamePoliteRetries,
		Help: "Polite retries of a blip (the same route called once more after the wait it asked for), by chain, route and outcome (answered, failed, cancelled)."}, []string{LabelChain, LabelRoute, LabelOutcome})
	probes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameEdgeProbes,
		Help: "Probes at the edge (every route of the chain skipped by its own budget; the one that frees soonest called once rather than serve the fallback), by chain, route and outcome (answered, failed, cancelled)."}, []string{LabelChain, LabelRoute, LabelOutcome})
	m.reg.MustRegister(requests, reqDur, attempts, attDur, tokens, rests, cache, fallbacks, rescues, retries, probes, m.used, m.left, m.limit, m.rest, m.state, m.errs)

	newChain := func(name string) *chainSet {
		cs := &chainSet{requests: make(map[string]prometheus.Counter, len(outcomes)+1), fallbacks: make(map[string]prometheus.Counter, len(fallbackKinds)+1),
			duration: reqDur.WithLabelValues(name), cacheHits: cache.WithLabelValues(name)}
		for _, o := range append(outcomes[:], Other) {
			cs.requests[o] = requests.WithLabelValues(name, o)
		}
		for _, k := range append(fallbackKinds[:], Other) {
			cs.fallbacks[k] = fallbacks.WithLabelValues(name, k)
		}
		return cs
	}
	for _, name := range o.Plan.ChainOrder {
		m.chains[name] = newChain(name)
		for _, rt := range o.Plan.Chains[name].Routes {
			ps := &pairSet{}
			for i, v := range methods {
				ps.rescues[i] = rescues.WithLabelValues(name, rt.ID, v)
			}
			for i, v := range retryOutcomes {
				ps.retries[i] = retries.WithLabelValues(name, rt.ID, v)
				ps.probes[i] = probes.WithLabelValues(name, rt.ID, v)
			}
			m.pairs[pair{name, rt.ID}] = ps
		}
	}
	m.other = newChain(Other)
	restKey := func(key rest.Key) {
		if m.rests[key] != nil {
			return
		}
		var cs [failure.NumClasses]prometheus.Counter
		for c := failure.OK; c < failure.NumClasses; c++ {
			if c.Rests() {
				cs[c] = rests.WithLabelValues(key.String(), c.String())
			}
		}
		m.rests[key] = &cs
	}
	for _, id := range o.Plan.RouteOrder {
		rs := &routeSet{latency: attDur.WithLabelValues(id),
			tokensIn: tokens.WithLabelValues(id, DirectionIn), tokensOut: tokens.WithLabelValues(id, DirectionOut)}
		for c := failure.OK; c < failure.NumClasses; c++ {
			rs.attempts[c] = attempts.WithLabelValues(id, c.String())
		}
		m.routes[id] = rs
		for _, key := range rest.KeysOf(o.Plan.Routes[id]) {
			restKey(key)
		}
	}
	return m
}

// Registry returns the registry the collectors are on, to add a program's
// own or to gather in tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// RecordAttempt implements route.Recorder. Attempts of routes outside the
// plan are not counted.
func (m *Metrics) RecordAttempt(a *route.Attempt) {
	rs := m.routes[a.Route]
	if rs == nil || a.Class >= failure.NumClasses || a.Cached {
		return // a cache hit is no attempt: CacheHit counts it by chain
	}
	rs.attempts[a.Class].Inc()
	if a.Class == failure.OK {
		rs.latency.Observe(a.Latency.Seconds())
		if a.TokensIn > 0 {
			rs.tokensIn.Add(float64(a.TokensIn))
		}
		if a.TokensOut > 0 {
			rs.tokensOut.Add(float64(a.TokensOut))
		}
	}
	if !a.RestKey.IsZero() {
		// A silent loser's strike rests as a timeout: count it so.
		if cs := m.rests[a.RestKey]; cs != nil && cs[a.Class.RestClass()] != nil {
			cs[a.Class.RestClass()].Inc()
		}
	}
	rescued := figures.Rescued(a.Class, a.Stream, a.Part)
	if !a.Retry && !rescued && !a.EdgeProbe {
		return
	}
	ps := m.pairs[pair{a.Chain, a.Route}]
	if ps == nil {
		return // a chain outside the plan (a probe), or a route not in it
	}
	if rescued {
		ps.rescues[figures.Method(a.Method)].Inc()
	}
	if a.Retry {
		ps.retries[retryOutcome(a.Class)].Inc()
	}
	if a.EdgeProbe {
		ps.probes[retryOutcome(a.Class)].Inc()
	}
}

// retryOutcome is the index in retryOutcomes of a polite retry that ended
// with class c.
func retryOutcome(c failure.Class) int {
	switch c {
	case failure.OK:
		return 0
	case failure.Cancelled:
		return 2
	}
	return 1
}

func (m *Metrics) chain(name string) *chainSet {
	if cs := m.chains[name]; cs != nil {
		return cs
	}
	return m.other
}

// Request counts one request of chain that ended with outcome (one of the
// Outcome constants; anything else counts as Other) after d. A chain outside
// the plan (a model that names none) counts as Other.
func (m *Metrics) Request(chain, outcome string, d time.Duration) {
	cs := m.chain(chain)
	c := cs.requests[outcome]
	if c == nil {
		c = cs.requests[Other]
	}
	c.Inc()
	if outcome != OutcomeCancelled {
		cs.duration.Observe(d.Seconds())
	}
}

// CacheHit counts one request of chain answered from the cache.
func (m *Metrics) CacheHit(chain string) { m.chain(chain).cacheHits.Inc() }

// FallbackServed counts one fallback answer of chain of the given kind
// (FallbackMessage, FallbackSearch, FallbackError).
func (m *Metrics) FallbackServed(chain, kind string) {
	cs := m.chain(chain)
	c := cs.fallbacks[kind]
	if c == nil {
		c = cs.fallbacks[Other]
	}
	c.Inc()
}

// Handler serves the metrics. Each scrape first reads the state gauges
// from the status source, under the scrape's context.
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.scrape.Lock()
		defer m.scrape.Unlock()
		m.refresh(r.Context())
		h.ServeHTTP(w, r)
	})
}

// refresh sets the state gauges from a fresh snapshot. Called with scrape
// held.
func (m *Metrics) refresh(ctx context.Context) {
	if m.status == nil {
		return
	}
	snap, err := m.status.Snapshot(ctx)
	if err != nil {
		m.errs.Inc()
		return
	}
	if len(snap.Problems) > 0 {
		m.errs.Inc()
	}
	m.used.Reset()
	m.left.Reset()
	m.limit.Reset()
	m.rest.Reset()
	m.state.Reset()
	seen := make(map[string]bool)
	budget := func(key string, ws status.Windows) {
		if seen[key] {
			return
		}
		seen[key] = true
		for i, w := range [...]status.Window{ws.RPM, ws.RPD, ws.TPM, ws.TPD, ws.RPH, ws.TPH, ws.TPMo, ws.RPMo} {
			if i >= 4 && w.Limit <= 0 {
				continue // the hour and month only where limited
			}
			m.used.WithLabelValues(key, windows[i]).Set(float64(w.Used))
			if w.Limit > 0 {
				m.limit.WithLabelValues(key, windows[i]).Set(float64(w.Limit))
				m.left.WithLabelValues(key, windows[i]).Set(float64(max(w.Limit-w.Used, 0)))
			}
		}
	}
	for _, r := range snap.Routes {
		for _, s := range states {
			v := 0.0
			if s == r.State {
				v = 1
			}
			m.state.WithLabelValues(r.ID, s).Set(v)
		}
		budget(r.ID, r.Budget)
		if r.ProviderBudget.Any() {
			budget(rest.ProviderKey(r.Provider).String(), r.ProviderBudget)
		}
		if r.Rest != nil && r.Rest.Key == r.ID && r.State != StateDisabled {
			m.rest.WithLabelValues(r.ID, restClass(r.Rest.Class)).Set(1)
		}
	}
	for _, p := range snap.Providers {
		if p.Rest != nil && p.State != StateDisabled {
			m.rest.WithLabelValues(rest.ProviderKey(p.Name).String(), restClass(p.Rest.Class)).Set(1)
		}
	}
}

// restClass keeps a rest's class inside the vocabulary.
func restClass(c string) string {
	if c == ClassPaused {
		return c
	}
	if _, ok := failure.ParseClass(c); ok {
		return c
	}
	return Other
}
