package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/sse"
	"github.com/tollfree/tollfree/llm"
)

// stream reads a streamGenerateContent?alt=sse answer. Each event is a
// whole GenerateContentResponse holding the next piece of text; Gemini
// sends no [DONE], so the answer is complete only if an event carried a
// finishReason before the body ended.
//
// Next is for one goroutine; Close may be called from any.
type stream struct {
	c      *Client
	model  string
	status int
	header http.Header
	body   io.ReadCloser
	rd     *sse.Reader
	once   sync.Once

	// Owned by the goroutine calling Next.
	started  bool       // a chunk (with Role) has been returned
	gotText  bool       // some answer text, or a function call, has been returned
	calls    int        // function calls returned so far (their delta index)
	respID   string     // the response's id, for the calls' ids
	finished bool       // an event carried a finishReason
	usage    *llm.Usage // the last usageMetadata seen (it is cumulative)
	bad      int        // events that did not parse
	err      error      // sticky: once set, Next returns it
}

var _ llm.Stream = (*stream)(nil)

func newStream(c *Client, model string, resp *http.Response) *stream {
	return &stream{
		c:      c,
		model:  model,
		status: resp.StatusCode,
		header: resp.Header,
		body:   resp.Body,
		rd:     sse.NewReader(resp.Body, maxEventLine),
	}
}

// Header returns the upstream's response header.
func (s *stream) Header() http.Header { return s.header }

// Close releases the connection; a Next blocked in another goroutine
// returns an error.
func (s *stream) Close() error {
	s.once.Do(func() { s.body.Close() })
	return nil
}

// Next returns the next chunk, io.EOF after a clean end, or a
// *failure.UpstreamError: Err failure.ErrStreamCut when the body ended or
// broke before a finishReason or carried an error event; ErrStreamCut and
// ErrMalformed for a second event that does not parse (the first is
// skipped, so one bad event keeps the answer whole); ErrRefused for a blocked
// prompt or answer; ErrEmptyAnswer for a finish with no answer text. After
// an error it returns the same error again.
func (s *stream) Next() (llm.Chunk, error) {
	for s.err == nil {
		ev, err := s.rd.Next()
		if err != nil {
			s.err = s.end(err)
			break
		}
		if ev.Comment || len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		ch, ok, err := s.event(ev.Data)
		if err != nil {
			s.err = err
			break
		}
		if ok {
			return ch, nil
		}
	}
	return llm.Chunk{}, s.err
}

// end returns what Next reports once the body has ended or broken with err.
func (s *stream) end(err error) error {
	if s.finished {
		// The answer is whole; what happens to the connection after that
		// does not matter.
		return io.EOF
	}
	if errors.Is(err, io.EOF) {
		return s.fail(nil, fmt.Errorf("gemini: stream ended without a finish reason: %w", failure.ErrStreamCut))
	}
	return s.fail(nil, fmt.Errorf("gemini: read stream: %w: %w", failure.ErrStreamCut, err))
}

// event translates one event. ok is false for an event with nothing to
// pass on.
func (s *stream) event(data []byte) (ch llm.Chunk, ok bool, err error) {
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		// One event that does not parse in an otherwise good stream is
		// skipped, so that the answer is kept whole; if it was one cut in
		// half at the end of a broken stream (the SSE reader dispatches a
		// last event without its blank line), the body ends next and the
		// stream is reported cut all the same. A second one ends it.
		if s.bad++; s.bad == 1 {
			return ch, false, nil
		}
		return ch, false, s.fail(data, fmt.Errorf("gemini: decode event: second malformed event: %w: %w: %w", failure.ErrStreamCut, failure.ErrMalformed, err))
	}
	if w.Error != nil {
		return ch, false, s.fail(data, fmt.Errorf("gemini: error event (%d %s): %w", w.Error.Code, w.Error.Status, failure.ErrStreamCut))
	}
	if w.UsageMetadata != nil {
		u := w.UsageMetadata.usage()
		s.usage = &u
	}
	if len(w.Candidates) == 0 {
		if err := blocked(&w); err != nil {
			return ch, false, s.fail(data, err)
		}
	} else {
		c := &w.Candidates[0]
		ch.Content, ch.Reasoning = c.text()
		ch.FinishReason = finishReason(c.FinishReason)
		if s.respID == "" {
			s.respID = w.ResponseID
		}
		// A function call comes whole, in one part: it is one delta with
		// its index, id, name and every argument.
		if calls := c.functionCalls(s.respID, s.calls); calls != nil {
			for i := range calls {
				n := s.calls + i
				calls[i].Index = &n
			}
			s.calls += len(calls)
			ch.ToolCalls, _ = json.Marshal(calls)
		}
	}
	if ch.FinishReason == "stop" && s.calls > 0 {
		ch.FinishReason = "tool_calls"
	}
	if ch.Content != "" || ch.ToolCalls != nil {
		s.gotText = true
	}
	if ch.FinishReason != "" && !s.gotText {
		if err := blocked(&w); err != nil {
			return ch, false, s.fail(data, err)
		}
		if ch.FinishReason == "content_filter" {
			return ch, false, s.fail(data, fmt.Errorf("gemini: answer blocked (%s): %w", w.Candidates[0].FinishReason, failure.ErrRefused))
		}
		return ch, false, s.fail(data, fmt.Errorf("gemini: no answer text (finish %q): %w", w.Candidates[0].FinishReason, failure.ErrEmptyAnswer))
	}
	// Usage is cumulative: pass the last one seen, with the finish. An event
	// after the finish that still carries usage passes it again.
	if s.usage != nil && (ch.FinishReason != "" || s.finished && w.UsageMetadata != nil) {
		u := *s.usage
		ch.Usage = &u
	}
	if ch.FinishReason != "" {
		s.finished = true
	}
	if ch.Content == "" && ch.Reasoning == "" && ch.FinishReason == "" && ch.Usage == nil && ch.ToolCalls == nil {
		return ch, false, nil
	}
	if !s.started {
		ch.Role = "assistant"
		s.started = true
	}
	return ch, true, nil
}

// fail builds the stream's UpstreamError; body is the offending event.
func (s *stream) fail(body []byte, err error) error {
	return s.c.fail(s.model, s.status, s.header, capBody(body), err)
}

// Buffered reports the bytes read but not yet parsed (see
// openaicompat.EventStream.Buffered). Call it from the goroutine calling
// Next.
func (s *stream) Buffered() int {
	if s.rd == nil || s.err != nil {
		return 0
	}
	return s.rd.Buffered()
}
