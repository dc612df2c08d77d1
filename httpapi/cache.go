package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/tollfree/tollfree/cache"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/openai"
	"github.com/tollfree/tollfree/route"
)

// cacheKey says whether the response cache applies to this request, and
// its key. A chain opts in with cache_ttl; a caller opts out per request
// with Cache-Control: no-cache (or no-store).
func (s *Server) cacheKey(r *http.Request, ch *config.Chain, req *llm.Request) (cache.Key, bool) {
	if s.cache == nil || ch.CacheTTL <= 0 {
		return cache.Key{}, false
	}
	if cc := r.Header.Get("Cache-Control"); cc != "" && (strings.Contains(cc, "no-cache") || strings.Contains(cc, "no-store")) {
		return cache.Key{}, false
	}
	return cache.KeyFor(ch.Name, req, ch.ContentVersion), true
}

// chatCached answers a non-streamed request through the cache: a hit costs
// no call and no quota; identical requests in flight at once share one
// upstream call.
func (s *Server) chatCached(w http.ResponseWriter, r *http.Request, id string, ch *config.Chain, req *llm.Request, key cache.Key) {
	e, hit, shared, err := s.cache.Do(r.Context(), key, ch.CacheTTL, func(ctx context.Context) (*cache.Entry, bool, error) {
		res, err := s.router.Chat(ctx, ch.Name, id, req)
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
		s.fail(w, r, ch, req, err)
		return
	}
	outcome := OutcomeCached
	switch {
	case hit:
		w.Header().Set(HeaderCache, "hit")
		s.recordHit(id, ch, e)
	case shared:
		w.Header().Set(HeaderCache, "shared")
		s.recordHit(id, ch, e)
	default:
		w.Header().Set(HeaderCache, "miss")
		outcome = OutcomeAnswered
	}
	s.obs.Request(ch.Name, outcome, 0)
	rt := s.plan.Routes[e.Route]
	s.writeAnswer(w, id, ch, rt, entryResponse(e))
}

// recordHit writes the call-log line of an answer that cost no call.
func (s *Server) recordHit(id string, ch *config.Chain, e *cache.Entry) {
	s.obs.CacheHit(ch.Name)
	a := &route.Attempt{RequestID: id, Chain: ch.Name, Route: e.Route, Start: s.clock.Now(), Status: http.StatusOK, Class: failure.OK, Cached: true}
	if rt := s.plan.Routes[e.Route]; rt != nil {
		a.Provider, a.Model = rt.Provider.Name, rt.Model
	}
	s.router.Record(a)
}

func entryResponse(e *cache.Entry) *llm.Response {
	return &llm.Response{
		Content: e.Content, Reasoning: e.Reasoning, FinishReason: e.FinishReason,
		ToolCalls: e.ToolCalls, Usage: e.Usage, UsageKnown: e.UsageKnown,
	}
}

// serveCachedStream answers a streaming request from a cache hit, as a
// stream: the whole answer in one chunk, its finish, usage when asked, and
// [DONE].
func (s *Server) serveCachedStream(w http.ResponseWriter, id string, ch *config.Chain, req *llm.Request, e *cache.Entry) {
	w.Header().Set(HeaderCache, "hit")
	rt := s.plan.Routes[e.Route]
	if !ch.HideRoute && rt != nil {
		w.Header().Set(HeaderRoute, rt.ID)
	}
	s.recordHit(id, ch, e)
	s.obs.Request(ch.Name, OutcomeCached, 0)
	writeStreamHeaders(w)
	name := s.modelName(ch, rt)
	cid := chatID(id)
	now := s.clock.Now().Unix()
	pass := ch.Reasoning == "pass"
	b := openai.AppendChunk(nil, cid, name, now, llm.Chunk{Role: "assistant", Content: e.Content, Reasoning: e.Reasoning, ToolCalls: e.ToolCalls}, pass)
	finish := e.FinishReason
	if finish == "" {
		finish = "stop"
	}
	b = openai.AppendChunk(b, cid, name, now, llm.Chunk{FinishReason: finish}, false)
	if req.IncludeUsage {
		b = openai.AppendUsageChunk(b, cid, name, now, e.Usage)
	}
	b = append(b, "data: [DONE]\n\n"...)
	w.Write(b)
}

// storeStreamed caches a streamed answer that ended cleanly (never a cut
// one, an error or a fallback). The streaming handler calls it.
func (s *Server) storeStreamed(r *http.Request, ch *config.Chain, req *llm.Request, e *cache.Entry) {
	key, ok := s.cacheKey(r, ch, req)
	if !ok {
		return
	}
	s.cache.Set(context.WithoutCancel(r.Context()), key, e, ch.CacheTTL)
}
