package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/openai"
	"github.com/tollfree/tollfree/route"
)

// Response headers that tell a caller what served it.
const (
	HeaderRequestID = "X-Request-Id"
	HeaderRoute     = "X-Tollfree-Route"
	HeaderFallback  = "X-Tollfree-Fallback"
	HeaderCache     = "X-Tollfree-Cache"
)

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		return
	}
	id := s.ids.next()
	w.Header().Set(HeaderRequestID, id)
	if !s.authorized(r) {
		unauthorized(w)
		return
	}
	buf := s.getBuf()
	defer s.putBuf(buf)
	if !s.readBody(w, r, buf) {
		return
	}
	// The plan's limits bound the work one request can cause (issue 10).
	lim := openai.Limits{Messages: s.plan.Server.MaxMessages, ContentBytes: s.plan.Server.MaxContentBytes}
	req, model, err := openai.DecodeRequestWithin(*buf, lim)
	if err != nil {
		var re *openai.RequestError
		if errors.As(err, &re) {
			writeError(w, http.StatusBadRequest, re.Message, "invalid_request_error", re.Param, re.Code)
			return
		}
		writeError(w, http.StatusBadRequest, err.Error(), "invalid_request_error", "", "invalid_request")
		return
	}
	ch := s.plan.Chains[model]
	if ch == nil {
		writeError(w, http.StatusNotFound, "the model "+strconv.Quote(model)+" names no chain of this gateway; use one of: "+strings.Join(s.plan.ChainOrder, ", "), "invalid_request_error", "model", "model_not_found")
		return
	}
	if !s.admit(w, r, ch, req) {
		return
	}
	key, cached := s.cacheKey(r, ch, req)
	if req.Stream {
		if cached {
			if e, hit := s.cache.Get(r.Context(), key); hit {
				s.serveCachedStream(w, id, ch, req, e)
				return
			}
			w.Header().Set(HeaderCache, "miss")
		}
		s.stream(w, r, id, ch, req)
		return
	}
	if cached {
		s.chatCached(w, r, id, ch, req, key)
		return
	}
	start := s.clock.Now()
	res, err := s.router.Chat(r.Context(), ch.Name, id, req)
	if err != nil {
		s.fail(w, r, ch, req, err)
		return
	}
	s.writeAnswer(w, id, ch, res.Route, res.Response)
	s.obs.Request(ch.Name, OutcomeAnswered, s.clock.Now().Sub(start))
}

// writeAnswer writes a whole answer as a chat.completion.
func (s *Server) writeAnswer(w http.ResponseWriter, id string, ch *config.Chain, rt *config.Route, resp *llm.Response) {
	content, reasoning := splitThink(resp.Content)
	if reasoning != "" && resp.Reasoning == "" {
		resp.Reasoning = reasoning
	}
	resp.Content = content
	name := s.modelName(ch, rt)
	if !ch.HideRoute && rt != nil {
		w.Header().Set(HeaderRoute, rt.ID)
	}
	out := s.getBuf()
	defer s.putBuf(out)
	*out = openai.AppendResponse(*out, chatID(id), name, s.clock.Now().Unix(), resp, ch.Reasoning == "pass")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(*out)))
	w.Write(*out)
}

// modelName is what the response's model field says: the route that
// answered, or the chain's name when the chain hides its routes.
func (s *Server) modelName(ch *config.Chain, rt *config.Route) string {
	if ch.HideRoute || rt == nil {
		return ch.Name
	}
	return rt.ID
}

func chatID(reqID string) string { return "chatcmpl-" + strings.TrimPrefix(reqID, "req_") }

// splitThink removes a <think>…</think> block from a whole answer.
func splitThink(s string) (content, reasoning string) {
	if !strings.Contains(s, "<think>") {
		return s, ""
	}
	f := &openai.ThinkFilter{}
	c, rsn := f.Push(s)
	c2, r2 := f.Flush()
	return strings.TrimLeft(c+c2, "\n"), rsn + r2
}

