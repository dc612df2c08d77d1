package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/openai"
	"github.com/tollfree/tollfree/route"
)

// stream answers with server-sent events, flushed as they arrive.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, id string, ch *config.Chain, req *llm.Request) {
	rs, err := s.router.Stream(r.Context(), ch.Name, id, req)
	if err != nil {
		s.fail(w, r, ch, req, err)
		return
	}
	defer rs.Close()
	if !ch.HideRoute {
		w.Header().Set(HeaderRoute, rs.Route.ID)
	}
	writeStreamHeaders(w)
	fl, _ := w.(http.Flusher)
	rc := http.NewResponseController(w)
	name := s.modelName(ch, rs.Route)
	cid := chatID(id)
	created := s.clock.Now().Unix()
	pass := ch.Reasoning == "pass"
	think := &openai.ThinkFilter{}
	buf := s.getBuf()
	defer s.putBuf(buf)
	var finish string
	for {
		c, err := rs.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if r.Context().Err() != nil {
				return
			}
			// The answer broke and no route could continue it: say so in
			// an error event, and abort so it cannot pass for a whole one.
			msg := "the answer broke off and could not be continued"
			var be *route.BrokenError
			if errors.As(err, &be) {
				msg = be.Error()
			}
			*buf = openai.AppendErrorEvent((*buf)[:0], msg, "server_error", "stream_broken")
			w.Write(*buf)
			if fl != nil {
				fl.Flush()
			}
			panic(http.ErrAbortHandler)
		}
		if c.Content != "" {
			content, reasoning := think.Push(c.Content)
			c.Content = content
			c.Reasoning += reasoning
		}
		if c.FinishReason != "" {
			finish = c.FinishReason
			tail, treason := think.Flush()
			c.Content += tail
			c.Reasoning += treason
		}
		usage := c.Usage
		c.Usage = nil
		if c.Content == "" && c.Role == "" && c.FinishReason == "" && len(c.ToolCalls) == 0 && (c.Reasoning == "" || !pass) {
			_ = usage
			continue
		}
		*buf = openai.AppendChunk((*buf)[:0], cid, name, created, c, pass)
		if _, err := w.Write(*buf); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
		_ = rc
	}
	*buf = (*buf)[:0]
	if finish == "" {
		*buf = openai.AppendChunk(*buf, cid, name, created, llm.Chunk{FinishReason: "stop"}, false)
	}
	if req.IncludeUsage {
		u, _ := rs.Usage()
		*buf = openai.AppendUsageChunk(*buf, cid, name, created, u)
	}
	*buf = append(*buf, "data: [DONE]\n\n"...)
	w.Write(*buf)
	if fl != nil {
		fl.Flush()
	}
}
