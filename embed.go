package tollfree

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/tollfree/tollfree/cache"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/route"
)

// Embeddings (issue 33) go through the same flow as chat: the caller check
// (the key's chains, the caller limits, counted as one request with the
// inputs' tokens, the gateway's cap), the chain's cache (identical
// requests in flight share one call), and the chain's routes with their
// budgets, rests and polite retries. An embeddings chain has no fallback:
// no text can stand in for a vector.

type (
	// EmbedRequest is one request for embeddings.
	EmbedRequest = llm.EmbedRequest
	// EmbedCall is an embeddings request with who asks.
	EmbedCall = llm.EmbedCall
	// EmbedAnswer is the vectors and what gave them.
	EmbedAnswer = llm.EmbedAnswer
	// CapabilityError says that no route of the chain can take what a
	// request carries (tools, images, audio, or a part or field its
	// dialect cannot carry): a 400 over HTTP.
	CapabilityError = route.CapabilityError
)

// ErrNotEmbeddings is wrapped by the error of an embeddings request to a
// chat chain, and ErrEmbeddingsChain by that of a chat request to an
// embeddings chain.
var (
	ErrNotEmbeddings   = errors.New("the chain serves chat, not embeddings")
	ErrEmbeddingsChain = errors.New("the chain serves embeddings, not chat")
)

// Embed answers an embeddings call on the chain ch (Chain, or the
// plan's) through the whole flow. The vectors come from one route, which
// the answer names.
func (g *Gateway) Embed(ctx context.Context, ch *config.Chain, c EmbedCall) (*EmbedAnswer, error) {
	switch {
	case ch == nil:
		return nil, fmt.Errorf("tollfree: no chain given (Gateway.Chain finds one by name): %w", ErrUnknownChain)
	case !ch.Embeddings:
		return nil, fmt.Errorf("tollfree: chain %q: %w", ch.Name, ErrNotEmbeddings)
	case c.Request == nil || len(c.Request.Input) == 0:
		return nil, errors.New("tollfree: the embeddings call has no input")
	}
	id := c.ID
	if id == "" {
		id = g.ids.Next()
	}
	text := route.EmbedText(c.Request)
	t, err := g.check.Enter(ctx, ch, c.Caller, text)
	if err != nil {
		_, _, err = g.refusedEmbed(ctx, ch, err)
		return nil, err
	}
	a, err := g.embed(t.Routing(ctx), ch, &c, id, text)
	if rerr := g.check.Admitted(ctx, t.Pass()); rerr != nil {
		t.End(0, false)
		g.obs.Request(ch.Name, outcomeRejected, 0)
		return nil, rerr
	}
	if err != nil {
		t.End(0, false)
		return nil, err
	}
	t.End(spent(a.ServedBy, a.Usage, a.UsageKnown))
	return a, nil
}

func (g *Gateway) refusedEmbed(ctx context.Context, ch *config.Chain, err error) (ServedBy, string, error) {
	if ctx.Err() != nil {
		g.obs.Request(ch.Name, outcomeCancelled, 0)
	} else {
		g.obs.Request(ch.Name, outcomeRejected, 0)
	}
	return 0, "", err
}

