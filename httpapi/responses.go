package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/openai"
)

// responses serves POST /v1/responses (issue 33): the Responses API's
// stateless part, through the same Gateway flow as chat completions (the
// caller check, the cache, the routes, failover, a broken stream's
// continuation, the chain's fallback). A request is turned into the chat
// request it asks (openai.DecodeResponsesRequest); the answer comes back as
// a response object, or, with stream, as the API's typed events, a failure
// after the first event as response.failed. Errors before that are the
// same envelope as chat's ({"error": {message, type, param, code}}, the
// Responses API's too); one after a keep-alive committed the status is an
// error event.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
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
	lim := openai.Limits{Messages: s.plan.Server.MaxMessages, ContentBytes: s.plan.Server.MaxContentBytes}
	rr, err := openai.DecodeResponsesRequest(*buf, lim)
	if err != nil {
		writeRequestError(w, err)
		return
	}
	ch := s.lookupModel(w, rr.Model, who)
	if ch == nil || !chatChain(w, ch) {
		return
	}
	req := rr.Request
	who = who.Narrow(req.User)
	call := llm.Call{Request: req, Caller: who.Caller(), NoCache: noCache(r), ID: id}
	meta := openai.ResponseMeta{ID: respID(id), Created: s.clock.Now().Unix(), Echo: rr.Echo, Pass: ch.Reasoning == "pass"}
	if req.Stream {
		s.streamResponse(w, r, ch, who, meta, call)
		return
	}
	a, err := s.gw.Serve(r.Context(), ch, call)
	if err != nil {
		s.fail(w, r, ch, who, err)
		return
	}
	s.issueVisitor(w, r, who)
	resp := a.Response
	content, reasoning := splitThink(resp.Content)
	if reasoning != "" && resp.Reasoning == "" {
		resp.Reasoning = reasoning
	}
	resp.Content = content
	servedHeaders(w.Header(), ch, a.ServedBy, a.Route, a.CacheMiss)
	meta.Model = modelName(ch, a.Route)
	out := s.getBuf()
	defer s.putBuf(out)
	*out = openai.AppendResponseObject(*out, &meta, &resp)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(*out)))
	w.Write(*out)
}

// respID is a request id without its "req_" prefix: the response is
// "resp_" and that.
func respID(reqID string) string {
	if len(reqID) > 4 && reqID[:4] == "req_" {
		return reqID[4:]
	}
	return reqID
}

// streamResponse answers with the Responses API's events, each flushed as
// it comes (the first at once, as chat's stream does).
func (s *Server) streamResponse(w http.ResponseWriter, r *http.Request, ch *config.Chain, who caller.Identity, meta openai.ResponseMeta, call llm.Call) {
	as, ka, ok := s.openStreamAs(w, r, ch, who, call, func(h http.Header, as *llm.AnswerStream) {
		servedHeaders(h, ch, as.ServedBy, as.Route, as.CacheMiss)
	}, func(w http.ResponseWriter) http.ResponseWriter { return responseErrorEvents{w: w} })
	if !ok {
		return
	}
	defer ka.stop()
	defer as.Close()
	meta.Model = modelName(ch, as.Route)
	ev := &openai.ResponseEvents{Meta: meta}
	buf := s.getBuf()
	defer s.putBuf(buf)
	send := func(b []byte, flush bool) bool {
		ka.lock()
		defer ka.unlock(flush)
		if _, err := w.Write(b); err != nil {
			return false
		}
		if flush {
			_ = flushOut(w)
		}
		return true
	}
	if !send(ev.Start((*buf)[:0]), true) {
		return
	}
	var think openai.ThinkFilter
	finish := ""
	for {
		c, err := as.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if r.Context().Err() != nil && !ShuttingDown(r.Context()) {
				return // the caller went away
			}
			msg := brokenMessage(err, ch)
			if ShuttingDown(r.Context()) {
				msg = shutdownStreamMessage
			}
			tail, rtail := think.Flush()
			b := ev.Chunk((*buf)[:0], llm.Chunk{Content: tail, Reasoning: rtail})
			send(ev.Fail(b, "server_error", msg), true)
			return
		}
		if c.FinishReason != "" {
			finish = c.FinishReason
		}
		if !send(ev.Chunk((*buf)[:0], unthink(&think, c)), as.Buffered() == 0) {
			return
		}
	}
	tail, rtail := think.Flush()
	b := ev.Chunk((*buf)[:0], llm.Chunk{Content: tail, Reasoning: rtail})
	u, _ := as.Usage()
	if as.WrittenBy != nil {
		// A continued stream's final response names the route that
		// finished it (issue 33).
		ev.Meta.Model = modelName(ch, as.WrittenBy())
	}
	send(ev.End(b, finish, u), true)
}

// responseErrorEvents is errorEvents for the Responses API: the error
// envelope writeError writes goes out as the API's error event.
type responseErrorEvents struct {
	w http.ResponseWriter
}

func (e responseErrorEvents) Header() http.Header { return http.Header{} }

func (e responseErrorEvents) WriteHeader(int) {}

func (e responseErrorEvents) Write(b []byte) (int, error) {
	var env struct {
		Error struct {
			Message string `json:"message"`
			Param   string `json:"param"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &env)
	if _, err := e.w.Write(openai.AppendResponsesErrorEvent(nil, env.Error.Code, env.Error.Message, env.Error.Param)); err != nil {
		return 0, err
	}
	_ = flushOut(e.w)
	return len(b), nil
}
