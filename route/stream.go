package route

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/quota"
)

var errStalled = errors.New("the stream went silent")

// Stream answers req on the chain as a stream. The routes race for the
// first token (the attempt timeout is a first-token timeout); once a route
// has sent one, the returned stream belongs to it. A stream that breaks
// after that is continued on the next route that can continue a partial
// answer, or ends with a *BrokenError.
func (r *Router) Stream(ctx context.Context, chain, id string, req *llm.Request) (*RoutedStream, error) {
	w, err := r.newWalk(ctx, chain, id, req, true)
	if err != nil {
		return nil, err
	}
	win, err := w.run()
	if err != nil {
		return nil, err
	}
	win.timer.Stop()
	s := &RoutedStream{w: w, o: win, Route: win.route, pending: &win.first}
	return s, nil
}

// BrokenError ends a stream that broke after its first token and that no
// route could continue. The caller has a partial answer and must be told so.
type BrokenError struct {
	Route   string
	Class   failure.Class
	Message string
}

func (e *BrokenError) Error() string {
	return fmt.Sprintf("the answer from %s broke off (%s) and no route could continue it: %s", e.Route, e.Class, e.Message)
}

// RoutedStream is a chain's streamed answer. Next and Close may be called
// from different goroutines; Next from one at a time.
type RoutedStream struct {
	w *walk
	// Route is the route that sent the first token.
	Route *config.Route

	o       *outcome
	pending *llm.Chunk
	text    strings.Builder
	usage   llm.Usage
	known   bool
	parts   int

	mu     sync.Mutex // guards idle, closed, ended
	idle   interface{ Stop() bool }
	closed bool
	ended  bool
}

// Header returns the first route's response header.
func (s *RoutedStream) Header() http.Header { return s.o.stream.Header() }

// Next returns the next chunk, io.EOF at the clean end of the answer, or an
// error when the answer broke and could not be continued.
func (s *RoutedStream) Next() (llm.Chunk, error) {
	if s.pending != nil {
		c := *s.pending
		s.pending = nil
		s.track(c)
		s.armIdle()
		return c, nil
	}
	for {
		c, err := s.o.stream.Next()
		if err == nil {
			s.armIdle()
			s.track(c)
			return c, nil
		}
		s.stopIdle()
		if err == io.EOF {
			s.end(true)
			return llm.Chunk{}, io.EOF
		}
		v := s.judge(err)
		s.o.stream.Close()
		s.o.err = err
		s.w.settle(s.o, v)
		if s.w.parent.Err() != nil {
			s.end(false)
			return llm.Chunk{}, s.w.parent.Err()
		}
		first, ok := s.continueOn()
		if !ok {
			s.end(false)
			return llm.Chunk{}, &BrokenError{Route: s.o.route.ID, Class: v.Class, Message: v.Message}
		}
		first.Role = ""
		s.track(first)
		s.armIdle()
		return first, nil
	}
}

func (s *RoutedStream) judge(err error) failure.Verdict {
	if s.o.ctx.Err() != nil {
		switch context.Cause(s.o.ctx) {
		case errStalled:
			return failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRoute, Message: "the stream went silent for " + s.w.ch.IdleTimeout.String()}
		}
		if s.w.parent.Err() != nil {
			return failure.Verdict{Class: failure.Cancelled, Scope: failure.ScopeRequest, Message: "the caller went away"}
		}
	}
	v := failure.Classify(err, s.w.r.clock.Now())
	if v.Class == failure.OK || v.Class == failure.Empty {
		v.Class, v.Scope = failure.Overloaded, failure.ScopeRoute
	}
	return v
}

func (s *RoutedStream) track(c llm.Chunk) {
	s.text.WriteString(c.Content)
	if c.Usage != nil {
		if s.parts == 0 {
			s.usage.PromptTokens = c.Usage.PromptTokens
		}
		s.usage.CompletionTokens += c.Usage.CompletionTokens
		s.usage.ReasoningTokens += c.Usage.ReasoningTokens
		s.usage.TotalTokens = s.usage.PromptTokens + s.usage.CompletionTokens
		s.known = true
	}
}

// Usage returns the usage reported so far, summed over the parts.
func (s *RoutedStream) Usage() (llm.Usage, bool) { return s.usage, s.known }

// armIdle (re)starts the idle timer: a stream silent longer than the chain's
// idle timeout is broken.
func (s *RoutedStream) armIdle() {
	d := s.w.ch.IdleTimeout
	if d <= 0 {
		return
	}
	cancel := s.o.cancel
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle != nil {
		s.idle.Stop()
	}
	s.idle = s.w.r.clock.AfterFunc(d, func() { cancel(errStalled) })
}

func (s *RoutedStream) stopIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
}

// continueOn asks the next route that can continue a partial answer to
// finish it. It returns that route's first chunk.
func (s *RoutedStream) continueOn() (llm.Chunk, bool) {
	w := s.w
	partial := s.text.String()
	req := *w.req
	req.Messages = append(append([]llm.Message(nil), w.req.Messages...), llm.Message{Role: "assistant", Content: partial, Prefix: true})
	for _, rt := range w.order {
		if !rt.CanContinue || rt == s.o.route {
			continue
		}
		if _, skip := w.ineligible(rt); skip {
			continue
		}
		var res *quota.Reservation
		if w.r.budget != nil {
			var err error
			res, err = w.reserve(rt, &req)
			if err != nil {
				continue
			}
		}
		s.parts++
		w.results = make(chan *outcome, 1)
		w.launch(rt, &req, "", res, false)
		o := <-w.results
		delete(w.inflight, rt)
		o.part = s.parts
		if o.err != nil {
			w.settle(o, w.judge(o))
			if w.parent.Err() != nil {
				return llm.Chunk{}, false
			}
			continue
		}
		o.timer.Stop()
		s.o = o
		return o.first, true
	}
	return llm.Chunk{}, false
}

// end records the last part once.
func (s *RoutedStream) end(ok bool) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.mu.Unlock()
	if ok {
		s.w.r.finishOK(s.w, s.o, s.usage, s.known, s.o.stream.Header(), s.o.start)
	}
	s.o.cancel(context.Canceled)
}

// Close releases the stream. A stream closed before its end (the caller
// went away) is recorded as cancelled.
func (s *RoutedStream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ended := s.ended
	s.mu.Unlock()
	s.stopIdle()
	if !ended {
		s.o.cancel(context.Canceled)
		s.o.stream.Close()
		s.o.err = context.Canceled
		s.end(false)
		s.w.settle(s.o, failure.Verdict{Class: failure.Cancelled, Scope: failure.ScopeRequest, Message: "the caller went away"})
	}
	return nil
}

var _ = provider.Call{}
