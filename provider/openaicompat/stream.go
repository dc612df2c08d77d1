package openaicompat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/sse"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/openai"
)

// EventStream is a streamed answer being read; Client.Stream returns one
// as an llm.Stream. Next and Header belong to one goroutine; Close and
// Stats may be called from any.
type EventStream struct {
	c     *Client
	model string
	resp  *http.Response

	closeOnce sync.Once
	closeErr  error

	keepAlives atomic.Int64
	malformed  atomic.Int64

	// Owned by the goroutine calling Next.
	rd        *sse.Reader  // nil once the stream has ended
	queue     []llm.Chunk  // chunks to return before reading on
	tail      [1]llm.Chunk // queue's array: end queues one chunk at most
	lastUsage llm.Usage    // what the last chunk's Usage points to
	err       error        // the terminal result, returned once queue is empty
	think     openai.ThinkFilter
	finished  bool // a finish_reason was seen
	usage     llm.Usage
	usageSeen bool
}

var _ llm.Stream = (*EventStream)(nil)

// StreamStats counts what a stream skipped.
type StreamStats struct {
	// KeepAlives is the number of comment lines (": OPENROUTER PROCESSING").
	KeepAlives int64
	// Malformed is the number of events that did not parse (at most one
	// is skipped; the second ends the stream).
	Malformed int64
}

// Stats returns the stream's counts so far. It is safe to call from any
// goroutine.
func (s *EventStream) Stats() StreamStats {
	return StreamStats{KeepAlives: s.keepAlives.Load(), Malformed: s.malformed.Load()}
}

// Header returns the upstream's response header.
func (s *EventStream) Header() http.Header { return s.resp.Header }

// Close closes the response body, which also ends a Next blocked in
// another goroutine. It is safe to call more than once and concurrently.
func (s *EventStream) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.resp.Body.Close() })
	return s.closeErr
}

// Next returns the next chunk of the answer. It skips comments and
// keep-alives, empty deltas and one malformed event; it moves <think>
// blocks in the content to Reasoning. Usage is taken off the chunks that
// carry it and delivered once, on a last chunk of its own (Usage set,
// nothing else), holding the last usage the upstream sent: upstreams that
// repeat cumulative usage on every chunk are counted once.
//
// Next returns io.EOF after "data: [DONE]", as soon as both a finish_reason
// and the usage have come (in either order, on one chunk or two), or when
// the stream ends (or breaks) after a finish_reason. Otherwise it returns a
// *failure.UpstreamError with the response's status and header:
//   - an error event (OpenRouter's mid-stream error, vLLM's object:error):
//     Err wraps failure.ErrStreamCut and the *openai.ChunkError, Body is the
//     event's data;
//   - the stream ending or breaking before a finish_reason and [DONE] (a
//     cut, a closed body, ctx ending): Err wraps failure.ErrStreamCut and
//     the read error, if any (context.DeadlineExceeded for a stall);
//   - a second malformed event, or a line over 4 MiB: Err wraps
//     failure.ErrMalformed, Body is the event's data.
//
// After an error or io.EOF, Next returns the same again.
func (s *EventStream) Next() (llm.Chunk, error) {
	for {
		if len(s.queue) > 0 {
			c := s.queue[0]
			s.queue = s.queue[1:]
			return c, nil
		}
		if s.err != nil {
			return llm.Chunk{}, s.err
		}
		ev, err := s.rd.Next()
		if err != nil {
			s.readFailed(err)
			continue
		}
		if ev.Comment {
			s.keepAlives.Add(1)
			continue
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		if string(data) == "[DONE]" {
			s.end()
			continue
		}
		c, ce, err := openai.DecodeChunk(data)
		switch {
		case err != nil:
			if s.malformed.Add(1) > 1 {
				s.fail(data, fmt.Errorf("read stream: second malformed event: %w", err))
			}
			continue
		case ce != nil:
			s.fail(data, fmt.Errorf("read stream: %w: %w", failure.ErrStreamCut, ce))
			continue
		case ev.Name == "error":
			s.fail(data, fmt.Errorf("read stream: error event: %w", failure.ErrStreamCut))
			continue
		}
		if c.Usage != nil {
			s.usage, s.usageSeen = *c.Usage, true
			c.Usage = nil
		}
		if c.Content != "" {
			var r string
			c.Content, r = s.think.Push(c.Content)
			c.Reasoning += r
		}
		if c.FinishReason != "" {
			s.finished = true
			fc, fr := s.think.Flush()
			c.Content += fc
			c.Reasoning += fr
		}
		if s.finished && s.usageSeen {
			// The answer and its usage are in: nothing the caller needs
			// comes after them, so the stream ends here rather than wait
			// for a [DONE] an upstream may never send, on a connection it
			// may keep open.
			s.end()
		}
		if c.Role == "" && c.Content == "" && c.Reasoning == "" && c.ToolCalls == nil && c.FinishReason == "" {
			continue // a usage-only chunk, or an empty delta
		}
		return c, nil
	}
}

// readFailed ends the stream after the reader's error.
func (s *EventStream) readFailed(err error) {
	switch {
	case s.finished:
		// The answer is complete; a missing [DONE] or a connection
		// dropped after the finish_reason loses nothing.
		s.end()
	case err == io.EOF:
		s.fail(nil, fmt.Errorf("read stream: no finish_reason and no [DONE]: %w", failure.ErrStreamCut))
	case errors.Is(err, sse.ErrLineTooLong):
		s.fail(nil, fmt.Errorf("read stream: %w: %w", failure.ErrMalformed, err))
	default:
		s.fail(nil, fmt.Errorf("read stream: %w: %w", failure.ErrStreamCut, err))
	}
}

// end finishes the stream cleanly: what the think filter holds and the
// usage go out on a last chunk, then io.EOF.
func (s *EventStream) end() {
	var last llm.Chunk
	last.Content, last.Reasoning = s.think.Flush()
	if s.usageSeen {
		s.lastUsage = s.usage
		last.Usage = &s.lastUsage
	}
	if last.Content != "" || last.Reasoning != "" || last.Usage != nil {
		if len(s.queue) == 0 {
			s.queue = s.tail[:0] // the stream's own array, not a new one
		}
		s.queue = append(s.queue, last)
	}
	s.stop(io.EOF)
}

// fail ends the stream with an UpstreamError; data is the offending event.
func (s *EventStream) fail(data []byte, err error) {
	s.stop(s.c.fail(s.model, s.resp.StatusCode, s.resp.Header, data, err))
}

// stop records the terminal result and returns the reader to the pool.
func (s *EventStream) stop(err error) {
	s.err = err
	if s.rd != nil {
		s.rd.Reset(nil)
		s.c.readers.Put(s.rd)
		s.rd = nil
	}
}

// Buffered reports how much of the answer is already here: chunks queued,
// bytes read but not yet parsed, and the clean end once it has been read
// (then Next returns io.EOF without a read). A writer uses it to flush only
// when the next Next would wait on the network: the last chunks of an
// answer and its end leave in one write. Call it from the goroutine calling
// Next.
func (s *EventStream) Buffered() int {
	n := len(s.queue)
	if s.rd != nil {
		n += s.rd.Buffered()
	} else if s.err == io.EOF {
		n++
	}
	return n
}
