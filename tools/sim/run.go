package sim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/pace"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/state/memstore"
)

// The policies Run compares.
const (
	// PolicyTollfree is the gateway with seed 000's limits configured.
	PolicyTollfree = "tollfree"
	// PolicyLearning is the gateway with every limit left out of its
	// config: it knows them only from headers and 429s.
	PolicyLearning = "tollfree, limits learned"
	// PolicyNaive is seed 001's loop: each route in order, no budgets, no
	// rests, no hedging.
	PolicyNaive = "naive chain"
	// PolicyCapacity answers each question with the first route of the
	// chain that the emulator admits, asked at the arrival instant, each
	// refusal free and every answer instant, with no incident: what the
	// free limits can carry.
	PolicyCapacity = "capacity"
)

// Options configure Run.
type Options struct {
	// Trace is the traffic; required.
	Trace []Arrival
	// Start is when the trace starts. Default 2026-06-16 00:00
	// America/Los_Angeles, the start of a Gemini day.
	Start time.Time
	// Chain is the routes asked, in order, from seed 000's chain (Chain).
	// Default CappedChain: every route has a daily cap.
	Chain []string
	// Incidents happen on every day the trace covers; nil means none. An
	// incident on a route not in Chain is left out.
	Incidents []Incident
	// Scale multiplies the limits the emulator enforces on a route's model
	// (its RPM, RPD, TPM and TPD), leaving the gateway's config at the
	// presets': a day where the configured limits are wrong. Nil: none.
	Scale map[string]float64
	// Policies to run, from the Policy constants. Default all five (the
	// optimum computed, the others played).
	Policies []string
	// Progress, when set, is called as each policy starts (done of total
	// policies finished so far) and once more when all are done, for a
	// line per step on a terminal.
	Progress func(policy string, done, total int)
}

// DefaultStart is Options.Start's default.
func DefaultStart() time.Time {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		la = time.FixedZone("PDT", -7*3600)
	}
	return time.Date(2026, 6, 16, 0, 0, 0, 0, la)
}

// Report is the outcome of every policy on one trace.
type Report struct {
	Start time.Time
	// Chain is the routes played, in order.
	Chain     []string
	Requests  int
	Days      int
	Incidents []Incident
	// Scale is Options.Scale.
	Scale map[string]float64
	// Bin is the width of the bins of time the results count answers in,
	// from From (offsets from Start): an hour from the start, or a minute
	// from the first arrival's for a trace shorter than two hours.
	Bin, From time.Duration
	Results   []*Result
}

// Result returns the named policy's result, nil if it did not run.
func (r *Report) Result(name string) *Result {
	for _, x := range r.Results {
		if x.Policy == name {
			return x
		}
	}
	return nil
}

// Result is what one policy did with the trace.
type Result struct {
	Policy string
	// ByModel and ByFallback count the questions a model answered and
	// those the fallback answered.
	ByModel, ByFallback int
	// Calls are the upstream calls made; RateLimited those the emulator
	// answered 429 (every one the caller's making when its limits were
	// configured). Calls less ByModel are the calls wasted: every call
	// that gave no answer used (429s, failures, hedge losers).
	Calls, RateLimited int
	// FailedCalls are calls the provider counted that gave no answer (5xx,
	// hangs, timeouts); FailedTokens what they were charged.
	FailedCalls, FailedTokens int
	// LoserCalls are hedge losers, cancelled once another route answered;
	// LoserTokens what the provider charged for them anyway.
	LoserCalls, LoserTokens int
	// P50, P95, P99 are answer times (virtual), fallback answers included.
	P50, P95, P99 time.Duration
	// ByModelBin and FallbackBin count answers by the arrival's bin of
	// time (Report.Bin).
	ByModelBin, FallbackBin []int
	// ByRoute counts answers per route.
	ByRoute map[string]int
	// PaceBin is, for a policy that paces its day caps, the answers its
	// pace line allowed the day-capped routes by the end of each bin
	// since the day began (the pacer's forecast, summed over the routes
	// it paced); nil otherwise.
	PaceBin []float64
	// CappedBin counts answers by the day-capped routes (cappedRoutes),
	// per bin.
	CappedBin []int
	// Stalls counts the times the driver moved the clock without having
	// seen every goroutine settle (0 in a sound run).
	Stalls int64
	// StallWhy says, for each stall, the virtual time and what held the
	// driver (the first condition of quiet that failed).
	StallWhy []string
	// Elapsed is the real time the run took.
	Elapsed time.Duration
}

