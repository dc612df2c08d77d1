package emulator

import (
	"context"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/tollfree/tollfree/internal/clock"
)

// keepAliveComment is OpenRouter's SSE comment while a model is working.
const keepAliveComment = ": OPENROUTER PROCESSING"

// sse writes server-sent events, flushing each at once.
type sse struct {
	w         http.ResponseWriter
	eol       string
	keepAlive bool
	split     bool // write in 5-byte pieces, each flushed
}

func newSSE(w http.ResponseWriter, k Kind) *sse {
	s := &sse{w: w, eol: "\n", keepAlive: k == StreamKeepAlive, split: k == StreamSplitLines}
	if k == StreamCRLF {
		s.eol = "\r\n"
	}
	return s
}

// event writes one data event; with keep-alive on, a comment comes first.
func (s *sse) event(data []byte) {
	if s.keepAlive {
		io.WriteString(s.w, keepAliveComment+s.eol+s.eol)
	}
	s.raw("data: " + string(data) + s.eol + s.eol)
}

func (s *sse) raw(text string) {
	for s.split && len(text) > 5 {
		io.WriteString(s.w, text[:5])
		flush(s.w)
		text = text[5:]
	}
	io.WriteString(s.w, text)
	flush(s.w)
}

func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}

// garbageEvent is the event StreamMalformedEvent slips into a stream.
const garbageEvent = `data: {"choices":[{"delta":{"content":"oops`

// streamPlan is how many content chunks a stream sends, and what it ends
// with.
func streamPlan(c *call) (pieces []string, limit int, cut bool) {
	pieces = chunks(c.answer)
	if c.step.ChunkBytes > 0 {
		pieces = byteChunks(c.answer, c.step.ChunkBytes)
	}
	if c.kind == StreamLongLine {
		pieces = []string{c.answer}
	}
	limit = len(pieces)
	switch c.kind {
	case StreamCut, StreamStall, StreamErrorEvent, ConnReset:
		limit, cut = min(max(c.step.After, 0), len(pieces)), true
	}
	return pieces, limit, cut
}

// between waits the model's chunk delay; false when the client left.
func (e *Emulator) between(ctx context.Context, c *call) bool {
	return clock.Sleep(ctx, e.clock, c.model.ChunkDelay) == nil
}

// stall keeps a stream open and silent until the client leaves or the
// step's delay passes, then drops the connection.
func (e *Emulator) stall(ctx context.Context, c *call) {
	e.hang(ctx, c)
}

func (c *call) chunk(delta obj, finish any) obj {
	return append(c.head("chat.completion.chunk"),
		kv{"choices", []obj{{{"index", 0}, {"delta", delta}, {"logprobs", nil}, {"finish_reason", finish}}}})
}

// withUsage adds the cumulative usage Gemini's OpenAI-compatible endpoint
// puts on every chunk; other flavors' chunks are returned as they are.
func (c *call) withUsage(ch obj, sent int) obj {
	if !c.compat {
		return ch
	}
	done := tokensOf(sent)
	return append(ch, kv{"usage", obj{{"prompt_tokens", c.prompt}, {"completion_tokens", done}, {"total_tokens", c.prompt + done}}})
}

func (e *Emulator) streamOpenAI(w http.ResponseWriter, r *http.Request, c *call) int {
	ctx := r.Context()
	e.answerHeaders(w, c, "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := newSSE(w, c.kind)

	first := c.chunk(obj{{"role", "assistant"}, {"content", ""}}, nil)
	if c.prov.Flavor == FlavorGroq {
		first = append(first, kv{"x_groq", obj{{"id", c.requestID()}}})
	}
	s.event(compact(first))

	for _, r := range chunks(c.step.Reasoning) {
		if !e.between(ctx, c) {
			return http.StatusOK
		}
		s.event(compact(c.chunk(obj{{"reasoning", r}}, nil)))
	}
	pieces, limit, _ := streamPlan(c)
	sent := 0
	for i := range limit {
		if c.kind == StreamMalformedEvent && i == limit/2 {
			s.raw(garbageEvent + s.eol + s.eol)
		}
		if i > 0 && !e.between(ctx, c) {
			return http.StatusOK
		}
		sent += len(pieces[i])
		s.event(compact(c.withUsage(c.chunk(obj{{"content", pieces[i]}}, nil), sent)))
	}
	for i, tc := range c.functionCalls() {
		// OpenAI streams a call as its id and name first, then its
		// arguments in pieces, each delta naming the call's index.
		if !e.between(ctx, c) {
			return http.StatusOK
		}
		head := obj{{"index", i}, {"id", tc.id}, {"type", "function"}, {"function", obj{{"name", tc.name}, {"arguments", ""}}}}
		s.event(compact(c.chunk(obj{{"tool_calls", []obj{head}}}, nil)))
		for _, piece := range byteChunks(tc.args, 8) {
			s.event(compact(c.chunk(obj{{"tool_calls", []obj{{{"index", i}, {"function", obj{{"arguments", piece}}}}}}}, nil)))
		}
	}
	switch c.kind {
	case StreamCut:
		return http.StatusOK
	case StreamStall:
		e.stall(ctx, c)
		return http.StatusOK
	case ConnReset:
		resetConn(w)
		return http.StatusOK
	case StreamErrorEvent:
		ev := append(c.head("chat.completion.chunk"),
			kv{"error", obj{{"code", "server_error"}, {"message", "Provider disconnected unexpectedly"}}},
			kv{"choices", []obj{{{"index", 0}, {"delta", obj{{"content", ""}}}, {"finish_reason", "error"}}}})
		s.event(compact(ev))
		return http.StatusOK
	}
	if limit > 0 && !e.between(ctx, c) {
		return http.StatusOK
	}
	last := c.withUsage(c.chunk(obj{}, c.finish), sent)
	switch c.prov.Flavor {
	case FlavorGroq:
		last = append(last, kv{"x_groq", obj{{"id", c.requestID()}, {"usage", c.groqUsage()}}})
	case FlavorOpenRouter:
		last = append(last, kv{"usage", c.usageObj()})
	}
	s.event(compact(last))
	if c.includeUsage && c.prov.Flavor != FlavorOpenRouter && !c.compat {
		s.event(compact(append(c.head("chat.completion.chunk"), kv{"choices", []obj{}}, kv{"usage", c.usageObj()})))
	}
	if c.kind != StreamNoDone {
		s.raw("data: [DONE]" + s.eol + s.eol)
	}
	return http.StatusOK
}

// byteChunks splits text into pieces of at most n bytes, each cut on a
// character boundary (a piece holds at least one character).
func byteChunks(text string, n int) []string {
	var out []string
	for text != "" {
		i := min(n, len(text))
		for i > 0 && i < len(text) && !utf8.RuneStart(text[i]) {
			i--
		}
		if i == 0 {
			_, i = utf8.DecodeRuneInString(text)
		}
		out = append(out, text[:i])
		text = text[i:]
	}
	return out
}
