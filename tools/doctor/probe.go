package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"syscall"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/route"
)

// probePrompt is the one user message every probe sends. It is fixed text,
// so printing nothing of it is a rule kept for free.
const probePrompt = "Reply with the single word: ok"

// providerJob is the enabled routes of one provider, in plan order.
type providerJob struct {
	provider *config.Provider
	routes   []routeJob
}

// routeJob is one route and the thinking levels to try on it.
type routeJob struct {
	route  *config.Route
	levels []level
}

// requests is the most requests the job sends.
func (j routeJob) requests() int { return 1 + len(j.levels) }

// level is one thinking setting: its name and the Extra fields that ask for
// it.
type level struct {
	name  string
	key   string
	value json.RawMessage
}

// plan lists the enabled routes by provider, providers in plan order.
func plan(o *Options) []providerJob {
	by := map[string]*providerJob{}
	for _, id := range o.Plan.RouteOrder {
		r := o.Plan.Routes[id]
		if r.Disabled || r.Provider.Disabled {
			continue
		}
		j := by[r.Provider.Name]
		if j == nil {
			j = &providerJob{provider: r.Provider}
			by[r.Provider.Name] = j
		}
		rj := routeJob{route: r}
		if !o.NoThinking {
			rj.levels = levelsFor(r)
		}
		j.routes = append(j.routes, rj)
	}
	var out []providerJob
	for _, name := range o.Plan.ProviderOrder {
		if j := by[name]; j != nil {
			out = append(out, *j)
		}
	}
	return out
}

// levelsFor returns the thinking levels worth trying on r (docs/PROVIDERS.md,
// Gemini "Thinking"): Gemini 3.x takes thinkingLevel MINIMAL to HIGH, and
// Pro and some Flash versions refuse MINIMAL; Gemini 2.5 takes a
// thinkingBudget, and only Flash and Flash-Lite accept 0; OpenAI-style
// reasoning models take reasoning_effort low, medium, high (gpt-oss
// accepts only those). Other models get none.
func levelsFor(r *config.Route) []level {
	model := strings.ToLower(strings.TrimPrefix(r.Model, "models/"))
	if r.Provider.Dialect == config.DialectGemini {
		switch {
		case strings.HasPrefix(model, "gemini-3"):
			var ls []level
			for _, l := range []string{"MINIMAL", "LOW", "MEDIUM", "HIGH"} {
				ls = append(ls, level{name: l, key: "thinkingConfig", value: json.RawMessage(`{"thinkingLevel":"` + l + `"}`)})
			}
			return ls
		case strings.HasPrefix(model, "gemini-2.5"):
			return []level{
				{name: "budget 0", key: "thinkingConfig", value: json.RawMessage(`{"thinkingBudget":0}`)},
				{name: "budget 512", key: "thinkingConfig", value: json.RawMessage(`{"thinkingBudget":512}`)},
			}
		}
		return nil
	}
	if !r.Reasoning {
		return nil
	}
	var ls []level
	for _, l := range []string{"low", "medium", "high"} {
		ls = append(ls, level{name: l, key: "reasoning_effort", value: json.RawMessage(`"` + l + `"`)})
	}
	return ls
}

// prober probes the routes of one provider, one request at a time.
type prober struct {
	o        *Options
	up       route.Upstream
	provider *config.Provider
	events   chan<- event
	// book reads the answers' rate-limit headers (Report.LimitsSaid).
	book *quota.Book
	// sent holds the times of the requests sent to the provider, for
	// pacing; only the prober's own goroutine touches it.
	sent []sendTime
}

type sendTime struct {
	at    time.Time
	route string
}

// run probes routes in order. When the provider refuses its key (a
// provider-scope failure: auth), the remaining routes are not called: they
// share the account, and each would spend a request to learn the same.
func (p *prober) run(ctx context.Context, routes []routeJob) {
	refused := ""
	for _, rj := range routes {
		r := rj.route
		res := RouteResult{Route: r.ID, Provider: r.Provider.Name, Model: r.Model}
		switch {
		case ctx.Err() != nil:
			res.Result, res.Detail = ResultSkipped, "the run was cancelled"
		case refused != "":
			res.Result, res.Detail = ResultSkipped, "not called: the provider refused its key on "+refused
		case p.up == nil:
			res.Result, res.Detail = ResultSkipped, "no adapter for provider "+r.Provider.Name
		default:
			v := p.probeRoute(ctx, rj, &res)
			if v.Scope == failure.ScopeProvider && v.Class == failure.Auth {
				refused = r.ID
			}
		}
		p.events <- event{result: &res}
	}
}

// probeRoute sends the main probe and, when it answered, one request per
// thinking level.
func (p *prober) probeRoute(ctx context.Context, rj routeJob, res *RouteResult) failure.Verdict {
	r := rj.route
	resp, lat, v, status, err := p.call(ctx, r, nil)
	if err != nil && ctx.Err() != nil {
		res.Result, res.Detail = ResultSkipped, "the run was cancelled"
		return v
	}
	res.Requests++
	res.Latency, res.Status = lat, status
	addUsage(res, resp)
	if resp != nil && resp.Header != nil && p.book != nil {
		_ = p.book.Observe(ctx, r, resp.Header) // memory: it cannot fail
	}
	if v.Class != failure.OK {
		res.Result, res.Detail = v.Class.String(), v.LogText()
		if errors.Is(err, syscall.ECONNREFUSED) {
			// Nothing listens there: not a provider under load.
			res.Result, res.Detail = ResultUnreachable, unreachableHint(r)
		}
		return v
	}
	res.Result = ResultOK
	for _, l := range rj.levels {
		resp, _, lv, _, err := p.call(ctx, r, &l)
		if err != nil && ctx.Err() != nil {
			break
		}
		res.Requests++
		addUsage(res, resp)
		lr := LevelResult{Level: l.name}
		switch lv.Class {
		case failure.OK, failure.Empty:
			lr.Result = LevelAccepted
		case failure.BadConfig, failure.BadRequest:
			lr.Result, lr.Class, lr.Detail = LevelRefused, lv.Class.String(), lv.LogText()
		default:
			lr.Result, lr.Class, lr.Detail = LevelUnknown, lv.Class.String(), lv.LogText()
		}
		res.Thinking = append(res.Thinking, lr)
	}
	return v
}

