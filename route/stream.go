package route

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
)

// errStalled is the cause an attempt's context is cancelled with when its
// stream went silent for longer than the chain's idle timeout.
var errStalled = errors.New("the stream went silent")

// Stream answers req on the chain ch as a stream. The routes race for the
// first token exactly as Chat races for an answer: failover, hedging and
// rests are the same walk, and each attempt waits for its first token no
// longer than the chain's first-token timeout (seed 003: "time out on the
// first token rather than the whole response"; issue 13: 10 s by default,
// three times that for a thinking route, see firstTokenTimeout): a route
// slower than that is a timeout, and rests. Once a route has sent one, the returned stream belongs to it. A stream
// that then breaks (cut without a finish, silent for longer than the
// chain's idle timeout, an error event) is continued on the next eligible
// route that can continue a partial answer (config.Route.CanContinue), or
// ends with a *BrokenError. The chain's deadline caps the whole stream, its
// continuations included: a stream still running at the deadline ends with
// a *BrokenError of class timeout (issue 10: a token every 0.9 s held a
// stream with a 6 s deadline for 17 s).
//
// An answer that ends with no content and no tool call is empty (the
// failure.Empty outcome: the route rests), never a finished one. Before
// the first token the walk fails over (see firstChunk). Reasoning is a
// first token, so that the first-token timeout measures a thinking model
// by its first thought; a stream that then ends with reasoning only is
// empty after its first token: the request is taken up afresh by the next
// eligible route (any route: there is no answer text to continue), and
// ends with a *BrokenError of class empty when none can.
func (r *Router) Stream(ctx context.Context, ch *config.Chain, id string, req *llm.Request) (*RoutedStream, error) {
	w, err := r.newWalk(ctx, ch, id, req, true)
	if err != nil {
		return nil, err
	}
	win, err := w.run()
	if err != nil {
		return nil, err
	}
	win.timer.Stop()
	s := &RoutedStream{w: w, o: win, Route: win.route, pending: &win.first, tried: map[*config.Route]bool{win.route: true}}
	s.armDeadline()
	return s, nil
}

// BrokenError ends a stream that broke after its first token and that no
// route could continue. The caller has a partial answer and must be told so.
// It names the break itself, never a continuation a route refused.
type BrokenError struct {
	Route   string
	Class   failure.Class
	Message string
	// Parts is how many parts were streamed, continuations included.
	Parts int
	// Deadline reports that the chain's deadline had passed: the stream was
	// cut there, and no continuation was tried.
	Deadline bool
}

func (e *BrokenError) Error() string {
	return fmt.Sprintf("the answer from %s broke off (%s: %s) and no route could continue it", e.Route, e.Class, e.Message)
}

// RoutedStream is a chain's streamed answer, possibly in several parts
// from several routes. Next is for one goroutine at a time; Close may be
// called from any.
type RoutedStream struct {
	w *walk
	// Route is the route that sent the first token.
	Route *config.Route

	// Owned by the goroutine calling Next.
	o       *outcome // the part being streamed
	pending *llm.Chunk
	text    strings.Builder // the answer so far, every part
	parts   int             // parts before the current one
	tried   map[*config.Route]bool
	// answered is set by the first content that is not only whitespace,
	// or tool call, of any part: an answer without one is empty.
	answered bool
	part     partUsage   // the current part
	done     []partUsage // the parts before it

	last atomic.Int64 // when the stream last spoke, unix nanoseconds

	mu         sync.Mutex // guards idle, cancelPart, deadline, expired, closed, ended
	idle       interface{ Stop() bool }
	cancelPart context.CancelCauseFunc  // the current part's
	deadline   interface{ Stop() bool } // fires at the chain's deadline
	expired    bool                     // the chain's deadline has passed
	closed     bool
	ended      bool
}

// partUsage is what one part reported, or how long its text was.
type partUsage struct {
	usage llm.Usage
	known bool
	bytes int // answer and reasoning text streamed
}

// Header returns the response header of the route streaming now.
func (s *RoutedStream) Header() http.Header { return s.o.stream.Header() }

// Buffered reports whether more of the answer is already at hand (a chunk
// held back, or bytes the upstream sent that are not parsed yet), so that
// the next Next will not wait on the network. The HTTP API flushes only
// when it is zero: chunks that arrived together leave together, and
// nothing waits in a buffer while the upstream is silent. Call it from the
// goroutine calling Next.
func (s *RoutedStream) Buffered() int {
	if s.pending != nil {
		return 1
	}
	if b, ok := s.o.stream.(interface{ Buffered() int }); ok {
		return b.Buffered()
	}
	return 0
}

// Parts returns how many parts the answer has had so far: 1, plus one per
// continuation on another route.
func (s *RoutedStream) Parts() int { return s.parts + 1 }

