// Package doctor owns `tollfree doctor`: before traffic arrives, it checks
// that a plan can answer. It says which provider keys are present, calls
// every enabled route once with a tiny request (a bounded number of answer
// tokens), tries the thinking levels a thinking model is configured with
// (Gemini 3.x thinkingLevel, Gemini 2.5 thinkingBudget, reasoning_effort on
// OpenAI-style reasoning models), and reports, per route, what a real
// request would meet: ok, or the failure class (auth, gone, rate_day...)
// with the provider's redacted reason. A chain with no working route is the
// verdict that matters; Report.Broken names those chains.
//
// Probing spends the providers' free quota, outside any running gateway's
// budget book, so Run says up front at most how many requests it will send
// and how many answer tokens each may take, warns where that is a large
// share of a route's daily allowance, and counts what it spent per provider
// at the end. Providers are probed at once; the routes of one provider one
// after another, paced to its per-minute limits, so that the probe itself
// never trips a per-minute limit.
//
// Nothing it prints holds a key, a prompt or an answer: reasons come from
// failure.Verdict.LogText, already redacted.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/state/memstore"
)

// Options configure Run. Only Plan is required.
type Options struct {
	// Plan is the compiled configuration to check.
	Plan *config.Plan
	// Source names the configuration in the first line of output ("tollfree.yaml").
	// Default "config".
	Source string
	// Client calls the providers. Nil means each adapter's own client.
	Client *http.Client
	// Upstreams, when not nil, replaces the adapters built from Plan and
	// Client (one per provider name), for tests and embedding.
	Upstreams map[string]route.Upstream
	// Clock measures latency, ends timeouts and paces requests. Default the
	// wall clock.
	Clock clock.Clock
	// Out receives the progress lines and the result tables. Nil discards.
	Out io.Writer
	// Progress, when set, receives a one-line count of the routes probed,
	// rewritten in place with "\r": give it a terminal only.
	Progress io.Writer
	// MaxTokens caps the answer tokens of each probe request. Default 8.
	MaxTokens int
	// Timeout caps each probe request. Zero means the route's own timeout,
	// or 20s for a route without one.
	Timeout time.Duration
	// NoThinking skips the thinking-level probes: one request per route.
	NoThinking bool
	// DryRun lists what would be probed and what it would cost, and sends
	// nothing.
	DryRun bool
	// Parallel is how many providers are probed at once; 0 means all of
	// them. The routes of one provider are always probed one at a time.
	Parallel int
}

// The results a route can have besides a failure class.
const (
	// ResultOK: the route answered.
	ResultOK = "ok"
	// ResultDisabled: the route cannot be called (no key, or switched off).
	ResultDisabled = "disabled"
	// ResultUnreachable: nothing listens at the route's base URL (a
	// refused connection), as when a local server is not started.
	ResultUnreachable = "unreachable"
	// ResultSkipped: the route was not called: its provider refused the key
	// on an earlier route, or the run was cancelled.
	ResultSkipped = "skipped"
	// ResultPlanned: a dry run; the route would be probed.
	ResultPlanned = "planned"
)

// The answers a thinking level can get.
const (
	LevelAccepted = "accepted" // the route answered (an empty answer counts: thinking may eat the tiny budget)
	LevelRefused  = "refused"  // a 4xx about the request's settings (bad_config, bad_request)
	LevelUnknown  = "unknown"  // another failure (a rate limit, an outage): untested
)

// RouteResult is what probing one route found.
type RouteResult struct {
	Route    string
	Provider string
	Model    string
	// Result is ResultOK, a failure class ("auth", "gone", "rate_day",
	// "bad_config"...), ResultDisabled, ResultSkipped or ResultPlanned.
	Result string
	// Status is the HTTP status of the main probe, 0 when none came back.
	Status int
	// Detail is why the route is not ok: the provider's redacted reason, or
	// the disabled or skipped reason. "" for ok.
	Detail  string
	Latency time.Duration
	// Requests is how many requests this route's probes sent.
	Requests int
	// TokensIn and TokensOut are the tokens the provider reported for them.
	TokensIn  int
	TokensOut int
	// Thinking holds one entry per thinking level tried, in the order tried.
	Thinking []LevelResult
}

