// Package tollfree is a gateway that keeps an AI feature answering on the
// free tiers of many LLM providers. It chains free routes (one model at one
// provider), skips the ones resting or near their cap before calling them,
// races a slow route against the next, rests each failure for as long as its
// kind suggests, and answers from a fallback when every route is down.
//
// A Go program embeds it without any HTTP server, and gets exactly what an
// HTTP caller gets: every request runs the same flow (the caller limits,
// the response cache, the routes, the chain's fallback), whether it comes
// from Gateway.Chat or from the HTTP API, which only decodes, calls the
// Gateway and encodes.
//
//	plan, err := config.Load("tollfree.yaml", os.Getenv)
//	if err != nil { ... }
//	gw, err := tollfree.New(tollfree.Options{Plan: plan})
//	if err != nil { ... }
//	defer gw.Close()
//	ans, err := gw.Chat(ctx, "planner", &tollfree.Request{
//		Messages: []tollfree.Message{{Role: "user", Content: "Summarise the report."}},
//	})
//	if err != nil { ... } // an *ExhaustedError only when the chain's fallback is an error
//	fmt.Println(ans.Content, ans.ServedBy, ans.Route)
//
// The Answer says which step answered (ServedByRoute, ServedByCache,
// ServedBySharedCall, ServedByFallbackMessage, ServedByFallbackSearch),
// the route, and the request id of the call log. Gateway.Stream answers as
// an AnswerStream (a route's stream, a cached answer replayed, or the
// fallback); Gateway.Serve and ServeStream take a Call, which also says
// who asks (Caller: an id, a gateway key by name, the owner; for the
// caller limits) and may skip the cache.
//
// The types a program needs are here (Request, Answer, AnswerStream,
// Clock...): aliases of package llm's, which the HTTP API speaks too.
// Options.Clock takes any Clock, so a program's tests can drive time.
//
// A request may ask for a typed answer with OpenAI's response_format
// (json_object, or json_schema with a JSON Schema) and its tools' parameters:
// every answer is then checked (package typed), an invalid one is asked
// again of the same route with what was wrong, then of the next route, and
// only a valid one is returned or cached; when none is, the error is an
// *InvalidAnswerError naming the violations (issue 15).
//
// Gateway.Handler returns the OpenAI-compatible HTTP API for the same
// gateway, to mount on a server of your own.
package tollfree

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"

	"github.com/tollfree/tollfree/assistant"
	"github.com/tollfree/tollfree/cache"
	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/caller/gate"
	"github.com/tollfree/tollfree/calllog"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/content"
	"github.com/tollfree/tollfree/httpapi"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/reqid"
	"github.com/tollfree/tollfree/pace"
	"github.com/tollfree/tollfree/provider/gemini"
	"github.com/tollfree/tollfree/provider/openaicompat"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/secret"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

// Options configure a Gateway. Only Plan is required.
type Options struct {
	// Plan is the compiled configuration (config.Load, config.Default).
	Plan *config.Plan
	// Store holds rests, pauses and budget counts. Default: a memstore
	// persisted under Plan.DataDir. Pass a redisstore to share state between
	// instances.
	Store state.Store
	// HTTPClient's Transport calls the providers, each request as it is
	// (its Jar, CheckRedirect and Timeout are not used; a redirect is
	// not followed). Default: each adapter's tuned client.
	HTTPClient *http.Client
	// Logger receives operational messages (never prompts, answers or keys).
	Logger *slog.Logger
	// Clock drives every deadline, rest, hedge delay and budget window;
	// default the wall clock. A program's tests can pass a fake one of
	// their own (see Clock).
	Clock Clock
	// Recorder receives each attempt in addition to the call log.
	Recorder route.Recorder
	// Extra handlers for the HTTP mux (status page, metrics, admin).
	Extra map[string]http.Handler
	// Health adds lines to /healthz.
	Health func() map[string]string
	// Metrics, when set, builds the Prometheus metrics served on /metrics
	// (cmd/tollfree passes metrics.New).
	Metrics MetricsFunc
	// CallLog, when set, receives the call records instead of the file
	// Plan.CallLog names (calllog.NewWriter wraps any io.Writer). The
	// gateway closes it, unless KeepCallLog.
	CallLog *calllog.Writer
	// KeepCallLog leaves CallLog open when the gateway closes: a program
	// that swaps gateways on one call log (cmd/tollfree's reload) closes it
	// itself, once.
	KeepCallLog bool
	// CacheBackend stores cached answers for chains with a cache_ttl.
	// Default: memory (64 MiB, least recently used first) over disk under
	// Plan.DataDir. Pass a cache/rediscache backend to share the cache.
	CacheBackend cache.Backend
}