// Run plays the trace against each policy, each on its own emulator and
// fake clock, and returns the report.
func Run(ctx context.Context, o Options) (*Report, error) {
	if len(o.Trace) == 0 {
		return nil, errors.New("sim: the trace is empty")
	}
	if o.Start.IsZero() {
		o.Start = DefaultStart()
	}
	if len(o.Chain) == 0 {
		o.Chain = CappedChain()
	}
	ps, err := tiers(o.Chain, o.Scale)
	if err != nil {
		return nil, err
	}
	var kept []Incident
	for _, in := range o.Incidents {
		if slices.Contains(o.Chain, in.Route) {
			kept = append(kept, in)
		}
	}
	o.Incidents = kept
	if len(o.Policies) == 0 {
		o.Policies = []string{PolicyTollfree, PolicyLearning, PolicyNaive, PolicyCapacity, PolicyOptimum}
	}
	days := int(o.Trace[len(o.Trace)-1].At/(24*time.Hour)) + 1
	bins := binsFor(o.Trace)
	rep := &Report{Start: o.Start, Chain: o.Chain, Requests: len(o.Trace), Days: days, Incidents: o.Incidents, Scale: o.Scale, Bin: bins.width, From: bins.from}
	progress := o.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	defer func() { progress("", len(rep.Results), len(o.Policies)) }()
	for i, p := range o.Policies {
		progress(p, i, len(o.Policies))
		began := time.Now()
		var res *Result
		var err error
		switch p {
		case PolicyTollfree, PolicyLearning:
			res, err = runGateway(ctx, o, ps, days, p == PolicyTollfree)
		case PolicyNaive:
			res, err = runNaive(ctx, o, ps, days, false)
		case PolicyCapacity:
			res, err = runNaive(ctx, o, ps, days, true)
		case PolicyOptimum:
			res = Optimum(o.Trace, o.Start, chainDeadline, o.Chain, ps)
		default:
			return nil, fmt.Errorf("sim: unknown policy %q (want one of %q, %q, %q, %q, %q)", p, PolicyTollfree, PolicyLearning, PolicyNaive, PolicyCapacity, PolicyOptimum)
		}
		if err != nil {
			return nil, fmt.Errorf("sim: %s: %w", p, err)
		}
		res.Policy, res.Elapsed = p, time.Since(began)
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// event is an arrival (incident nil) or an incident, in time order.
type event struct {
	at       time.Duration
	arrival  Arrival
	incident *Incident
}

func events(o Options, days int) []event {
	ev := make([]event, 0, len(o.Trace)+days*len(o.Incidents))
	for _, a := range o.Trace {
		ev = append(ev, event{at: a.At, arrival: a})
	}
	for d := range days {
		for i := range o.Incidents {
			in := &o.Incidents[i]
			ev = append(ev, event{at: time.Duration(d)*24*time.Hour + in.At, incident: in})
		}
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].at < ev[j].at })
	return ev
}

// outcome is what one question got.
type outcome struct {
	arrival bool
	at      time.Duration
	byModel bool
	route   string
	took    time.Duration
}

// chainDeadline is the chain's deadline (configYAML): a question is
// answered within it of its arrival or by the fallback.
const chainDeadline = 30 * time.Second

// emuURL is where the in-process emulator seems to live.
const emuURL = "http://emulator.sim"

func simEnv(k string) string {
	if k == "SIM_KEY" {
		return "sim-key"
	}
	return ""
}

// attempts records the router's attempts and tells the driver: a failed
// attempt (recorded by the question's own goroutine, which then walks on)
// makes that question busy again.
type attempts struct {
	d      *driver
	mu     sync.Mutex // guards a, tracks
	a      []route.Attempt
	tracks map[string]*track
}

func (r *attempts) setTrack(id string, t *track) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t == nil {
		delete(r.tracks, id)
		return
	}
	r.tracks[id] = t
}

