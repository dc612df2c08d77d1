package tollfree

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tollfree/tollfree/assistant"
	"github.com/tollfree/tollfree/cache"
	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/typed"
)

// This file is the request's flow (docs/DESIGN.md, "How one request flows"), the
// same for a Go program and for the HTTP API, which only decodes, calls
// Serve or ServeStream, and encodes (issue 11: the library used to skip the
// caller check, the cache and the fallback, and got an ExhaustedError where
// an HTTP caller got the chain's fallback):
//
//  1. the caller check (caller.Check: the key's chains, the caller limits,
//     the gateway's cap; past the site's cap, a search answer or a
//     refusal), whose turn ends once the answer is over,
//  2. the cache (a hit, or one call shared by identical requests),
//  3. the routes (route.Router: failover, hedging, rests, budgets),
//  4. the chain's fallback when no route could answer: a search answer or
//     the fixed message, else the error.
//
// Each request is counted once by the observer (metrics, live statistics)
// and each cache hit gets its call-log record, whoever asked.

// Searcher answers a question from the content when no route can (seed 000:
// "a plain keyword search over the same content answers instead").
// *search.Index and *content.Library implement it.
type Searcher interface {
	Answer(query string) (text string, ok bool)
}

// Chat answers req on the named chain through the whole flow: the caller
// limits (req.User is the caller, a visitor with the callers: limits: the
// program decides who asks; Serve takes a key's caller), the cache, the
// routes and the chain's fallback, exactly as the HTTP API does. The
// Answer says which of them answered. A request nothing answered gets an
// error: an *ExhaustedError (the chain's fallback is an error), a
// *CallerError or *TooLargeError (the request's own fault), a
// *CallerLimitError, one wrapping ErrBusy (the gateway at its cap), or the
// context's error.
func (g *Gateway) Chat(ctx context.Context, chain string, req *Request) (*Answer, error) {
	ch, err := g.chain(chain)
	if err != nil {
		return nil, err
	}
	return g.Serve(ctx, ch, Call{Request: req, Caller: Caller{ID: userOf(req)}})
}

// Stream answers req on the named chain as a stream, through the same flow
// as Chat: a route's stream, a cached answer replayed, or the chain's
// fallback. Close the stream when done with it.
func (g *Gateway) Stream(ctx context.Context, chain string, req *Request) (*AnswerStream, error) {
	ch, err := g.chain(chain)
	if err != nil {
		return nil, err
	}
	return g.ServeStream(ctx, ch, Call{Request: req, Caller: Caller{ID: userOf(req)}})
}

// Chain returns the plan's chain of that name: what Serve and ServeStream
// take. The error wraps ErrUnknownChain.
func (g *Gateway) Chain(name string) (*config.Chain, error) { return g.chain(name) }

func (g *Gateway) chain(name string) (*config.Chain, error) {
	if ch := g.plan.Model(name); ch != nil {
		return ch, nil // a chain, or an enabled route as a chain of one
	}
	return nil, fmt.Errorf("tollfree: %w %q; this gateway's chains are: %s", ErrUnknownChain, name, strings.Join(g.plan.ChainOrder, ", "))
}

func userOf(req *Request) string {
	if req == nil {
		return ""
	}
	return req.User
}

// opening is what Serve and ServeStream do first: check the call and name
// it, and, on an assistant chain, turn it into the assistant's request
// (ask.go). A rule's answer, or the refusal of a question that cannot be
// asked, ends the call there: ruled or err.
func (g *Gateway) opening(ch *config.Chain, c *Call) (id string, sa *siteAssistant, ruled *Answer, err error) {
	if id, err = g.begin(ch, c); err != nil {
		return "", nil, nil, err
	}
	if sa = g.assistants[ch.Name]; sa == nil {
		return id, nil, nil, nil
	}
	text, isRule, err := g.prepare(sa, c)
	if err != nil || isRule {
		ruled, err = g.ruleAnswer(ch, text, id, err)
	}
	return id, sa, ruled, err
}