// Working reports whether the route answered its probe.
func (r *RouteResult) Working() bool { return r.Result == ResultOK }

// LevelResult is what one thinking level got.
type LevelResult struct {
	// Level names it as sent: "MINIMAL", "budget 0", "low".
	Level string
	// Result is LevelAccepted, LevelRefused or LevelUnknown.
	Result string
	// Class is the failure class of a refused or unknown level.
	Class string
	// Detail is the provider's redacted reason for a refused or unknown level.
	Detail string
}

// ChainResult is one chain's verdict.
type ChainResult struct {
	Chain string
	// Routes is the chain's route count; Working lists the routes that
	// answered, in chain order.
	Routes  int
	Working []string
}

// Spend is what the probes sent to one provider.
type Spend struct {
	Provider string
	Requests int
	// MaxAnswerTokens is Requests times the answer-token cap: what the
	// answers could have cost at most (thinking tokens aside).
	MaxAnswerTokens int
	// TokensIn and TokensOut are what the provider reported.
	TokensIn  int
	TokensOut int
}

// Report is the outcome of a Run.
type Report struct {
	// Routes in the plan's route order.
	Routes []RouteResult
	// Chains in the plan's chain order.
	Chains []ChainResult
	// Spent per provider that was sent anything, in the plan's provider
	// order.
	Spent []Spend
	// PlannedRequests is the most requests the run could send.
	PlannedRequests int
	// DryRun is set when nothing was sent.
	DryRun bool
	// LimitsSaid are the limits the providers' rate-limit headers reported
	// unlike the configured (or preset) ones (issue 35): "groq/...: preset
	// rpd 1000, provider says 500 since 2026-12-03".
	LimitsSaid []string
}

// Broken returns the chains with no working route, in plan order. After a
// dry run it is empty.
func (r *Report) Broken() []string {
	var out []string
	for _, c := range r.Chains {
		if len(c.Working) == 0 && !r.DryRun {
			out = append(out, c.Chain)
		}
	}
	return out
}

// defaults.
const (
	defaultMaxTokens = 8
	defaultTimeout   = 20 * time.Second
)

// Run probes every enabled route of o.Plan and writes its progress and
// results to o.Out. It returns the report, and an error only when the
// options are unusable or ctx ended the run early (the report then holds
// what was found so far, the rest skipped).
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Plan == nil {
		return nil, errors.New("doctor: Options.Plan is required (config.Load or config.Default)")
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = defaultMaxTokens
	}
	if o.Source == "" {
		o.Source = "config"
	}
	jobs := plan(&o)
	rep := &Report{Routes: make([]RouteResult, len(o.Plan.RouteOrder))}
	idx := make(map[string]int, len(o.Plan.RouteOrder))
	for i, id := range o.Plan.RouteOrder {
		r := o.Plan.Routes[id]
		idx[id] = i
		rep.Routes[i] = RouteResult{Route: r.ID, Provider: r.Provider.Name, Model: r.Model}
		if r.Disabled {
			rep.Routes[i].Result, rep.Routes[i].Detail = ResultDisabled, r.DisabledReason
		}
	}
	for _, j := range jobs {
		for _, rj := range j.routes {
			rep.PlannedRequests += rj.requests()
		}
	}
	writeHeader(o.Out, &o, jobs, rep.PlannedRequests)
	if o.DryRun {
		rep.DryRun = true
		for _, j := range jobs {
			for _, rj := range j.routes {
				rep.Routes[idx[rj.route.ID]].Result = ResultPlanned
			}
		}
		writeDryRun(o.Out, &o, jobs)
		rep.Chains = chainResults(o.Plan, rep, idx)
		return rep, nil
	}
	ups := o.Upstreams
	if ups == nil {
		ups = tollfree.Upstreams(o.Plan, o.Client)
	}
	// The probes' rate-limit headers are read as a gateway reads them, into
	// a book of its own in memory, to tell where the providers now say
	// other limits than the configuration.
	bc := bookClock{o.Clock}
	mem, merr := memstore.Open(memstore.Options{Clock: bc})
	if merr != nil {
		return rep, fmt.Errorf("doctor: %w", merr)
	}
	defer mem.Close()
	book := quota.New(quota.Options{Store: mem, Clock: bc})
	defer book.Close()
	err := probeAll(ctx, &o, ups, jobs, rep, idx, book)
	for _, l := range book.Said(o.Plan, o.Clock.Now()) {
		rep.LimitsSaid = append(rep.LimitsSaid, l.String())
	}
	rep.Chains = chainResults(o.Plan, rep, idx)
	rep.Spent = spent(o.Plan, rep, o.MaxTokens)
	writeResults(o.Out, rep)
	if err != nil {
		return rep, fmt.Errorf("doctor: run stopped early: %w", err)
	}
	return rep, nil
}