func (r *attempts) RecordAttempt(a *route.Attempt) {
	r.mu.Lock()
	r.a = append(r.a, *a)
	t := r.tracks[a.RequestID]
	r.mu.Unlock()
	if t != nil && a.Class != failure.OK && a.Class != failure.Cancelled && a.Class != failure.SilentLoser && !blip(a) {
		r.d.busy(t)
	}
	r.d.record()
}

// blip reports whether a failed attempt is a blip the router retries on the
// same route after the wait it asked (a 429 with a short wait, a bare
// 500/502): no rest, not itself a retry. The question's goroutine then
// waits on the retry's timer, which the driver sees as any timer, instead
// of walking on.
func blip(a *route.Attempt) bool {
	switch a.Status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway:
		return a.RestUntil.IsZero() && !a.Retry
	}
	return false
}

func runGateway(ctx context.Context, o Options, ps []emulator.Preset, days int, limits bool) (*Result, error) {
	d := newDriver(o.Start)
	clk := d.clockFor(false)
	emu := newEmulator(d, ps, false)
	plan, err := config.Parse("sim.yaml", []byte(configYAML(emuURL, o.Chain, limits)), simEnv)
	if err != nil {
		return nil, err
	}
	// The real policy: the gateway's router, budgets and state, as
	// tollfree.New wires them, with each adapter wrapped for the driver.
	store, err := memstore.Open(memstore.Options{Clock: clk, FlushEvery: 10000 * time.Hour})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	rec := &attempts{d: d, tracks: map[string]*track{}}
	ups := tollfree.Upstreams(plan, &http.Client{Transport: transport{d: d, h: emu}})
	book := quota.New(quota.Options{Store: store, Clock: clk})
	pacer := pace.New(pace.Options{Store: store, Budget: book, Clock: clk})
	defer pacer.Close()
	router, err := route.New(route.Options{
		Plan: plan, Upstreams: d.wrap(ups), Store: store, Clock: clk, Recorder: rec,
		Budget: book, Pacer: pacer,
	})
	if err != nil {
		return nil, err
	}
	chain := plan.Chains["answer"]
	ev := events(o, days)
	outs := make([]outcome, len(ev))
	bins := binsFor(o.Trace)
	paced := newPaceSamples(bins, cappedRoutes(ps, o.Trace))
	err = d.drive(ctx, o.Start, eventTimes(ev), applyIncident(ev, emu), func(ctx context.Context, i int) {
		e := ev[i]
		paced.sample(bins.index(e.at), pacer.Snapshot(chain.Name))
		id := fmt.Sprintf("q%d", i)
		rec.setTrack(id, trackOf(ctx))
		start := clk.Now()
		res, err := router.Chat(ctx, chain, id, question(e.arrival))
		out := outcome{arrival: true, at: e.at, took: clk.Now().Sub(start)}
		if err == nil {
			out.byModel, out.route = true, res.Route.ID
		}
		outs[i] = out
		rec.setTrack(id, nil)
	})
	router.Close()
	if err != nil {
		return nil, err
	}
	r := summarize(outs, paced.capped, bins)
	r.PaceBin = paced.result()
	r.Stalls, r.StallWhy = d.stalls.Load(), d.why
	for _, a := range rec.a {
		switch {
		case a.Class == failure.OK:
		case a.Class == failure.Cancelled || a.Class == failure.SilentLoser:
			r.LoserCalls++
		case a.Status != http.StatusTooManyRequests:
			r.FailedCalls++
		}
	}
	emuCounts(r, emu)
	return r, nil
}

// applyIncident returns the driver's inline handler: it applies incidents.
func applyIncident(ev []event, emu *emulator.Emulator) func(int) bool {
	return func(i int) bool {
		if ev[i].incident == nil {
			return false
		}
		ev[i].incident.apply(emu)
		return true
	}
}

func eventTimes(ev []event) []time.Duration {
	at := make([]time.Duration, len(ev))
	for i, e := range ev {
		at[i] = e.at
	}
	return at
}