// Serve answers a call on the chain ch (Chain, or the plan's) through the
// whole flow, as Chat does, with who asks and how given in full. The HTTP
// API calls it for every non-streamed request.
func (g *Gateway) Serve(ctx context.Context, ch *config.Chain, c Call) (*Answer, error) {
	id, sa, ruled, err := g.opening(ch, &c)
	if err != nil || ruled != nil {
		return ruled, err
	}
	a, err := g.serve(ctx, ch, &c, id)
	if err == nil && sa != nil {
		sa.finish(a, &c)
	}
	return a, err
}

// serve is Serve past the assistant's rules (ask.go).
func (g *Gateway) serve(ctx context.Context, ch *config.Chain, c *Call, id string) (*Answer, error) {
	t, err := g.check.Enter(ctx, ch, c.Caller, c.Request)
	if err != nil {
		by, text, err := g.refused(ctx, ch, c, err)
		if err != nil {
			return nil, err
		}
		return fallbackAnswer(by, text, id), nil
	}
	a, err := g.answer(t.Routing(ctx), ch, c, id)
	if rerr := g.check.Admitted(ctx, t.Pass()); rerr != nil {
		return g.refusedLate(ctx, ch, c, id, t, rerr)
	}
	if err != nil {
		t.End(0, false) // the estimate stands: attempts may have spent it
		return nil, err
	}
	t.End(spent(a.ServedBy, a.Usage, a.UsageKnown))
	return a, nil
}

// refusedLate answers a request whose caller limits refused it after the
// gate let it in: a pass Admit left pending, refused with the first
// route's budget (no route was called) or by admitted. It ends the turn,
// which gives nothing back (nothing was counted), and answers as refused.
func (g *Gateway) refusedLate(ctx context.Context, ch *config.Chain, c *Call, id string, t *caller.Turn, err error) (*Answer, error) {
	t.End(0, false)
	by, text, err := g.refused(ctx, ch, c, err)
	if err != nil {
		return nil, err
	}
	return fallbackAnswer(by, text, id), nil
}

// answer is Serve past the caller check: the cache, the routes, the
// chain's fallback.
func (g *Gateway) answer(ctx context.Context, ch *config.Chain, c *Call, id string) (*Answer, error) {
	if key, ok := g.cacheKey(ch, c); ok {
		return g.serveCached(ctx, ch, c, id, key)
	}
	start := g.clock.Now()
	res, err := g.router.Chat(ctx, ch, id, c.Request)
	if err != nil {
		if rerr := g.check.Admitted(ctx, quota.PassFrom(ctx)); rerr != nil {
			return nil, rerr // the caller's limits: no fallback
		}
		by, text, err := g.unanswered(ctx, ch, c, err)
		if err != nil {
			return nil, err
		}
		return fallbackAnswer(by, text, id), nil
	}
	g.obs.Request(ch.Name, outcomeAnswered, g.clock.Now().Sub(start))
	return &Answer{Response: *res.Response, ServedBy: ServedByRoute, Route: res.Route.ID, RequestID: id}, nil
}

// ServeStream answers a call on the chain ch as a stream, through the same
// flow as Serve. The HTTP API calls it for every streamed request. The
// caller's turn (its requests in flight, the gateway's cap) ends when the
// stream does, or when it is closed: close it.
func (g *Gateway) ServeStream(ctx context.Context, ch *config.Chain, c Call) (*AnswerStream, error) {
	id, sa, ruled, err := g.opening(ch, &c)
	if err != nil {
		return nil, err
	}
	if ruled != nil {
		return fallbackStream(ruled.ServedBy, ruled.Content, id, false), nil
	}
	s, err := g.serveStream(ctx, ch, &c, id)
	if err == nil && sa != nil {
		sa.finishStream(s, &c)
	}
	return s, err
}

