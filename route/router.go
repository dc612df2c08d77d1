package route

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/state"
)

// Upstream calls one provider. provider/openaicompat and provider/gemini
// implement it.
type Upstream interface {
	Chat(ctx context.Context, call provider.Call) (*llm.Response, error)
	Stream(ctx context.Context, call provider.Call) (llm.Stream, error)
}

// Budget is the quota book as the router uses it; *quota.Book implements it.
type Budget interface {
	Reserve(ctx context.Context, r *config.Route, tokens int, margin float64) (*quota.Reservation, error)
	Settle(ctx context.Context, res *quota.Reservation, used int, usageKnown bool) error
	Observe(ctx context.Context, r *config.Route, h http.Header) error
	// Left tells what a route has left, for hedging decisions.
	Left(ctx context.Context, r *config.Route) (quota.Left, error)
}

// evidence is a Budget whose margins shrink as answers confirm a route's
// configured limits and grow back at a rate refusal (quota.Book, issue 31).
type evidence interface {
	Answered(r *config.Route)
	RateRefused(r *config.Route)
}

// sizer is a Budget that learns, from the answers a route gave, how its
// provider counts prompts against the estimate and how long its answers
// are, and reserves that rather than the estimate and max_tokens
// (quota.Book, quota/answers.go, issue 31).
type sizer interface {
	Sizes(est, maxTokens int, r *config.Route) (prompt, output int)
	LearnAnswer(res *quota.Reservation, prompt, completion int)
}

// sizes is what a reservation on rt counts for a request whose prompt
// Estimate counts est: the prompt and the answer, as the budget learned
// them where it learns, else est and quota.ExpectedOutput.
func (r *Router) sizes(est, maxTokens int, rt *config.Route) (prompt, output int) {
	if sz, ok := r.budget.(sizer); ok {
		return sz.Sizes(est, maxTokens, rt)
	}
	return est, quota.ExpectedOutput(maxTokens, rt)
}

// Recorder receives one record per attempt, after the attempt ended. It is
// called from the request's goroutine or the router's drain goroutines, never
// under a lock; it must be safe for concurrent use and must not block long.
type Recorder interface {
	RecordAttempt(a *Attempt)
}

// Attempt is what one HTTP call of one route did. It holds no prompt or
// answer text and no key.
type Attempt struct {
	RequestID string
	Chain     string
	Route     string
	Provider  string
	Model     string
	Start     time.Time
	Latency   time.Duration
	// Status is the upstream's HTTP status, 0 when none came back.
	Status    int
	Class     failure.Class
	TokensIn  int
	TokensOut int
	// TokensEstimated marks tokens the gateway estimated: a stream's part
	// whose route reported no usage (it broke first, or sends none).
	TokensEstimated bool
	// Error is a short redacted reason, "" for ok.
	Error string
	// RestKey and RestUntil name the rest this attempt caused, if any.
	RestKey   rest.Key
	RestUntil time.Time
	Hedge     bool
	Stream    bool
	// Part numbers the pieces of a stream continued on another route (0 for
	// the first).
	Part int
	// Cut says what was cut from the request to fit this route ("" if
	// nothing).
	Cut string
	// Cached marks an answer served from the response cache: no call was
	// made and no quota spent.
	Cached bool
	// Retry marks the polite retry of a blip: the same route called once
	// more, after the wait it asked for (issue 13).
	Retry bool
	// Method is how a part after the first continued a broken stream:
	// "prefix" (the route continues a trailing assistant message),
	// "instruct" (the partial answer handed back with a request to continue
	// it), or "" for a first part, or a part that took the request up
	// afresh.
	Method string
	// Repair numbers the repairs of a typed answer: the same route asked
	// again, shown what its invalid answer broke (issue 15); 0 for none.
	Repair int
	// EdgeProbe marks a probe at the edge (issue 31, edge.go): every route
	// of the chain was skipped by its own budget, and this one was called
	// anyway, once in its budget's slot, rather than answer by the
	// fallback.
	EdgeProbe bool
}

// Record hands an attempt made outside the router (a cache hit) to the
// router's recorder.
func (r *Router) Record(a *Attempt) { r.record(a) }

// Options configure a Router. Plan, Upstreams and Store are required.
type Options struct {
	Plan *config.Plan
	// Upstreams by provider name.
	Upstreams map[string]Upstream
	Store     state.Store
	// Budget may be nil: no budgets are checked.
	Budget   Budget
	Clock    clock.Clock
	Recorder Recorder
	Logger   *slog.Logger
	// Pacer, when set, counts each chain's demand and holds back the
	// day-capped routes ahead of their pace (package pace, issue 31).
	// Default none: every chain keeps its order.
	Pacer Pacer
	// Shaper, when set, shapes a chain's request for each route before it
	// is fitted to the route's context (a site assistant gives a small
	// route fewer sections of its content, issue 14). Default none.
	Shaper Shaper
}