// emuCounts fills in what the emulator saw: calls, 429s, and the tokens
// charged for calls that were cut (hedge losers) or failed.
func emuCounts(r *Result, emu *emulator.Emulator) {
	for _, rec := range emu.Records() {
		r.Calls++
		switch {
		case strings.HasPrefix(rec.Behaviour, "limit_"):
			r.RateLimited++
		case rec.Status == 0 && rec.Behaviour == string(emulator.Answer):
			r.LoserTokens += rec.PromptTokens + rec.CompletionTokens
		}
	}
}

// runNaive runs seed 001's loop: each route in order with the chain's
// attempt timeout, within its deadline, moving on at any failure. As the
// capacity oracle (oracle true), every answer is instant and no incident
// happens.
func runNaive(ctx context.Context, o Options, ps []emulator.Preset, days int, oracle bool) (*Result, error) {
	d := newDriver(o.Start)
	emu := newEmulator(d, ps, oracle)
	plan, err := config.Parse("sim.yaml", []byte(configYAML(emuURL, o.Chain, true)), simEnv)
	if err != nil {
		return nil, err
	}
	ups := d.wrap(tollfree.Upstreams(plan, &http.Client{Transport: transport{d: d, h: emu}}))
	ch := plan.Chains["answer"]
	clk := d.clockFor(false)
	if oracle {
		o.Incidents = nil
	}
	ev := events(o, days)
	outs := make([]outcome, len(ev))
	var mu sync.Mutex // guards failed
	failed := 0
	err = d.drive(ctx, o.Start, eventTimes(ev), applyIncident(ev, emu), func(ctx context.Context, i int) {
		e := ev[i]
		tk := trackOf(ctx)
		start := clk.Now()
		req := question(e.arrival)
		out := outcome{arrival: true, at: e.at}
		dctx, cancel := clock.WithTimeout(ctx, clk, ch.Deadline)
		defer cancel()
		for _, rt := range ch.Routes {
			if dctx.Err() != nil {
				break
			}
			actx, acancel := clock.WithTimeout(dctx, clk, ch.AttemptTimeout)
			resp, err := ups[rt.Provider.Name].Chat(actx, provider.Call{Model: rt.Model, Request: req, Extra: rt.Extra})
			acancel()
			d.busy(tk)
			d.record()
			if err == nil && strings.TrimSpace(resp.Content) != "" {
				out.byModel, out.route = true, rt.ID
				break
			}
			var ue *failure.UpstreamError
			if !errors.As(err, &ue) || ue.Status != http.StatusTooManyRequests {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		}
		out.took = clk.Now().Sub(start)
		outs[i] = out
	})
	if err != nil {
		return nil, err
	}
	r := summarize(outs, cappedRoutes(ps, o.Trace), binsFor(o.Trace))
	r.Stalls, r.StallWhy = d.stalls.Load(), d.why
	r.FailedCalls = failed
	emuCounts(r, emu)
	return r, nil
}

// paceSamples keep, per bin, the last pace forecast a question saw.
type paceSamples struct {
	capped map[string]bool // the routes sampled: cappedRoutes
	mu     sync.Mutex      // guards the fields below
	line   []float64
	got    []bool
	seen   bool
}

func newPaceSamples(b bins, capped map[string]bool) *paceSamples {
	return &paceSamples{capped: capped, line: make([]float64, b.n), got: make([]bool, b.n)}
}

// sample notes snap in bin i: the pace line of the day-capped routes of
// CappedBin, the line of each route the forecast paces and what each
// other one spent (its spend is not held), in requests (a token cap
// counts as its tokens over a request's mean tokens).
func (p *paceSamples) sample(i int, snap *pace.Snapshot) {
	if snap == nil {
		return
	}
	var line float64
	for _, rp := range snap.Routes {
		if !rp.DayCapped || !p.capped[rp.Route] {
			continue
		}
		if rp.Binding {
			line += rp.Line
		} else {
			line += rp.Used
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line[i], p.got[i], p.seen = line, true, true
}

// result returns the samples, a bin with none carrying the one before;
// nil when no forecast was made.
func (p *paceSamples) result() []float64 {
	if !p.seen {
		return nil
	}
	for i := 1; i < len(p.line); i++ {
		if !p.got[i] {
			p.line[i] = p.line[i-1]
		}
	}
	return p.line
}

// bins are the bins of time a result counts answers in (Report.Bin).
type bins struct {
	from, width time.Duration
	n           int
}

// binsFor returns the bins for a trace: hours of whole days from the
// start, or, for a trace shorter than two hours, its minutes.
func binsFor(tr []Arrival) bins {
	if len(tr) == 0 {
		return bins{width: time.Hour, n: 24}
	}
	first, last := tr[0].At, tr[len(tr)-1].At
	if last-first < 2*time.Hour {
		from := first.Truncate(time.Minute)
		return bins{from: from, width: time.Minute, n: int((last-from)/time.Minute) + 2}
	}
	return bins{width: time.Hour, n: 24 * (int(last/(24*time.Hour)) + 1)}
}

// index is the bin of an arrival at offset at.
func (b bins) index(at time.Duration) int {
	return min(max(int((at-b.from)/b.width), 0), b.n-1)
}

// result is an empty result with its bins.
func (b bins) result() *Result {
	return &Result{ByModelBin: make([]int, b.n), FallbackBin: make([]int, b.n), CappedBin: make([]int, b.n), ByRoute: map[string]int{}}
}

// summarize counts the outcomes.
func summarize(outs []outcome, capped map[string]bool, bins bins) *Result {
	r := bins.result()
	var took []time.Duration
	for _, o := range outs {
		if !o.arrival {
			continue
		}
		h := bins.index(o.at)
		if o.byModel {
			r.ByModel++
			r.ByModelBin[h]++
			r.ByRoute[o.route]++
			if capped[o.route] {
				r.CappedBin[h]++
			}
		} else {
			r.ByFallback++
			r.FallbackBin[h]++
		}
		took = append(took, o.took)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	pct := func(p float64) time.Duration {
		if len(took) == 0 {
			return 0
		}
		return took[min(int(p*float64(len(took))), len(took)-1)]
	}
	r.P50, r.P95, r.P99 = pct(0.50), pct(0.95), pct(0.99)
	return r
}

// words are the filler of the emulated site content: three letters and a
// space each, so that the emulator's count (four bytes a token) and the
// gateway's estimate agree within a few percent.
var words = []string{"the", "map", "api", "run", "job", "web", "art", "new", "use", "how", "and", "for", "log", "dev", "app", "kit"}

// question is a question of a.Prompt tokens as the emulator counts them
// (tokens, the same text): for the site, its content as the system
// message, then a short question, with a 400-token cap on the answer; a
// question that wants an answer of another length (a.Answer) says so at
// its end (answerFor) and caps its answer 100 tokens above it.
func question(a Arrival) *llm.Request {
	q := "What did you build for the map app and how can I get in touch with you now?"
	maxTokens := 400
	if a.Answer > 0 {
		q += fmt.Sprintf("%s%d tokens]", answerMark, a.Answer)
		maxTokens = max(maxTokens, a.Answer+100)
	}
	n := a.Prompt
	var b strings.Builder
	b.Grow(4 * n)
	for i := 0; b.Len()+4 <= 4*n-len(q); i++ {
		b.WriteString(words[(i*7+i/16)%len(words)])
		b.WriteByte(' ')
	}
	return &llm.Request{MaxTokens: maxTokens, Messages: []llm.Message{
		{Role: "system", Content: b.String()},
		{Role: "user", Content: q},
	}}
}

// tokens is what the emulator charges for answering a: its prompt (every
// message's text, four bytes a token) and its answer. An adapter may add
// text to a prompt (Gemma's system message folded into the user's), never
// take any away, so this is never more than the charge.
func tokens(a Arrival) int {
	ans := len(answerText)
	if a.Answer > 0 {
		ans = 4 * a.Answer
	}
	return promptTokens(a) + (ans+3)/4
}

// promptTokens is a's prompt as the emulator counts it, tokens' first part.
func promptTokens(a Arrival) int {
	n := 0
	for _, m := range question(a).Messages {
		n += len(m.Content)
	}
	return (n + 3) / 4
}

// chargeOn is what the emulator charges for answering a on a route of
// flavor: tokens, but on Gemini, whose limits count input tokens alone,
// the prompt.
func chargeOn(flavor string, a Arrival) int {
	if flavor == emulator.FlavorGemini {
		return promptTokens(a)
	}
	return tokens(a)
}