// serveStream is ServeStream past the assistant's rules (ask.go).
func (g *Gateway) serveStream(ctx context.Context, ch *config.Chain, c *Call, id string) (*AnswerStream, error) {
	t, err := g.check.Enter(ctx, ch, c.Caller, c.Request)
	if err != nil {
		by, text, err := g.refused(ctx, ch, c, err)
		if err != nil {
			return nil, err
		}
		return fallbackStream(by, text, id, false), nil
	}
	start := g.clock.Now()
	as, err := g.answerStream(t.Routing(ctx), ch, c, id)
	if rerr := g.check.Admitted(ctx, t.Pass()); rerr != nil {
		if as != nil {
			_ = as.Close() // nothing was called: a fallback's or the cache's
		}
		a, err := g.refusedLate(ctx, ch, c, id, t, rerr)
		if err != nil {
			return nil, err
		}
		return fallbackStream(a.ServedBy, a.Content, id, false), nil
	}
	if err != nil {
		t.End(0, false)
		return nil, err
	}
	es := &endingStream{ChunkStream: as.ChunkStream, turn: t, by: as.ServedBy}
	if as.ServedBy == ServedByRoute {
		// The cache and the fallback told the observer already.
		es.obs, es.chain, es.start, es.clock = g.obs, ch.Name, start, g.clock
	}
	as.ChunkStream = es
	return as, nil
}

// answerStream is ServeStream past the caller check. A typed request is
// answered whole and replayed (typed.go).
func (g *Gateway) answerStream(ctx context.Context, ch *config.Chain, c *Call, id string) (*AnswerStream, error) {
	if typedStream(c.Request) {
		return g.answerTypedStream(ctx, ch, c, id)
	}
	key, cacheable := g.cacheKey(ch, c)
	if cacheable {
		// A cached or shared answer calls no route: the caller's limits
		// are checked first, alone.
		if err := g.check.Admitted(ctx, quota.PassFrom(ctx)); err != nil {
			return nil, err
		}
		if e, hit := g.cache.Get(ctx, key); hit {
			g.recordHit(id, ch, e)
			g.obs.Request(ch.Name, outcomeCached, 0)
			return &AnswerStream{ChunkStream: replayEntry(e), ServedBy: ServedByCache, Route: g.routeID(e.Route), RequestID: id}, nil
		}
	}
	rs, err := g.router.Stream(ctx, ch, id, c.Request)
	if err != nil {
		if rerr := g.check.Admitted(ctx, quota.PassFrom(ctx)); rerr != nil {
			return nil, rerr // the caller's limits: no fallback
		}
		by, text, err := g.unanswered(ctx, ch, c, err)
		if err != nil {
			return nil, err
		}
		return fallbackStream(by, text, id, cacheable), nil
	}
	s := &AnswerStream{ChunkStream: rs, ServedBy: ServedByRoute, Route: rs.Route.ID, RequestID: id, CacheMiss: cacheable, WrittenBy: rs.WrittenBy}
	if cacheable {
		s.ChunkStream = &storingStream{RoutedStream: rs, cache: g.cache, key: key, ttl: ch.CacheTTL, ctx: context.WithoutCancel(ctx)}
	}
	return s, nil
}

// begin checks a call and returns its request id.
func (g *Gateway) begin(ch *config.Chain, c *Call) (string, error) {
	switch {
	case ch == nil:
		return "", fmt.Errorf("tollfree: no chain given (Gateway.Chain finds one by name): %w", ErrUnknownChain)
	case c.Request == nil:
		return "", errors.New("tollfree: the call has no request")
	case len(c.Request.Messages) == 0:
		return "", fmt.Errorf("tollfree: %w", llm.ErrNoMessages)
	case ch.Embeddings:
		return "", fmt.Errorf("tollfree: chain %q: %w (Gateway.Embed)", ch.Name, ErrEmbeddingsChain)
	}
	if c.ID != "" {
		return c.ID, nil
	}
	return g.ids.Next(), nil
}