// embed is Embed past the caller check: the cache, then the routes.
func (g *Gateway) embed(ctx context.Context, ch *config.Chain, c *EmbedCall, id string, text *llm.Request) (*EmbedAnswer, error) {
	call := func(ctx context.Context) (*EmbedAnswer, error) {
		start := g.clock.Now()
		res, err := g.router.Embed(ctx, ch, id, c.Request)
		if err != nil {
			g.embedFailed(ctx, ch, err)
			return nil, err
		}
		g.obs.Request(ch.Name, outcomeAnswered, g.clock.Now().Sub(start))
		a := &EmbedAnswer{Embeddings: *res.Embeddings, ServedBy: ServedByRoute, Route: res.Route.ID, RequestID: id}
		if !a.UsageKnown {
			// Gemini reports none for embeddings: the caller gets the
			// estimate the budgets counted (UsageKnown stays false).
			n := quota.Estimate(text)
			a.Usage = llm.Usage{PromptTokens: n, TotalTokens: n}
		}
		return a, nil
	}
	if g.cache == nil || ch.CacheTTL <= 0 || c.NoCache {
		return call(ctx)
	}
	// A hit or a shared call calls no route: the caller's limits first.
	if err := g.check.Admitted(ctx, quota.PassFrom(ctx)); err != nil {
		return nil, err
	}
	keyReq := *text
	keyReq.MaxTokens = c.Request.Dimensions // what else changes the vectors
	key := cache.KeyFor(ch.Name, &keyReq, "embeddings")
	var made *EmbedAnswer
	e, hit, shared, err := g.cache.Do(ctx, key, ch.CacheTTL, func(ctx context.Context) (*cache.Entry, bool, error) {
		a, err := call(ctx)
		if err != nil {
			return nil, false, err
		}
		made = a
		return &cache.Entry{Route: a.Route, Content: encodeVectors(a.Vectors), FinishReason: vectorsFinish,
			Usage: a.Usage, UsageKnown: a.UsageKnown}, true, nil
	})
	switch {
	case err != nil:
		return nil, err
	case made != nil && !hit && !shared:
		made.CacheMiss = true
		return made, nil
	}
	vs, ok := decodeVectors(e)
	if !ok {
		return nil, fmt.Errorf("tollfree: a cached embeddings entry does not decode")
	}
	a := &EmbedAnswer{Embeddings: llm.Embeddings{Vectors: vs, Usage: e.Usage, UsageKnown: e.UsageKnown}, Route: g.routeID(e.Route), RequestID: id}
	a.ServedBy = ServedBySharedCall
	if hit {
		a.ServedBy = ServedByCache
		g.recordHit(id, ch, e)
		g.obs.Request(ch.Name, outcomeCached, 0)
	}
	return a, nil
}

// embedFailed tells the observer how an embeddings request no route
// answered ended; there is no fallback to give.
func (g *Gateway) embedFailed(ctx context.Context, ch *config.Chain, err error) {
	var ce *route.CallerError
	var cap *route.CapabilityError
	var tl *route.TooLargeError
	switch {
	case ctx.Err() != nil, errors.Is(err, context.Canceled):
		g.obs.Request(ch.Name, outcomeCancelled, 0)
	case errors.As(err, &ce), errors.As(err, &cap), errors.As(err, &tl):
		g.obs.Request(ch.Name, outcomeRejected, 0)
	default:
		var ex *route.ExhaustedError
		if !errors.As(err, &ex) {
			g.logger.Error("embeddings failed", "chain", ch.Name, "err", err)
		}
		g.obs.FallbackServed(ch.Name, "error")
		g.obs.Request(ch.Name, outcomeFailed, 0)
	}
}

// vectorsFinish marks a cache entry that holds vectors, not an answer.
const vectorsFinish = "embeddings"

// encodeVectors writes vectors for the cache: each as base64 of
// little-endian float32s, one a line.
func encodeVectors(vs [][]float32) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteByte('\n')
		}
		raw := make([]byte, 4*len(v))
		for j, x := range v {
			binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(x))
		}
		b.WriteString(base64.StdEncoding.EncodeToString(raw))
	}
	return b.String()
}

func decodeVectors(e *cache.Entry) ([][]float32, bool) {
	if e.FinishReason != vectorsFinish {
		return nil, false
	}
	lines := strings.Split(e.Content, "\n")
	out := make([][]float32, len(lines))
	for i, l := range lines {
		raw, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(raw)%4 != 0 || len(raw) == 0 {
			return nil, false
		}
		v := make([]float32, len(raw)/4)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		}
		out[i] = v
	}
	return out, true
}
