package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/openai"
	"github.com/tollfree/tollfree/route"
)

// stream answers with OpenAI-format server-sent events, whatever answered
// (a route's stream, whatever its dialect; a cached answer; the chain's
// fallback), each flushed as it arrives. The routes race for the first
// token (route.Router.Stream); until one comes, a failure is answered like
// a non-streamed one (a status and a JSON error). After it, the status is
// 200 and cannot be taken back: a stream that breaks and that no route can
// continue ends with an OpenAI-style error event and an aborted response
// (no finish_reason, no [DONE]), so that a cut answer can never pass for a
// whole one (docs/STYLE.md: end a broken stream with http.ErrAbortHandler).
//
// A stream silent for the server's stream_keepalive (10s by default) gets
// an SSE comment (keepAlive), whether it waits for its first token or for
// a continuation. The first comment commits the status: a request still
// unanswered then gets its answer (a route's, the fallback's) as a stream
// whose trailers say what served it (X-Tollfree-Fallback...), and a failure
// as one error event in the stream, after which the response ends
// cleanly (no [DONE]: nothing was answered).
//
// <think>…</think> text in the content is moved to reasoning, also when a
// tag is split across chunks; reasoning goes out as reasoning_content when
// the chain's reasoning is "pass" and is dropped otherwise. With
// stream_options.include_usage the last chunk before [DONE] carries the
// usage of every part (estimated where an upstream reported none).
func (s *Server) stream(w http.ResponseWriter, r *http.Request, ch *config.Chain, who caller.Identity, call llm.Call) {
	as, ka, ok := s.openStream(w, r, ch, who, call, func(h http.Header, as *llm.AnswerStream) {
		servedHeaders(h, ch, as.ServedBy, as.Route, as.CacheMiss)
	})
	if !ok {
		return
	}
	defer ka.stop()
	defer as.Close()
	sw := &sseWriter{w: w, ka: ka, id: chatID(as.RequestID), model: modelName(ch, as.Route), created: s.clock.Now().Unix(), pass: ch.Reasoning == "pass"}
	sw.buf = s.getBuf()
	defer s.putBuf(sw.buf)
	sw.head = openai.AppendChunkHead(make([]byte, 0, 96+len(sw.id)+len(sw.model)), sw.id, sw.model, sw.created)
	var think openai.ThinkFilter
	var finish string
	first := true
	writer := as.Route
	for {
		c, err := as.Next()
		if as.WrittenBy != nil && !ch.HideRoute {
			// A continued stream names the route that writes each chunk,
			// and its last chunks the route that finished it (issue 33).
			if by := as.WrittenBy(); by != writer {
				writer = by
				sw.model = modelName(ch, by)
				sw.head = openai.AppendChunkHead(sw.head[:0], sw.id, sw.model, sw.created)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if ShuttingDown(r.Context()) {
				sw.broken(&think, shutdownStreamMessage)
			}
			if r.Context().Err() != nil {
				return // the caller went away; nobody is listening
			}
			sw.broken(&think, brokenMessage(err, ch))
		}
		if c.FinishReason != "" {
			finish = c.FinishReason
		}
		// Flush the first token at once: the caller's time to first token
		// must not wait for the gateway to read and write what came with
		// it (issue 18 item 3). After it, flush when the next chunk would
		// wait on the upstream: at once for the caller, and one write for
		// chunks that came together.
		if !sw.chunk(unthink(&think, c), first || as.Buffered() == 0) {
			return
		}
		first = false
	}
	sw.end(&think, finish, call.Request.IncludeUsage, as)
}

// unthink moves what c's content holds inside <think>…</think> to its
// reasoning, and on the finishing chunk adds what the filter held back.
func unthink(think *openai.ThinkFilter, c llm.Chunk) llm.Chunk {
	if c.Content != "" {
		content, rsn := think.Push(c.Content)
		c.Content = content
		c.Reasoning += rsn
	}
	if c.FinishReason != "" {
		tail, rtail := think.Flush()
		c.Content += tail
		c.Reasoning += rtail
	}
	return c
}

// broken ends an answer that broke and that no route could continue: what
// the think filter held back is answer text the caller is owed; then an
// error event, and an abort (never a [DONE]).
func (sw *sseWriter) broken(think *openai.ThinkFilter, msg string) {
	tail, rtail := think.Flush()
	sw.chunk(llm.Chunk{Content: tail, Reasoning: rtail}, false)
	sw.errorEvent(msg)
	panic(http.ErrAbortHandler)
}

// end ends an answer that finished: what the think filter held back, the
// finish the client expects when the answer ended with [DONE] but no
// finish_reason, the usage chunk when asked, and [DONE]. They are written
// but not flushed: the handler returns at once, and net/http then sends
// them with the response's own end (the chunked encoding's last chunk, and
// trailers) in one write rather than two (issue 18 item 3).
func (sw *sseWriter) end(think *openai.ThinkFilter, finish string, usage bool, as *llm.AnswerStream) {
	tail, rtail := think.Flush()
	sw.chunk(llm.Chunk{Content: tail, Reasoning: rtail}, false)
	*sw.buf = (*sw.buf)[:0]
	if finish == "" {
		*sw.buf = openai.AppendChunk(*sw.buf, sw.id, sw.model, sw.created, llm.Chunk{FinishReason: "stop"}, false)
	}
	if usage {
		u, _ := as.Usage()
		*sw.buf = openai.AppendUsageChunk(*sw.buf, sw.id, sw.model, sw.created, u)
	}
	*sw.buf = append(*sw.buf, "data: [DONE]\n\n"...)
	sw.ka.lock()
	defer sw.ka.unlock(false)
	_, _ = sw.w.Write(*sw.buf) // a caller gone has nothing left to hear
}

// sseWriter writes one response's chunks. Each write is made under the
// keep-alives' lock (ka, nil when they are off), so that a comment never
// lands inside an event.
type sseWriter struct {
	w       http.ResponseWriter
	ka      *keepAlive
	buf     *[]byte
	head    []byte // what every chunk begins with (openai.AppendChunkHead)
	id      string
	model   string
	created int64
	pass    bool // reasoning_content is passed on
}

// chunk writes c unless it has nothing to say (usage is written once, at
// the end), and flushes what was written when flush is set (the caller
// flushes once nothing more is at hand, even after a chunk with nothing to
// say). It reports false when the caller went away.
func (sw *sseWriter) chunk(c llm.Chunk, flush bool) bool {
	say := c.Content != "" || c.Role != "" || c.FinishReason != "" || c.ToolCalls != nil || c.Reasoning != "" && sw.pass
	if !say && !flush {
		return true
	}
	if say {
		*sw.buf = openai.AppendChunkAfter((*sw.buf)[:0], sw.head, c, sw.pass)
	}
	sw.ka.lock()
	defer sw.ka.unlock(flush)
	if say {
		if _, err := sw.w.Write(*sw.buf); err != nil {
			return false
		}
	}
	if flush {
		_ = flushOut(sw.w) // a writer that cannot flush still gets the bytes
	}
	return true
}

func (sw *sseWriter) errorEvent(msg string) {
	*sw.buf = openai.AppendErrorEvent((*sw.buf)[:0], msg, "server_error", "stream_broken")
	sw.write()
}

// write sends the buffer and flushes it at once.
func (sw *sseWriter) write() bool {
	sw.ka.lock()
	defer sw.ka.unlock(true)
	if _, err := sw.w.Write(*sw.buf); err != nil {
		return false
	}
	_ = flushOut(sw.w) // a writer that cannot flush still gets the bytes
	return true
}

// errorEvents is where an error answer goes once a keep-alive has
// committed the stream's status: the error envelope that writeError writes
// (in one Write) goes out as one event, `data: {"error":{...}}`, as a
// stream that breaks ends with, and is flushed. The status and headers
// set for it (Retry-After, X-RateLimit-*) come too late to be sent; the
// message says when to come back. The keep-alives are stopped by then, so
// nothing else writes.
type errorEvents struct {
	w http.ResponseWriter
}

func (e errorEvents) Header() http.Header { return http.Header{} }

func (e errorEvents) WriteHeader(int) {}

func (e errorEvents) Write(b []byte) (int, error) {
	ev := make([]byte, 0, len(b)+len("data: \n\n"))
	ev = append(append(append(ev, "data: "...), b...), "\n\n"...)
	if _, err := e.w.Write(ev); err != nil {
		return 0, err
	}
	_ = flushOut(e.w)
	return len(b), nil
}

// brokenMessage is what the caller is told about an answer that broke off:
// the class and reason of the break (never a continuation a route refused),
// and the route only when the chain shows its routes.
func brokenMessage(err error, ch *config.Chain) string {
	var be *route.BrokenError
	if !errors.As(err, &be) {
		return "the answer broke off and could not be continued; the text received so far is incomplete"
	}
	who := "the route"
	if !ch.HideRoute {
		who = be.Route
	}
	if be.Deadline {
		return "the answer from " + who + " was cut at the chain's deadline of " + ch.Deadline.String() + "; the text received so far is incomplete"
	}
	return "the answer from " + who + " broke off (" + be.Class.String() + ": " + hideRoutes(ch, be.Message) + ") and no route could continue it; the text received so far is incomplete"
}

// openStream asks the gateway for call's stream, with keep-alives going
// out while it waits (keepalive.go). On an error it answers the caller
// itself, as an error event once a keep-alive committed the status, else
// as an ordinary error response, and ok is false. On an answer it writes
// the stream's headers (headers adds the path's own), or, when a
// keep-alive wrote them already, the path's own as trailers; it hands
// back the stream, which the caller closes (that ends the request's turn,
// its caller's request in flight and the gateway's cap, whichever way the
// stream ends), and its keep-alive, which the caller stops.
func (s *Server) openStream(w http.ResponseWriter, r *http.Request, ch *config.Chain, who caller.Identity, call llm.Call, headers func(http.Header, *llm.AnswerStream)) (*llm.AnswerStream, *keepAlive, bool) {
	return s.openStreamAs(w, r, ch, who, call, headers, func(w http.ResponseWriter) http.ResponseWriter { return errorEvents{w: w} })
}

// openStreamAs is openStream with the writer that turns an error answer
// into the stream's error event once a keep-alive committed the status
// (the Responses API's differs from chat's: responses.go).
func (s *Server) openStreamAs(w http.ResponseWriter, r *http.Request, ch *config.Chain, who caller.Identity, call llm.Call, headers func(http.Header, *llm.AnswerStream), events func(http.ResponseWriter) http.ResponseWriter) (*llm.AnswerStream, *keepAlive, bool) {
	ka := startKeepAlive(s.clock, s.plan.Server.StreamKeepAlive, w, func() { writeStreamHeaders(w) })
	as, err := s.gw.ServeStream(r.Context(), ch, call)
	if err != nil {
		if ka.stop() {
			s.fail(events(w), r, ch, who, err)
		} else {
			s.fail(w, r, ch, who, err)
		}
		return nil, nil, false
	}
	if !ka.commit() {
		s.issueVisitor(w, r, who)
		headers(w.Header(), as)
		writeStreamHeaders(w)
	} else {
		// A keep-alive sent the headers already: what they would have
		// said (a fallback, the cache, the route) goes in the trailers,
		// for a client that reads them (Go's http.Response.Trailer).
		t := make(http.Header)
		headers(t, as)
		for k, v := range t {
			w.Header()[http.TrailerPrefix+k] = v
		}
	}
	ka.unlock(false)
	return as, ka, true
}