// Next returns the next chunk, io.EOF at the clean end of the answer, or an
// error when the answer broke and could not be continued (a *BrokenError),
// or the caller went away (the context's error).
func (s *RoutedStream) Next() (llm.Chunk, error) {
	if s.pending != nil {
		c := *s.pending
		s.pending = nil
		c = s.track(c)
		s.armIdle()
		return c, nil
	}
	c, err := s.o.stream.Next()
	if err == nil {
		s.armIdle()
		return s.track(c), nil
	}
	s.stopIdle()
	if err == io.EOF {
		if s.answered {
			s.end(true)
			return llm.Chunk{}, io.EOF
		}
		err = &failure.UpstreamError{Status: http.StatusOK, Header: s.o.stream.Header(), Err: failure.ErrEmptyAnswer}
	}
	v := s.judge(err)
	s.o.stream.Close()
	s.o.err = err
	s.w.rests.Put(s.w.settle(s.o, v))
	if s.w.parent.Err() != nil {
		s.end(false)
		return llm.Chunk{}, s.w.parent.Err()
	}
	broken := &BrokenError{Route: s.o.route.ID, Class: v.Class, Message: v.Message, Deadline: s.pastDeadline()}
	first, ok := s.continueOn()
	if !ok {
		broken.Parts = s.parts + 1
		s.end(false)
		if s.w.parent.Err() != nil {
			return llm.Chunk{}, s.w.parent.Err()
		}
		return llm.Chunk{}, broken
	}
	first.Role = ""
	first = s.track(first)
	s.armIdle()
	return first, nil
}

// judge decides what broke a stream that had started: the idle timer
// first, then a caller that went away, then the error itself. A break the
// classifier would call ok, or empty for a malformed event, is a cut, the
// route's fault all the same; an answer that ended with nothing in it is
// empty.
func (s *RoutedStream) judge(err error) failure.Verdict {
	if s.o.ctx.Err() != nil {
		if s.w.parent.Err() != nil {
			return failure.Verdict{Class: failure.Cancelled, Scope: failure.ScopeRequest, Message: "the caller went away"}
		}
		switch context.Cause(s.o.ctx) {
		case errStalled:
			return failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRoute, Message: "the stream went silent for " + s.w.ch.IdleTimeout.String()}
		case errChainDeadline:
			// The route was answering: the chain's time ran out, not the
			// route's, so nothing rests.
			return failure.Verdict{Class: failure.Timeout, Scope: failure.ScopeRequest, Message: "cut by the chain's deadline of " + s.w.ch.Deadline.String()}
		}
	}
	v := failure.Classify(err, s.w.r.clock.Now())
	if v.Class == failure.OK || v.Class == failure.Empty && !errors.Is(err, failure.ErrEmptyAnswer) {
		v.Class, v.Scope = failure.Overloaded, failure.ScopeRoute
	}
	return v
}

// track notes what a chunk adds to the answer and returns it as the caller
// gets it: a finish_reason before any answer (after reasoning alone) is
// held back, since the answer cannot have finished before it started; the
// end of the stream then decides (Next: empty).
func (s *RoutedStream) track(c llm.Chunk) llm.Chunk {
	if !s.answered && (len(c.ToolCalls) > 0 || strings.TrimSpace(c.Content) != "") {
		s.answered = true
	}
	if !s.answered {
		c.FinishReason = ""
	}
	s.text.WriteString(c.Content)
	s.part.bytes += len(c.Content) + len(c.Reasoning)
	if c.Usage != nil {
		s.part.usage, s.part.known = *c.Usage, true
	}
	return c
}

// Usage returns the answer's usage over all its parts: the first part's
// prompt tokens and every part's completion tokens. Where a part reported
// none (a stream cut before its usage, an upstream that sends none), its
// tokens are estimated; exact is true only when every part reported.
func (s *RoutedStream) Usage() (u llm.Usage, exact bool) {
	exact = true
	for i, p := range append(append([]partUsage(nil), s.done...), s.part) {
		if !p.known {
			exact = false
			if i == 0 {
				u.PromptTokens = s.w.est
			}
			u.CompletionTokens += (p.bytes + 3) / 4
			continue
		}
		if i == 0 {
			u.PromptTokens = p.usage.PromptTokens
			u.CachedTokens = p.usage.CachedTokens
		}
		u.CompletionTokens += p.usage.CompletionTokens
		u.ReasoningTokens += p.usage.ReasoningTokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u, exact
}

// armIdle notes that the stream just spoke. One timer per stream checks,
// when it fires, how long the stream has been silent, and either breaks it
// (silent longer than the chain's idle timeout) or waits for the rest: a
// chunk costs a clock read, not a timer.
func (s *RoutedStream) armIdle() {
	d := s.w.ch.IdleTimeout
	if d <= 0 {
		return
	}
	s.last.Store(s.w.r.clock.Now().UnixNano())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle == nil && !s.closed {
		s.idle = s.w.r.clock.AfterFunc(d, s.idleCheck)
	}
}

// idleCheck runs when the idle timer fires.
func (s *RoutedStream) idleCheck() {
	d := s.w.ch.IdleTimeout
	silent := time.Duration(s.w.r.clock.Now().UnixNano() - s.last.Load())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle == nil {
		return // stopped meanwhile
	}
	if silent >= d {
		s.idle = nil
		s.cancelPart(errStalled)
		return
	}
	s.idle = s.w.r.clock.AfterFunc(d-silent, s.idleCheck)
}

func (s *RoutedStream) stopIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
}

