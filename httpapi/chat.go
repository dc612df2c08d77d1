package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/assistant"
	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/openai"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/typed"
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
	id := s.ids.Next()
	w.Header().Set(HeaderRequestID, id)
	who, buf, ok := s.intake(w, r)
	if !ok {
		return
	}
	defer s.putBuf(buf)
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
	// The chain is looked up here, once: the Gateway and the router take it
	// as it is.
	ch := s.lookupModel(w, model, who)
	if ch == nil || !chatChain(w, ch) {
		return
	}
	// The user field narrows only a key that says so (caller.Identity.Narrow).
	who = who.Narrow(req.User)
	call := llm.Call{Request: req, Caller: who.Caller(), NoCache: noCache(r), ID: id, Language: r.Header.Get("Accept-Language")}
	if req.Stream {
		s.stream(w, r, ch, who, call)
		return
	}
	a, err := s.gw.Serve(r.Context(), ch, call)
	if err != nil {
		s.fail(w, r, ch, who, err)
		return
	}
	s.issueVisitor(w, r, who)
	s.writeAnswer(w, ch, a)
}

// noCache reports whether the caller opted out of the response cache for
// this request, with Cache-Control: no-cache (or no-store).
func noCache(r *http.Request) bool {
	cc := r.Header.Get("Cache-Control")
	return cc != "" && (strings.Contains(cc, "no-cache") || strings.Contains(cc, "no-store"))
}

// servedHeaders say what served a request: the route (unless the chain
// hides its routes), the fallback, the cache.
func servedHeaders(h http.Header, ch *config.Chain, by llm.ServedBy, route string, cacheMiss bool) {
	if !ch.HideRoute && route != "" {
		h.Set(HeaderRoute, route)
	}
	if kind := by.Fallback(); kind != "" {
		h.Set(HeaderFallback, kind)
	}
	if ch.Assistant != nil {
		h.Set(HeaderAnswer, mode(by))
	}
	switch {
	case by == llm.ServedByCache:
		h.Set(HeaderCache, "hit")
	case by == llm.ServedBySharedCall:
		h.Set(HeaderCache, "shared")
	case cacheMiss:
		h.Set(HeaderCache, "miss")
	}
}

// writeAnswer writes a whole answer as a chat.completion.
func (s *Server) writeAnswer(w http.ResponseWriter, ch *config.Chain, a *llm.Answer) {
	resp := &a.Response
	content, reasoning := splitThink(resp.Content)
	if reasoning != "" && resp.Reasoning == "" {
		resp.Reasoning = reasoning
	}
	resp.Content = content
	servedHeaders(w.Header(), ch, a.ServedBy, a.Route, a.CacheMiss)
	out := s.getBuf()
	defer s.putBuf(out)
	*out = openai.AppendResponse(*out, chatID(a.RequestID), modelName(ch, a.Route), s.clock.Now().Unix(), resp, ch.Reasoning == "pass")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(*out)))
	w.Write(*out)
}

// modelName is what the response's model field says: the route that
// answered, or the chain's name when the chain hides its routes or its
// fallback answered.
func modelName(ch *config.Chain, route string) string {
	if ch.HideRoute || route == "" {
		return ch.Name
	}
	return route
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

// fail answers a request the Gateway answered with an error: the
// caller's own error, a refusal by the caller check (a caller limit, 429;
// a chain the key may not use, 403; the gateway at its cap, 503), a typed
// request whose schema cannot be checked (400) or that no answer matched
// (502), or no route and no fallback (503 with Retry-After). A caller that
// went away gets nothing: nobody is listening; one the server's shutdown
// cut short, a 503 (ErrShutdown).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, ch *config.Chain, who caller.Identity, err error) {
	if ShuttingDown(r.Context()) {
		writeError(w, http.StatusServiceUnavailable, shutdownMessage, "server_error", "", "shutting_down")
		return
	}
	if r.Context().Err() != nil {
		return
	}
	if s.callerRefused(w, who, ch, err) {
		return
	}
	if errors.Is(err, assistant.ErrQuestion) {
		writeError(w, http.StatusBadRequest, strings.TrimPrefix(err.Error(), assistant.ErrQuestion.Error()+": "), "invalid_request_error", "messages", "invalid_question")
		return
	}
	var ce *route.CallerError
	var tl *route.TooLargeError
	var le *quota.LimitError
	var ex *route.ExhaustedError
	var te *typed.RequestError
	var ia *route.InvalidAnswerError
	var nre *config.NoRouteEnabledError
	var ca *route.CapabilityError
	switch {
	case errors.As(err, &nre):
		// Not Retry-After: no wait enables a route; a key does.
		writeError(w, http.StatusServiceUnavailable, nre.Error(), "server_error", "", "no_route_enabled")
	case errors.As(err, &ca):
		// Issue 33: what the request carries, no route of the chain takes.
		msg := ca.Error()
		if ch.HideRoute {
			msg = hideRoutes(ch, msg)
		}
		writeError(w, http.StatusBadRequest, msg, "invalid_request_error", ca.Param(), "unsupported_capability")
	case errors.As(err, &te):
		writeError(w, http.StatusBadRequest, te.Message, "invalid_request_error", te.Param, "invalid_schema")
	case errors.As(err, &ia):
		writeInvalidAnswer(w, ia)
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
	case errors.As(err, &tl):
		writeError(w, http.StatusBadRequest, tl.Error(), "invalid_request_error", "messages", "context_length_exceeded")
	case errors.As(err, &le):
		s.limitRefused(w, le)
	case errors.As(err, &ex):
		if !ex.RetryAt.IsZero() {
			w.Header().Set("Retry-After", retryAfter(s.clock.Now(), ex.RetryAt))
		}
		writeError(w, http.StatusServiceUnavailable, exhaustedMessage(ch, ex, s.clock.Now()), "server_error", "", "no_route_available")
	case errors.Is(err, context.Canceled):
	default: // the Gateway logged the cause
		writeError(w, http.StatusBadGateway, "the gateway could not complete the request; see its log for the cause", "server_error", "", "gateway_error")
	}
}

func writeStreamHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

// writeInvalidAnswer answers a typed request that routes answered, but
// never as asked (issue 15): 502 Bad Gateway, the status of a gateway that
// got an invalid response from upstream. Not 422: the request was fine,
// and the caller may send it again as it is (a model may answer validly
// next time); a 4xx would tell it to change the request. The message names
// the violations' JSON paths and keywords, never the answer's text.
func writeInvalidAnswer(w http.ResponseWriter, e *route.InvalidAnswerError) {
	msg := fmt.Sprintf("no model of chain %q gave an answer that matches the request's schema (%d invalid answers, repairs included; %d upstream calls spent, of at most %d a typed request); the last broke it at: %s",
		e.Chain, e.Invalid, e.Calls, e.MaxCalls, e.Violations)
	param := "response_format"
	if e.Violations.OfToolCalls() {
		param = "tools"
	}
	writeError(w, http.StatusBadGateway, msg, "server_error", param, "invalid_answer")
}
