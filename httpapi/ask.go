package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/assistant"
	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
)

// HeaderAnswer says how a site assistant answered (issue 14): model,
// search or rule.
const HeaderAnswer = "X-Tollfree-Answer"

// maxHistory caps the turns of an /v1/ask history: only the last few
// exchanges are used, and the rest is not worth reading.
const maxHistory = 40

// askRequest is the body of POST /v1/ask (docs: README "A site assistant").
type askRequest struct {
	Question string        `json:"question"`
	History  []llm.Message `json:"history"`
	Chain    string        `json:"chain"`
	Stream   bool          `json:"stream"`
}

// askReply is the whole answer of POST /v1/ask; the done event of a stream
// is the same without the answer.
type askReply struct {
	Answer    string       `json:"answer,omitempty"`
	Mode      string       `json:"mode"`
	Sources   []llm.Source `json:"sources"`
	Cached    bool         `json:"cached"`
	RequestID string       `json:"request_id"`
}

// mode names how an assistant answered, for visitors: never the route.
func mode(by llm.ServedBy) string {
	switch by {
	case llm.ServedByRule:
		return "rule"
	case llm.ServedByFallbackSearch, llm.ServedByFallbackMessage:
		return "search"
	}
	return "model"
}

// ask serves POST /v1/ask: a visitor's question to a site assistant. It
// only decodes, calls the gateway (which runs the assistant's flow) and
// encodes, as chat does.
func (s *Server) ask(w http.ResponseWriter, r *http.Request) {
	if !s.cors(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST, OPTIONS")
		return
	}
	id := s.ids.Next()
	w.Header().Set(HeaderRequestID, id)
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "send the question as JSON, with Content-Type: application/json", "invalid_request_error", "", "unsupported_media_type")
		return
	}
	who, buf, ok := s.intake(w, r)
	if !ok {
		return
	}
	defer s.putBuf(buf)
	req, param, err := decodeAsk(*buf)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "invalid_request_error", param, "invalid_request")
		return
	}
	ch := s.assistantChain(req.Chain)
	if ch == nil {
		writeError(w, http.StatusNotFound, s.noAssistant(req.Chain), "invalid_request_error", "chain", "model_not_found")
		return
	}
	msgs := append(slices.Clone(req.History), llm.Message{Role: "user", Content: req.Question})
	stream := req.Stream || strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	call := llm.Call{
		Request: &llm.Request{Messages: msgs, Stream: stream}, Caller: who.Caller(), NoCache: noCache(r),
		ID: id, Language: r.Header.Get("Accept-Language"), Ask: true,
	}
	if stream {
		s.askStream(w, r, ch, who, call)
		return
	}
	a, err := s.gw.Serve(r.Context(), ch, call)
	if err != nil {
		s.fail(w, r, ch, who, err)
		return
	}
	s.issueVisitor(w, r, who)
	w.Header().Set(HeaderAnswer, mode(a.ServedBy))
	writeJSON(w, askReply{Answer: a.Content, Mode: mode(a.ServedBy), Sources: sourcesOf(a.Sources), Cached: cached(a.ServedBy), RequestID: a.RequestID})
}

func cached(by llm.ServedBy) bool { return by == llm.ServedByCache || by == llm.ServedBySharedCall }

func sourcesOf(s []llm.Source) []llm.Source {
	if s == nil {
		return []llm.Source{}
	}
	return s
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// decodeAsk reads and checks an /v1/ask body; param names the field at
// fault.
func decodeAsk(body []byte) (req askRequest, param string, err error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, "", fmt.Errorf("the body is not the JSON /v1/ask takes ({\"question\": \"...\", \"history\": [...], \"chain\": \"...\", \"stream\": true}): %v", err)
	}
	if err := assistant.Check(req.Question); err != nil {
		return req, "question", errors.New(strings.TrimPrefix(err.Error(), assistant.ErrQuestion.Error()+": "))
	}
	if len(req.History) > maxHistory {
		return req, "history", fmt.Errorf("the history has %d turns; send at most %d (only the last few exchanges are used)", len(req.History), maxHistory)
	}
	for i, m := range req.History {
		if m.Role != "user" && m.Role != "assistant" {
			return req, fmt.Sprintf("history[%d].role", i), fmt.Errorf("history[%d].role is %q; a history holds only user and assistant turns", i, m.Role)
		}
	}
	return req, "", nil
}