// Gateway is a running tollfree: router, state, budgets, call log and the
// HTTP API. It is safe for concurrent use.
type Gateway struct {
	plan    *config.Plan
	router  *route.Router
	budget  *quota.Book
	pacer   *pace.Pacer
	check   *caller.Check // who is calling, their limits, the cap on requests at once (issue 12)
	store   state.Store
	own     *memstore.Store // closed by Close when the gateway opened it
	log     *calllog.Writer
	keepLog bool // log is the caller's to close (Options.KeepCallLog)
	cache   *cache.Cache
	shelf   *shelf                      // the live content folders (content.go)
	content map[string]*content.Library // by chain: the content its answers draw on
	// assistants are the site assistants, by chain (ask.go, issue 14).
	assistants map[string]*siteAssistant
	// resting builds a plain chain's search fallback: an assistant with
	// the default resting sentences, and no rules or contact of its own.
	resting *assistant.Assistant
	ids     *reqid.Source // names the requests that come without an id
	clock   clock.Clock
	logger  *slog.Logger
	handler *httpapi.Server
	served  http.Handler   // handler behind the scrubbing of secrets (secrets.go)
	obs     *observability // status, stats, metrics (observability.go)

	closeOnce sync.Once
	closeErr  error
}

// New builds a Gateway from a plan.
func New(o Options) (*Gateway, error) {
	if o.Plan == nil {
		return nil, errors.New("tollfree: Options.Plan is required (config.Load or config.Default)")
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	secrets := secretsOf(o.Plan)
	o.Logger = slog.New(secret.NewHandler(o.Logger.Handler(), secrets))
	if n := secrets.Skipped(); n > 0 {
		o.Logger.Warn("some configured keys or tokens are shorter than 4 bytes and are not scrubbed from logs and pages; use longer ones", "count", n)
	}
	g := &Gateway{plan: o.Plan, ids: reqid.New(), clock: o.Clock, logger: o.Logger}
	g.store = o.Store
	if g.store == nil {
		dir := ""
		if o.Plan.DataDir != "" {
			dir = filepath.Join(o.Plan.DataDir, "state")
		}
		ms, err := memstore.Open(memstore.Options{Dir: dir, Clock: o.Clock, Logger: o.Logger})
		if err != nil {
			return nil, fmt.Errorf("tollfree: opening local state: %w", err)
		}
		g.own, g.store = ms, ms
	}
	if secrets.Len() > 0 {
		g.store = scrubStore{Store: g.store, set: secrets}
	}
	g.budget = quota.New(quota.Options{Store: g.store, Clock: o.Clock})
	g.pacer = pace.New(pace.Options{Store: g.store, Budget: g.budget, Clock: o.Clock})
	sv := o.Plan.Server
	g.check = caller.NewCheck(caller.New(o.Plan, o.Clock), g.budget, o.Plan,
		gate.Options{Max: sv.MaxRequests, Queue: sv.QueueLength, Wait: sv.QueueWait, Clock: o.Clock}, o.Logger)
	var recs multiRecorder
	if o.CallLog != nil {
		g.log, g.keepLog = o.CallLog, o.KeepCallLog
		recs = append(recs, o.CallLog)
	} else if p := o.Plan.CallLog; p != "off" {
		if p == "" {
			p = filepath.Join(o.Plan.DataDir, "calls.jsonl")
		}
		w, err := calllog.Open(p, o.Logger)
		if err != nil {
			g.Close()
			return nil, fmt.Errorf("tollfree: opening the call log: %w", err)
		}
		g.log = w
		recs = append(recs, w)
	}
	if o.Recorder != nil {
		recs = append(recs, o.Recorder)
	}
	recs = append(recs, g.recorders(&o)...)
	ups := Upstreams(o.Plan, o.HTTPClient)
	g.shelf = newShelf(o.Clock, o.Logger)
	g.content = openContents(o.Plan, g.shelf)
	g.assistants = openAssistants(o.Plan, g.content)
	g.resting = assistant.New(&config.Assistant{Resting: config.DefaultResting()})
	r, err := route.New(route.Options{
		Plan: o.Plan, Upstreams: ups, Store: g.store, Budget: g.budget, Pacer: g.pacer, Shaper: g,
		Clock: o.Clock, Recorder: scrubRecorder{next: recs, set: secrets}, Logger: o.Logger,
	})
	if err != nil {
		g.Close()
		return nil, err
	}
	g.router = r
	if usesCache(o.Plan) {
		b := o.CacheBackend
		if b == nil {
			mem := cache.NewMemory(cache.DefaultMemoryBytes, o.Clock)
			b = mem
			if o.Plan.DataDir != "" {
				disk, err := cache.NewDisk(filepath.Join(o.Plan.DataDir, "cache"), o.Clock)
				if err != nil {
					g.Close()
					return nil, fmt.Errorf("tollfree: opening the response cache: %w", err)
				}
				b = &cache.Tiered{Fast: mem, Slow: disk}
			}
		}
		log := o.Logger
		g.cache = cache.New(cache.Options{Backend: b, Clock: o.Clock, OnError: func(err error) {
			log.Warn("response cache: served as a miss", "err", err)
		}})
	}
	extra := g.handlers(&o)
	for p, h := range o.Extra {
		if extra == nil {
			extra = make(map[string]http.Handler)
		}
		extra[p] = h
	}
	g.handler = httpapi.New(httpapi.Options{Plan: o.Plan, Gateway: g, Callers: g.check.Resolver(), Clock: o.Clock, Logger: o.Logger, Extra: extra, Health: g.health(o.Health)})
	g.served = g.handler
	if secrets.Len() > 0 {
		g.served = scrubHandler{next: g.handler, set: secrets}
	}
	return g, nil
}

// Upstreams builds one adapter per enabled provider of the plan. Each
// scrubs every secret of the plan from the errors it returns.
func Upstreams(p *config.Plan, client *http.Client) map[string]route.Upstream {
	ups := make(map[string]route.Upstream, len(p.Providers))
	secrets := secretsOf(p)
	for name, pr := range p.Providers {
		if pr.Disabled {
			continue
		}
		switch pr.Dialect {
		case config.DialectGemini:
			ups[name] = gemini.New(gemini.Options{Name: name, BaseURL: pr.BaseURL, APIKey: pr.APIKey, Headers: pr.Headers, Client: client, Secrets: secrets,
				Fetch: mediaFetch(p.Media)})
		default:
			ups[name] = openaicompat.New(openaicompat.Options{Name: name, Flavor: pr.Flavor, BaseURL: pr.BaseURL, APIKey: pr.APIKey, Headers: pr.Headers, Client: client, Secrets: secrets})
		}
	}
	return ups
}

// mediaFetch is what the Gemini adapter may fetch of a request's media
// URLs: from the hosts the plan allows, within its limits (issue 33).
// None by default.
func mediaFetch(m config.Media) gemini.Fetch {
	if len(m.FetchHosts) == 0 {
		return gemini.Fetch{}
	}
	return gemini.Fetch{Allows: m.Allows, MaxBytes: m.MaxBytes, Timeout: m.Timeout}
}

func usesCache(p *config.Plan) bool {
	for _, ch := range p.Chains {
		if ch.CacheTTL > 0 {
			return true
		}
	}
	return false
}

type multiRecorder []route.Recorder

func (m multiRecorder) RecordAttempt(a *route.Attempt) {
	for _, r := range m {
		r.RecordAttempt(a)
	}
}

// Handler returns the OpenAI-compatible HTTP API, with the status page,
// metrics and admin API mounted beside it. No configured secret appears in
// its error responses or pages.
func (g *Gateway) Handler() http.Handler { return g.served }

// Router returns the gateway's router.
func (g *Gateway) Router() *route.Router { return g.router }

// Budget returns the gateway's quota book.
func (g *Gateway) Budget() *quota.Book { return g.budget }

// Pacer returns the gateway's pacer: each chain's demand profile and the
// pace of its day-capped routes (package pace).
func (g *Gateway) Pacer() *pace.Pacer { return g.pacer }

// Store returns the gateway's state store.
func (g *Gateway) Store() state.Store { return g.store }

// Plan returns the gateway's plan.
func (g *Gateway) Plan() *config.Plan { return g.plan }

// Close waits for attempts being wound down, then flushes the call log and
// closes the state it opened. Calls after the first return its result.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() { g.closeErr = g.close() })
	return g.closeErr
}

func (g *Gateway) close() error {
	var errs []error
	if g.cache != nil {
		g.cache.Close()
	}
	if g.router != nil {
		g.router.Close()
	}
	if g.pacer != nil {
		g.pacer.Close() // the demand counted since its last write
	}
	if g.budget != nil {
		g.budget.Close() // its last writes of learned limits
	}
	if g.shelf != nil {
		g.shelf.close()
	}
	if g.log != nil && !g.keepLog {
		errs = append(errs, g.log.Close())
	}
	if g.own != nil {
		errs = append(errs, g.own.Close())
	}
	return errors.Join(errs...)
}