// refused decides what a request the caller check stopped gets: past the
// site's cap, a chain with a search fallback answers by search alone (seed
// 000); any other refusal is returned as the error. It tells the observer.
func (g *Gateway) refused(ctx context.Context, ch *config.Chain, c *Call, err error) (ServedBy, string, error) {
	var le *quota.LimitError
	if errors.As(err, &le) && le.Scope == quota.ScopeSite {
		if text, ok := g.searchAnswer(ch, c); ok {
			g.obs.FallbackServed(ch.Name, "search")
			g.obs.Request(ch.Name, outcomeFallback, 0)
			return ServedByFallbackSearch, text, nil
		}
	}
	if ctx.Err() != nil {
		g.obs.Request(ch.Name, outcomeCancelled, 0) // gone while it waited for a turn
		return 0, "", err
	}
	g.obs.Request(ch.Name, outcomeRejected, 0)
	return 0, "", err
}

// unanswered decides what a request no route answered gets: the chain's
// fallback (a search answer, else its message) when every route was down,
// else the error. It tells the observer how the request ended.
func (g *Gateway) unanswered(ctx context.Context, ch *config.Chain, c *Call, err error) (ServedBy, string, error) {
	if ctx.Err() != nil {
		g.obs.Request(ch.Name, outcomeCancelled, 0) // nobody is listening
		return 0, "", err
	}
	var ce *route.CallerError
	var tl *route.TooLargeError
	var ex *route.ExhaustedError
	var te *typed.RequestError
	var ia *route.InvalidAnswerError
	switch {
	case errors.As(err, &ce), errors.As(err, &tl), errors.As(err, &te):
		g.obs.Request(ch.Name, outcomeRejected, 0)
	case errors.As(err, &ia):
		// Routes answered, but not as asked: no fallback text is what the
		// request asked either (issue 15).
		g.obs.Request(ch.Name, outcomeFailed, 0)
	case errors.As(err, &ex):
		if nre := config.NoRouteEnabled(ch); nre != nil {
			g.obs.FallbackServed(ch.Name, "error")
			g.obs.Request(ch.Name, outcomeFailed, 0)
			return 0, "", fmt.Errorf("tollfree: %w", nre)
		}
		if by, text, ok := g.fallback(ch, c); ok {
			g.obs.FallbackServed(ch.Name, by.Fallback())
			g.obs.Request(ch.Name, outcomeFallback, 0)
			return by, text, nil
		}
		g.obs.FallbackServed(ch.Name, "error")
		g.obs.Request(ch.Name, outcomeFailed, 0)
	case errors.Is(err, context.Canceled):
		g.obs.Request(ch.Name, outcomeCancelled, 0)
	default:
		g.logger.Error("chat failed", "chain", ch.Name, "err", err)
		g.obs.Request(ch.Name, outcomeFailed, 0)
	}
	return 0, "", err
}

// fallback is the chain's own answer when every route is down: a search
// over its content when that finds something, else its fixed message
// (unless the chain's fallback is an error).
func (g *Gateway) fallback(ch *config.Chain, c *Call) (ServedBy, string, bool) {
	if text, ok := g.searchAnswer(ch, c); ok {
		return ServedByFallbackSearch, text, true
	}
	if ch.Fallback.Kind != config.FallbackError && ch.Fallback.Message != "" {
		return ServedByFallbackMessage, ch.Fallback.Message, true
	}
	return 0, "", false
}

// searchAnswer asks the chain's content index, when its fallback is a
// search, about the last user message.
func (g *Gateway) searchAnswer(ch *config.Chain, c *Call) (string, bool) {
	if sa := g.assistants[ch.Name]; sa != nil {
		return sa.search(c), true // an assistant's fallback is its content
	}
	if ch.Fallback.Kind != config.FallbackSearch {
		return "", false
	}
	lib := g.content[ch.Name]
	if lib == nil {
		return "", false
	}
	ix := lib.Current()
	if ix == nil {
		return "", false
	}
	// The site assistant's builder, with its default sentences: the one
	// search answer, in the caller's language (Accept-Language, else the
	// question's words, else English).
	q := lastUser(c.Request)
	text, _, found := g.resting.Search(ix, q, g.resting.Language(c.Language, q))
	return text, found
}