// assistantChain is the chain asked: the one named, else the plan's first
// assistant; nil when there is none such.
func (s *Server) assistantChain(name string) *config.Chain {
	if name != "" {
		if ch := s.plan.Chains[name]; ch != nil && ch.Assistant != nil {
			return ch
		}
		return nil
	}
	for _, n := range s.plan.ChainOrder {
		if ch := s.plan.Chains[n]; ch.Assistant != nil {
			return ch
		}
	}
	return nil
}

func (s *Server) noAssistant(name string) string {
	var names []string
	for _, n := range s.plan.ChainOrder {
		if s.plan.Chains[n].Assistant != nil {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "this gateway has no assistant: give a chain an assistant: block"
	}
	return fmt.Sprintf("%s is no assistant of this gateway; its assistants are: %s", strconv.Quote(name), strings.Join(names, ", "))
}

// askStream answers /v1/ask as events: delta, then done (or error).
func (s *Server) askStream(w http.ResponseWriter, r *http.Request, ch *config.Chain, who caller.Identity, call llm.Call) {
	as, ka, ok := s.openStream(w, r, ch, who, call, func(h http.Header, as *llm.AnswerStream) {
		h.Set(HeaderAnswer, mode(as.ServedBy))
	})
	if !ok {
		return
	}
	defer ka.stop()
	defer as.Close()
	ev := &eventWriter{w: w, ka: ka}
	for {
		c, err := as.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if r.Context().Err() == nil {
				ev.send("error", map[string]any{"error": map[string]string{"message": brokenMessage(err, ch), "code": "stream_broken"}}, true)
			}
			return
		}
		if text, _ := splitThink(c.Content); text != "" && !ev.send("delta", map[string]string{"text": text}, as.Buffered() == 0) {
			return
		}
	}
	var src []llm.Source
	if as.Sources != nil {
		src = as.Sources()
	}
	ev.send("done", askReply{Mode: mode(as.ServedBy), Sources: sourcesOf(src), Cached: cached(as.ServedBy), RequestID: as.RequestID}, true)
}

// eventWriter writes named SSE events between keep-alives.
type eventWriter struct {
	w  http.ResponseWriter
	ka *keepAlive
}

func (e *eventWriter) send(name string, v any, flush bool) bool {
	b, _ := json.Marshal(v)
	e.ka.lock()
	defer e.ka.unlock(flush)
	if _, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b); err != nil {
		return false
	}
	if flush {
		_ = flushOut(e.w)
	}
	return true
}

// cors answers a browser's cross-origin questions for /v1/ask: an Origin
// one of the assistants lists gets Access-Control-Allow-Origin naming it
// (never *, and no credentials: the widget sends its visitor id in the
// visitor header, not in a cookie), the headers the widget reads exposed
// (the visitor id, the limit that refused, Retry-After); a preflight
// is answered here (204, or 403 for an origin not listed). It reports
// whether the request goes on.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	h := w.Header()
	h.Add("Vary", "Origin")
	allowed := origin != "" && s.originAllowed(origin)
	if allowed {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", strings.Join([]string{HeaderAnswer, HeaderRequestID, "Retry-After", HeaderLimit, s.callers.VisitorHeader()}, ", "))
	}
	if r.Method != http.MethodOptions {
		return true
	}
	if !allowed {
		writeError(w, http.StatusForbidden, "this origin may not call /v1/ask; list it in the assistant's origins", "invalid_request_error", "", "origin_not_allowed")
		return false
	}
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Accept, Accept-Language, "+s.callers.VisitorHeader())
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return false
}

func (s *Server) originAllowed(origin string) bool {
	for _, n := range s.plan.ChainOrder {
		if a := s.plan.Chains[n].Assistant; a != nil && slices.Contains(a.Origins, origin) {
			return true
		}
	}
	return false
}