// Pacer paces a chain's day-capped routes; *pace.Pacer implements it. Its
// calls are on the request path: none may wait for a store.
type Pacer interface {
	// Arrived counts a request asking ch, of about tokens, prompt of them.
	Arrived(ch *config.Chain, prompt, tokens int)
	// Order returns order with the routes ahead of their pace moved
	// after the others.
	// tokens is the request's, prompt and answer.
	Order(ch *config.Chain, order []*config.Route, tokens int) []*config.Route
	// Picked notes that rt was reserved for a request of ch.
	Picked(ch *config.Chain, rt *config.Route)
	// Answered counts an answer by a model on ch, for the status page.
	Answered(ch *config.Chain)
}

// Shaper shapes a request for one route of a chain; note says what it
// changed, for the call log ("" when nothing). It must not modify req.
type Shaper interface {
	Shape(ch *config.Chain, rt *config.Route, req *llm.Request) (shaped *llm.Request, note string)
}

// Router walks chains. It is safe for concurrent use. Close waits for the
// goroutines that finish the losers of races.
type Router struct {
	plan   *config.Plan
	ups    map[string]Upstream
	store  state.Store
	budget Budget
	clock  clock.Clock
	rec    Recorder
	log    *slog.Logger
	shaper Shaper // nil: requests go as they are
	pacer  Pacer  // nil: chains keep their order
	// rests applies the decision table's consequences: streaks, strikes
	// and the rests they cause.
	rests *rest.Keeper

	wg sync.WaitGroup // drains of cancelled attempts

	edges edgeSlots // the budget slots probed at the edge (edge.go)

	mu    sync.Mutex // guards stats, savedAt, refreshedAt
	stats map[string]*routeStats
	// savedAt and refreshedAt are when the latency notes were last written
	// and read, in unix nanoseconds (see latencynote.go).
	savedAt, refreshedAt int64
}

type routeStats struct {
	ewmaMS float64 // decaying average latency of ok attempts
	dirty  bool    // ewmaMS changed since its note was last written
}

// New returns a Router.
func New(o Options) (*Router, error) {
	if o.Plan == nil || o.Store == nil {
		return nil, errors.New("route: Plan and Store are required")
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Router{
		plan: o.Plan, ups: o.Upstreams, store: o.Store, budget: o.Budget,
		clock: o.Clock, rec: o.Recorder, log: o.Logger, shaper: o.Shaper, pacer: o.Pacer,
		rests: rest.NewKeeper(rest.Options{Policy: rest.NewPolicy(o.Plan.Rest), Store: o.Store, DayEnd: quota.NextReset, Logger: o.Logger}),
		stats: make(map[string]*routeStats),
	}
	now := o.Clock.Now().UnixNano()
	r.savedAt, r.refreshedAt = now, now
	r.loadLatency()
	return r, nil
}

// Close waits for attempts still being wound down, then writes the
// latencies measured since the last write to the store. It is a shutdown
// call: call it once no Chat or Stream can start or be running any more
// (after the HTTP server has shut down), since a request may still begin a
// wind-down while it runs.
func (r *Router) Close() {
	r.wg.Wait()
	r.saveLatency()
}

// Plan returns the router's plan.
func (r *Router) Plan() *config.Plan { return r.plan }

// ErrUnknownChain is wrapped by the error for a model that names no chain
// (and by Chat and Stream's error for a nil chain).
var ErrUnknownChain = errors.New("unknown chain")

// Result is the answer of a chain.
type Result struct {
	Response *llm.Response
	Route    *config.Route
	// Attempts is how many attempts were started.
	Attempts int
}

// Chat answers req on the chain ch (one of the plan's: the caller looked
// it up once, from the request's model). id is the request id written to
// the call log.
func (r *Router) Chat(ctx context.Context, ch *config.Chain, id string, req *llm.Request) (*Result, error) {
	w, err := r.newWalk(ctx, ch, id, req, false)
	if err != nil {
		return nil, err
	}
	if err := w.typeCheck(); err != nil {
		return nil, err
	}
	defer w.close()
	win, err := w.run()
	if err != nil {
		return nil, err
	}
	resp := win.resp
	r.finishOK(w, win, resp.Usage, resp.UsageKnown, resp.Header, win.start)
	win.cancel(context.Canceled)
	return &Result{Response: resp, Route: win.route, Attempts: w.started}, nil
}

// ordered returns the chain's routes in the order to try them: config order,
// or, for a latency-aware chain, the faster first among routes of one rank.
func (r *Router) ordered(ch *config.Chain) []*config.Route {
	if !ch.LatencyAware || len(ch.Routes) < 2 {
		return ch.Routes
	}
	out := make([]*config.Route, len(ch.Routes))
	copy(out, ch.Routes)
	rank := make(map[*config.Route]int, len(out))
	for i, rt := range ch.Routes {
		rank[rt] = i
		if i < len(ch.Ranks) {
			rank[rt] = ch.Ranks[i]
		}
	}
	r.mu.Lock()
	if due(&r.refreshedAt, r.clock.Now(), latencyRefreshEvery) {
		r.wg.Go(r.loadLatency)
	}
	lat := make(map[*config.Route]float64, len(out))
	for _, rt := range out {
		if s := r.stats[rt.ID]; s != nil {
			lat[rt] = s.ewmaMS
		}
	}
	r.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if rank[a] != rank[b] {
			return rank[a] < rank[b]
		}
		la, lb := lat[a], lat[b]
		if la == 0 || lb == 0 { // unmeasured routes keep their place
			return false
		}
		return la < lb
	})
	return out
}