func addUsage(res *RouteResult, resp *llm.Response) {
	if resp != nil && resp.UsageKnown {
		res.TokensIn += resp.Usage.PromptTokens
		res.TokensOut += resp.Usage.CompletionTokens
	}
}

// call sends one probe request to r, with l's thinking setting when l is
// not nil, after waiting for the provider's per-minute limits.
func (p *prober) call(ctx context.Context, r *config.Route, l *level) (*llm.Response, time.Duration, failure.Verdict, int, error) {
	if err := p.pace(ctx, r); err != nil {
		return nil, 0, failure.Classify(err, p.o.Clock.Now()), 0, err
	}
	req := &llm.Request{MaxTokens: p.o.MaxTokens, Messages: []llm.Message{{Role: "user", Content: probePrompt}}}
	if r.MaxOutput > 0 && req.MaxTokens > r.MaxOutput {
		req.MaxTokens = r.MaxOutput
	}
	extra := r.Extra
	if l != nil {
		extra = maps.Clone(r.Extra)
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[l.key] = l.value
	}
	timeout := p.o.Timeout
	if timeout <= 0 {
		timeout = r.Timeout
	}
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	cctx, cancel := clock.WithTimeout(ctx, p.o.Clock, timeout)
	defer cancel()
	start := p.o.Clock.Now()
	p.sent = append(p.sent, sendTime{at: start, route: r.ID})
	var resp *llm.Response
	var err error
	if r.Embedding {
		resp, err = p.embed(cctx, r)
	} else {
		resp, err = p.up.Chat(cctx, provider.Call{Model: r.Model, Request: req, Extra: extra})
	}
	lat := p.o.Clock.Now().Sub(start)
	if err != nil && clock.Expired(cctx) && ctx.Err() == nil {
		err = fmt.Errorf("probe timed out after %s: %w", timeout, context.DeadlineExceeded)
	}
	v := failure.Classify(err, p.o.Clock.Now())
	if v.Class == failure.Unsupported {
		// A probe carries nothing a caller chose: a field the model
		// refuses is the route's own setting, or the level being probed.
		v.Class, v.Scope = failure.BadConfig, failure.ScopeRoute
	}
	status := 0
	var ue *failure.UpstreamError
	switch {
	case err == nil:
		status = 200
	case errors.As(err, &ue):
		status = ue.Status
	}
	return resp, lat, v, status, err
}

// pace waits, on the clock, until one more request to r keeps within the
// provider's and the route's requests per minute.
func (p *prober) pace(ctx context.Context, r *config.Route) error {
	now := p.o.Clock.Now()
	cut := now.Add(-time.Minute)
	keep := p.sent[:0]
	for _, s := range p.sent {
		if s.at.After(cut) {
			keep = append(keep, s)
		}
	}
	p.sent = keep
	var until time.Time
	why := ""
	if lim := p.provider.Limits.RPM; lim > 0 && len(p.sent) >= lim {
		until = p.sent[len(p.sent)-lim].at.Add(time.Minute)
		why = fmt.Sprintf("%s allows %d requests a minute", p.provider.Name, lim)
	}
	if lim := r.Limits.RPM; lim > 0 {
		var own []time.Time
		for _, s := range p.sent {
			if s.route == r.ID {
				own = append(own, s.at)
			}
		}
		if len(own) >= lim {
			if t := own[len(own)-lim].Add(time.Minute); t.After(until) {
				until = t
				why = fmt.Sprintf("%s allows %d requests a minute", r.ID, lim)
			}
		}
	}
	wait := until.Sub(now)
	if wait <= 0 {
		return nil
	}
	p.events <- event{note: fmt.Sprintf("waiting %s before the next probe: %s", wait.Round(time.Second), why)}
	return clock.Sleep(ctx, p.o.Clock, wait)
}

// unreachableHint says what to check when nothing listens at a route's
// base URL: for a local Ollama, that it runs.
func unreachableHint(r *config.Route) string {
	if r.Provider.Preset == "ollama" || r.Provider.Name == "ollama" {
		return "connection refused: is it running? `ollama serve`"
	}
	return "connection refused at " + r.Provider.BaseURL + ": is the server running and base_url right?"
}

// embed probes an embedding route (issue 33) with one short input; its
// usage is returned as an answer's.
func (p *prober) embed(ctx context.Context, r *config.Route) (*llm.Response, error) {
	e, ok := p.up.(route.Embedder)
	if !ok {
		return nil, fmt.Errorf("doctor: the adapter of %s serves no embeddings", r.ID)
	}
	em, err := e.Embed(ctx, provider.EmbedCall{Model: r.Model, Request: &llm.EmbedRequest{Input: []string{probePrompt}}, Extra: r.Extra})
	if err != nil {
		return nil, err
	}
	return &llm.Response{Usage: em.Usage, UsageKnown: em.UsageKnown}, nil
}