// fail answers a request no route answered: with the caller's own error,
// the chain's fallback, or an error with Retry-After. It tells the observer
// how the request ended.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, ch *config.Chain, req *llm.Request, err error) {
	outcome := s.failOutcome(w, r, ch, req, err)
	s.obs.Request(ch.Name, outcome, 0)
}

func (s *Server) failOutcome(w http.ResponseWriter, r *http.Request, ch *config.Chain, req *llm.Request, err error) string {
	if r.Context().Err() != nil {
		return OutcomeCancelled // the caller went away; nobody is listening
	}
	var ce *route.CallerError
	var ex *route.ExhaustedError
	var tl *route.TooLargeError
	switch {
	case errors.As(err, &ce):
		status := ce.Status
		if status < 400 || status >= 500 {
			status = http.StatusBadRequest
		}
		code := ce.Class.String()
		switch ce.Class {
		case failure.Refused:
			code = "content_filter"
		case failure.Unsupported:
			code = "unsupported_parameter" // OpenAI's code for the same refusal
		}
		msg := ce.Route + ": " + ce.Message
		if ch.HideRoute {
			msg = hideRoutes(ch, ce.Message)
		}
		writeError(w, status, msg, "invalid_request_error", ce.Param, code)
		return OutcomeRejected
	case errors.As(err, &tl):
		writeError(w, http.StatusBadRequest, tl.Error(), "invalid_request_error", "messages", "context_length_exceeded")
		return OutcomeRejected
	case errors.As(err, &ex):
		if ch.Fallback.Kind == config.FallbackSearch {
			if ix := s.search[ch.Name]; ix != nil {
				if text, ok := ix.Answer(lastUser(req)); ok {
					s.fallbackText(w, ch, req, "search", text)
					s.obs.FallbackServed(ch.Name, "search")
					return OutcomeFallback
				}
			}
		}
		if ch.Fallback.Kind != config.FallbackError && ch.Fallback.Message != "" {
			s.fallbackText(w, ch, req, "message", ch.Fallback.Message)
			s.obs.FallbackServed(ch.Name, "message")
			return OutcomeFallback
		}
		if !ex.RetryAt.IsZero() {
			w.Header().Set("Retry-After", retryAfter(s.clock.Now(), ex.RetryAt))
		}
		writeError(w, http.StatusServiceUnavailable, exhaustedMessage(ch, ex, s.clock.Now()), "server_error", "", "no_route_available")
		s.obs.FallbackServed(ch.Name, "error")
		return OutcomeFailed
	case errors.Is(err, context.Canceled):
		return OutcomeCancelled
	default:
		s.log.Error("chat failed", "chain", ch.Name, "err", err)
		writeError(w, http.StatusBadGateway, "the gateway could not complete the request; see its log for the cause", "server_error", "", "gateway_error")
		return OutcomeFailed
	}
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

// fallbackText answers with a fallback's text (the chain's fixed message,
// or a search result), marked as a fallback in a header so that a program
// can tell.
func (s *Server) fallbackText(w http.ResponseWriter, ch *config.Chain, req *llm.Request, kind, text string) {
	w.Header().Set(HeaderFallback, kind)
	resp := &llm.Response{Content: text, FinishReason: "stop"}
	now := s.clock.Now().Unix()
	id := chatID(w.Header().Get(HeaderRequestID))
	if req.Stream {
		writeStreamHeaders(w)
		b := openai.AppendChunk(nil, id, ch.Name, now, llm.Chunk{Role: "assistant", Content: text}, false)
		b = openai.AppendChunk(b, id, ch.Name, now, llm.Chunk{FinishReason: "stop"}, false)
		if req.IncludeUsage {
			b = openai.AppendUsageChunk(b, id, ch.Name, now, llm.Usage{})
		}
		b = append(b, "data: [DONE]\n\n"...)
		w.Write(b)
		return
	}
	b := openai.AppendResponse(nil, id, ch.Name, now, resp, false)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func writeStreamHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}