// answered notes that rt answered after latency: its latency counts, and
// its failure streak and silent strikes start again.
func (r *Router) answered(rt *config.Route, latency time.Duration) {
	r.noteLatency(rt.ID, latency)
	r.rests.Answered(rt)
}

// noteLatency feeds a route's latency: an answer's, or a lower bound of
// it, when a hedge loser had been silent for at least d. A lost race is not
// a failure (the decision table rests nothing for it), but a
// latency-aware chain should stop putting a route that keeps losing races
// first.
func (r *Router) noteLatency(id string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats[id]
	if s == nil {
		s = &routeStats{}
		r.stats[id] = s
	}
	s.addLatency(d)
	s.dirty = true
	if due(&r.savedAt, r.clock.Now(), latencySaveEvery) {
		r.wg.Go(r.saveLatency)
	}
}

func (s *routeStats) addLatency(d time.Duration) {
	ms := float64(d) / float64(time.Millisecond)
	if s.ewmaMS == 0 {
		s.ewmaMS = ms
	} else {
		s.ewmaMS = 0.8*s.ewmaMS + 0.2*ms
	}
}

// Latency returns the decaying average latency of a route's answers, 0 when
// none has been measured.
func (r *Router) Latency(routeID string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.stats[routeID]; s != nil {
		return time.Duration(s.ewmaMS * float64(time.Millisecond))
	}
	return 0
}

func (r *Router) record(a *Attempt) {
	if r.rec != nil {
		r.rec.RecordAttempt(a)
	}
}

// finishOK settles the winner's budget, records it, and updates its stats.
func (r *Router) finishOK(w *walk, win *outcome, u llm.Usage, known bool, h http.Header, start time.Time) {
	now := r.clock.Now()
	lat := win.latency
	if lat == 0 {
		lat = now.Sub(start)
	}
	r.answered(win.route, lat)
	bctx := w.background()
	if ev, ok := r.budget.(evidence); ok {
		ev.Answered(win.route)
	}
	if r.pacer != nil && w.ch.Pace {
		r.pacer.Answered(w.ch)
	}
	if win.probe {
		r.edges.answered(win.route.ID)
	}
	if r.budget != nil {
		if win.res != nil {
			_ = r.budget.Settle(bctx, win.res, win.res.Charged(u.PromptTokens, u.CompletionTokens), known)
			if sz, ok := r.budget.(sizer); ok && known {
				sz.LearnAnswer(win.res, u.PromptTokens, u.CompletionTokens)
			}
		}
		if h != nil {
			_ = r.budget.Observe(bctx, win.route, h)
		}
	}
	r.record(&Attempt{
		RequestID: w.id, Chain: w.ch.Name, Route: win.route.ID, Provider: win.route.Provider.Name,
		Model: win.route.Model, Start: start, Latency: lat, Status: http.StatusOK, Class: failure.OK,
		TokensIn: u.PromptTokens, TokensOut: u.CompletionTokens, TokensEstimated: win.spent != nil && !win.spent.known,
		Hedge: win.hedge, Stream: w.stream, Part: win.part, Cut: win.cut, Retry: win.retry, Method: win.method, Repair: w.repairOf(win),
		EdgeProbe: win.probe,
	})
}