// lastUser returns the text of the last user message: the question a
// search fallback answers.
func lastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

func fallbackAnswer(by ServedBy, text, id string) *Answer {
	return &Answer{Response: Response{Content: text, FinishReason: "stop"}, ServedBy: by, RequestID: id}
}

// cacheKey says whether the response cache applies to this call, and its
// key. A chain opts in with cache_ttl; a call opts out with NoCache.
func (g *Gateway) cacheKey(ch *config.Chain, c *Call) (cache.Key, bool) {
	if g.cache == nil || ch.CacheTTL <= 0 || c.NoCache {
		return cache.Key{}, false
	}
	if sa := g.assistants[ch.Name]; sa != nil {
		// The question and history kept, normalized, and the content's
		// version: an edit retires every answer (seed 000).
		return cache.KeyFor(ch.Name, assistant.KeyRequest(c.Request), g.contentVersion(ch)), true
	}
	return cache.KeyFor(ch.Name, c.Request, g.contentVersion(ch)), true
}

// serveCached answers a non-streamed request through the cache: a hit costs
// no call and no quota; identical requests in flight at once share one
// upstream call.
func (g *Gateway) serveCached(ctx context.Context, ch *config.Chain, c *Call, id string, key cache.Key) (*Answer, error) {
	// A hit or a shared call calls no route, and the call made for several
	// is not one caller's: the caller's limits are checked first, alone.
	if err := g.check.Admitted(ctx, quota.PassFrom(ctx)); err != nil {
		return nil, err
	}
	start := g.clock.Now()
	e, hit, shared, err := g.cache.Do(ctx, key, ch.CacheTTL, func(ctx context.Context) (*cache.Entry, bool, error) {
		res, err := g.router.Chat(ctx, ch, id, c.Request)
		if err != nil {
			return nil, false, err
		}
		resp := res.Response
		return &cache.Entry{
			Route: res.Route.ID, Content: resp.Content, Reasoning: resp.Reasoning, FinishReason: resp.FinishReason,
			ToolCalls: resp.ToolCalls, Usage: resp.Usage, UsageKnown: resp.UsageKnown,
		}, true, nil
	})
	if err != nil {
		by, text, err := g.unanswered(ctx, ch, c, err)
		if err != nil {
			return nil, err
		}
		a := fallbackAnswer(by, text, id)
		a.CacheMiss = true
		return a, nil
	}
	a := &Answer{Response: entryResponse(e), Route: g.routeID(e.Route), RequestID: id}
	switch {
	case hit:
		a.ServedBy = ServedByCache
	case shared:
		a.ServedBy = ServedBySharedCall
	default:
		a.ServedBy, a.CacheMiss = ServedByRoute, true
		g.obs.Request(ch.Name, outcomeAnswered, g.clock.Now().Sub(start))
		return a, nil
	}
	g.recordHit(id, ch, e)
	g.obs.Request(ch.Name, outcomeCached, 0)
	return a, nil
}

// recordHit counts an answer that cost no call, and writes its call-log
// record.
func (g *Gateway) recordHit(id string, ch *config.Chain, e *cache.Entry) {
	g.obs.CacheHit(ch.Name)
	a := &route.Attempt{RequestID: id, Chain: ch.Name, Route: e.Route, Start: g.clock.Now(), Status: http.StatusOK, Class: failure.OK, Cached: true}
	if rt := g.plan.Routes[e.Route]; rt != nil {
		a.Provider, a.Model = rt.Provider.Name, rt.Model
	}
	g.router.Record(a)
}

// routeID is a cached entry's route, "" when the plan has no such route
// any more.
func (g *Gateway) routeID(id string) string {
	if g.plan.Routes[id] == nil {
		return ""
	}
	return id
}

func entryResponse(e *cache.Entry) Response {
	return Response{
		Content: e.Content, Reasoning: e.Reasoning, FinishReason: e.FinishReason,
		ToolCalls: e.ToolCalls, Usage: e.Usage, UsageKnown: e.UsageKnown,
	}
}