// armDeadline starts the timer that ends the stream at the chain's
// deadline, and records the first part as the one it cancels.
func (s *RoutedStream) armDeadline() {
	s.setPart(s.o.cancel)
	left := s.w.deadline.Sub(s.w.r.clock.Now())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadline = s.w.r.clock.AfterFunc(left, s.deadlineHit)
}

// deadlineHit runs when the chain's deadline passes: the part streaming
// now is cancelled, and Next reports the break.
func (s *RoutedStream) deadlineHit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expired = true
	if s.deadline == nil {
		return // stopped meanwhile
	}
	s.deadline = nil
	s.cancelPart(errChainDeadline)
}

// setPart records cancel as the current part's, for the idle and deadline
// timers; a part that starts after the deadline is cancelled at once.
func (s *RoutedStream) setPart(cancel context.CancelCauseFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelPart = cancel
	if s.expired {
		cancel(errChainDeadline)
	}
}

// pastDeadline reports whether the chain's deadline has passed.
func (s *RoutedStream) pastDeadline() bool {
	s.mu.Lock()
	expired := s.expired
	s.mu.Unlock()
	return expired || !s.w.r.clock.Now().Before(s.w.deadline)
}

func (s *RoutedStream) stopDeadline() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deadline != nil {
		s.deadline.Stop()
		s.deadline = nil
	}
}

// continueOn asks the next eligible route that can continue a partial
// answer to finish it: the conversation with the answer so far as a
// trailing assistant message marked Prefix. Before any answer text (only
// reasoning, or blanks, came) there is nothing to continue: any eligible
// route not tried yet answers the request afresh. Routes are picked as the
// walk picks them (pick), hedging aside. It returns the first chunk of the
// route that took over. A route that refuses or fails is settled like any
// attempt and the next one is tried; none of their errors reaches the
// caller.
func (s *RoutedStream) continueOn() (llm.Chunk, bool) {
	w := s.w
	req, est := s.continuation()
	for _, rt := range w.order {
		if s.pastDeadline() {
			return llm.Chunk{}, false
		}
		if s.tried[rt] || s.answered && !rt.CanContinue {
			continue
		}
		t, _, why := w.pick(rt, req, est, false)
		if why != picked {
			continue
		}
		s.tried[rt] = true
		if first, ok := s.takeOver(t); ok {
			return first, true
		}
		if w.parent.Err() != nil {
			return llm.Chunk{}, false
		}
	}
	return llm.Chunk{}, false
}

// continuation is the request a continuation sends, and its estimate: the
// conversation with the answer so far as a trailing assistant message
// marked Prefix, or, before any answer text, the request itself.
func (s *RoutedStream) continuation() (*llm.Request, int) {
	w := s.w
	if !s.answered {
		return w.req, w.est
	}
	cont := *w.req
	cont.Messages = append(append([]llm.Message(nil), w.req.Messages...), llm.Message{Role: "assistant", Content: s.text.String(), Prefix: true})
	return &cont, quota.Estimate(&cont)
}

// takeOver launches the continuation t and waits for its first chunk: on
// one, the stream's next part is t's. A failure is settled like any
// attempt's, and ok is false. The continuation waits for its first chunk
// as long as a first attempt waits for its first token (firstTokenTimeout),
// clipped to what is left of the chain's deadline (open).
func (s *RoutedStream) takeOver(t ticket) (first llm.Chunk, ok bool) {
	w := s.w
	w.results = make(chan *outcome, 1)
	w.launch(t, false)
	o := <-w.results
	delete(w.inflight, t.route)
	o.part = s.parts + 1
	if o.err != nil {
		w.rests.Put(w.settle(o, w.judge(o)))
		return llm.Chunk{}, false
	}
	o.timer.Stop()
	s.parts++
	s.done = append(s.done, s.part)
	s.part = partUsage{}
	s.o = o
	s.setPart(o.cancel)
	return o.first, true
}

// end records the last part once: as the answer when ok, and releases its
// context.
func (s *RoutedStream) end(ok bool) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.mu.Unlock()
	s.stopDeadline()
	if ok {
		s.w.r.finishOK(s.w, s.o, s.part.usage, s.part.known, s.o.stream.Header(), s.o.start)
	}
	s.o.cancel(context.Canceled)
}

// Close releases the stream. A stream closed before its end (the caller
// went away) is recorded as cancelled. It is safe to call more than once.
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
	s.stopDeadline()
	if !ended {
		s.o.cancel(context.Canceled)
		s.o.stream.Close()
		s.o.err = context.Canceled
		s.end(false)
		s.w.settle(s.o, failure.Verdict{Class: failure.Cancelled, Scope: failure.ScopeRequest, Message: "the caller went away"})
	}
	return nil
}
