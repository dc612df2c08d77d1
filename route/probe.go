package route

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

// storeWait bounds the store calls of a probe.
const storeWait = 250 * time.Millisecond

// Probe calls one route directly with a tiny request (at most maxTokens
// answer tokens), outside any chain, and settles the outcome like any
// attempt: a failure rests the route, a success lifts an automatic rest
// (never a pause set by hand). It spends one request of the route's quota.
// The route is picked like any (its budget, its context), but a rest does
// not hold it back: lifting one is what a probe is for. A failed probe
// returns its attempt, with the failure's class and reason, and an error.
func (r *Router) Probe(ctx context.Context, routeID string, maxTokens int) (*Attempt, error) {
	rt := r.plan.Routes[routeID]
	if rt == nil {
		return nil, fmt.Errorf("route: probe: unknown route %q", routeID)
	}
	if rt.Disabled {
		return nil, fmt.Errorf("route: probe: %s is disabled: %s", rt.ID, rt.DisabledReason)
	}
	if maxTokens <= 0 {
		maxTokens = 8
	}
	req := &llm.Request{MaxTokens: maxTokens, Messages: []llm.Message{{Role: "user", Content: "Reply with the single word: ok"}}}
	var embed *llm.EmbedRequest
	if rt.Embedding {
		// An embedding model is probed with a vector (issue 33).
		embed = &llm.EmbedRequest{Input: []string{"ok"}}
		req = EmbedText(embed)
	}
	w := r.walkOn(ctx, probeChain(rt), "probe", req, false) // no rests loaded
	w.embed = embed
	win, err := w.round()
	if err != nil {
		return nil, err
	}
	if win == nil {
		f := Attempt{Route: rt.ID, Provider: rt.Provider.Name, Model: rt.Model}
		if len(w.failures) > 0 {
			last := w.failures[len(w.failures)-1]
			f.Error, f.Class = last.Reason, last.Class
		}
		return &f, fmt.Errorf("route: probe of %s failed: %s", rt.ID, f.Error)
	}
	u, known, h := llm.Usage{}, false, http.Header(nil)
	switch {
	case win.resp != nil:
		u, known, h = win.resp.Usage, win.resp.UsageKnown, win.resp.Header
	case win.emb != nil:
		u, known, h = win.emb.Usage, win.emb.UsageKnown, win.emb.Header
	}
	r.finishOK(w, win, u, known, h, win.start)
	win.cancel(context.Canceled)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeWait)
	defer cancel()
	_ = r.rests.Lift(sctx, rt)
	return &Attempt{Route: rt.ID, Provider: rt.Provider.Name, Model: rt.Model, Latency: win.latency, Status: http.StatusOK, Class: failure.OK,
		TokensIn: u.PromptTokens, TokensOut: u.CompletionTokens}, nil
}

// probeChain is the one-route chain a probe walks, interactive and without
// hedging: 20 seconds for the attempt and the whole, or the route's own
// timeout when longer.
func probeChain(rt *config.Route) *config.Chain {
	ch := &config.Chain{Name: "probe", Routes: []*config.Route{rt}, AttemptTimeout: 20 * time.Second, Deadline: 20 * time.Second, Interactive: true, MaxInFlight: 1}
	if rt.Timeout > ch.AttemptTimeout {
		ch.AttemptTimeout, ch.Deadline = rt.Timeout, rt.Timeout
	}
	return ch
}
