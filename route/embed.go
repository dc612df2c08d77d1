package route

import (
	"context"
	"fmt"
	"net/http"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/quota"
)

// Embeddings (issue 33) walk a chain of embedding routes as chat walks its
// routes: rests, budgets (the inputs' estimated tokens), the polite retry
// of a blip, failover, the call log. The walk's request is the inputs as
// user messages, for the estimate; each input must fit the route's context
// on its own (an embedding model's context is per input). Every request's
// vectors come from one route.

// Embedder is an Upstream that serves embeddings; both adapters are.
type Embedder interface {
	Embed(ctx context.Context, call provider.EmbedCall) (*llm.Embeddings, error)
}

// EmbedResult is the answer of an embeddings chain.
type EmbedResult struct {
	Embeddings *llm.Embeddings
	Route      *config.Route
	// Attempts is how many attempts were started.
	Attempts int
}

// Embed answers req on the embeddings chain ch.
func (r *Router) Embed(ctx context.Context, ch *config.Chain, id string, req *llm.EmbedRequest) (*EmbedResult, error) {
	if ch == nil {
		return nil, fmt.Errorf("route: no chain given: %w", ErrUnknownChain)
	}
	if !ch.Embeddings {
		return nil, fmt.Errorf("route: chain %q serves chat, not embeddings", ch.Name)
	}
	w, err := r.newWalk(ctx, ch, id, EmbedText(req), false)
	if err != nil {
		return nil, err
	}
	w.embed = req
	defer w.close()
	win, err := w.run()
	if err != nil {
		return nil, err
	}
	e := win.emb
	r.finishOK(w, win, e.Usage, e.UsageKnown, e.Header, win.start)
	win.cancel(context.Canceled)
	return &EmbedResult{Embeddings: e, Route: win.route, Attempts: w.started}, nil
}

// EmbedText is an embeddings request as a chat request, for the token
// estimate and the caller's limits: one user message per input, and an
// answer of one token (an embedding has no output to reserve).
func EmbedText(req *llm.EmbedRequest) *llm.Request {
	msgs := make([]llm.Message, len(req.Input))
	for i, s := range req.Input {
		msgs[i] = llm.Message{Role: "user", Content: s}
	}
	return &llm.Request{Messages: msgs, MaxTokens: 1}
}

// fitEmbed reports whether each input fits rt's context on its own.
func (w *walk) fitEmbed(rt *config.Route, req *llm.Request) (*llm.Request, string, bool) {
	if rt.MaxContext <= 0 {
		return req, "", true
	}
	for i := range req.Messages {
		one := llm.Request{Messages: req.Messages[i : i+1]}
		if quota.Estimate(&one) > rt.MaxContext {
			return req, "", false
		}
	}
	return req, "", true
}

// embedWith makes one embeddings attempt on up.
func embedWith(ctx context.Context, up Upstream, call provider.EmbedCall) (*llm.Embeddings, error) {
	e, ok := up.(Embedder)
	if !ok {
		return nil, &failure.UpstreamError{Status: http.StatusOK, Model: call.Model,
			Err: fmt.Errorf("%w: the adapter serves no embeddings", failure.ErrCannotCarry)}
	}
	return e.Embed(ctx, call)
}