// event is what a provider's goroutine tells the printer: a finished route,
// or a note (a pacing wait).
type event struct {
	result *RouteResult
	note   string
}

// probeAll probes the providers, o.Parallel at once, and
// prints each route's line as it finishes.
func probeAll(ctx context.Context, o *Options, ups map[string]route.Upstream, jobs []providerJob, rep *Report, idx map[string]int, book *quota.Book) error {
	buf := 0
	for _, j := range jobs {
		buf += len(j.routes) * 2 // a result and at most one pacing note per route
		for _, rj := range j.routes {
			buf += rj.requests()
		}
	}
	events := make(chan event, buf) // never blocks a sender: see buf
	par := o.Parallel
	if par <= 0 || par > len(jobs) {
		par = len(jobs)
	}
	// Workers take providers in plan order, so that Parallel 1 probes them
	// in that order.
	queue := make(chan providerJob, len(jobs))
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	var wg sync.WaitGroup
	for range max(par, 1) {
		wg.Go(func() {
			for j := range queue {
				p := &prober{o: o, up: ups[j.provider.Name], provider: j.provider, events: events, book: book}
				p.run(ctx, j.routes)
			}
		})
	}
	go func() {
		wg.Wait()
		close(events)
	}()
	total := 0
	for _, j := range jobs {
		total += len(j.routes)
	}
	done := 0
	bar := func() { fmt.Fprintf(o.Progress, "\rprobing: %d of %d routes probed...", done, total) }
	clear := func() { io.WriteString(o.Progress, "\r\033[K") }
	bar()
	for ev := range events {
		clear()
		if ev.result == nil {
			fmt.Fprintf(o.Out, "  ... %s\n", ev.note)
			bar()
			continue
		}
		done++
		rep.Routes[idx[ev.result.Route]] = *ev.result
		writeProgress(o.Out, done, total, ev.result)
		bar()
	}
	clear()
	return ctx.Err()
}

func chainResults(p *config.Plan, rep *Report, idx map[string]int) []ChainResult {
	out := make([]ChainResult, 0, len(p.ChainOrder))
	for _, name := range p.ChainOrder {
		c := p.Chains[name]
		cr := ChainResult{Chain: name, Routes: len(c.Routes)}
		for _, r := range c.Routes {
			if i, ok := idx[r.ID]; ok && rep.Routes[i].Working() {
				cr.Working = append(cr.Working, r.ID)
			}
		}
		out = append(out, cr)
	}
	return out
}

func spent(p *config.Plan, rep *Report, maxTokens int) []Spend {
	by := map[string]*Spend{}
	for i := range rep.Routes {
		r := &rep.Routes[i]
		if r.Requests == 0 {
			continue
		}
		s := by[r.Provider]
		if s == nil {
			s = &Spend{Provider: r.Provider}
			by[r.Provider] = s
		}
		s.Requests += r.Requests
		s.MaxAnswerTokens += r.Requests * maxTokens
		s.TokensIn += r.TokensIn
		s.TokensOut += r.TokensOut
	}
	var out []Spend
	for _, name := range p.ProviderOrder {
		if s := by[name]; s != nil {
			out = append(out, *s)
		}
	}
	return out
}

// bookClock tells the limits book the probes' time, and runs its timers
// (the store's housekeeping) on the wall clock: they are not the probes'
// pacing, which Options.Clock measures.
type bookClock struct{ clock.Clock }

func (bookClock) NewTimer(d time.Duration) clock.Timer { return clock.Real{}.NewTimer(d) }

func (bookClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return clock.Real{}.AfterFunc(d, f)
}
