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
// chain's idle timeout, an error event) cannot be taken back: it is
// continued on the next eligible route by the best method that route
// supports (continue.go: a prefix continuation where the provider honours
// one, else an instruct continuation; on by default, config.Route
// Continuation), its start held back until it can be joined to what was
// sent (join.go: a repeated tail trimmed, a restart followed past what it
// reproduces, or abandoned for the next method or route). When no route
// can continue it, it ends with a *BrokenError. The chain's deadline caps
// the whole stream, its continuations included: a stream still running at
// the deadline ends with a *BrokenError of class timeout (issue 10: a token
// every 0.9 s held a stream with a 6 s deadline for 17 s).
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
	s := &RoutedStream{w: w, o: win, Route: win.route, pending: &win.first, tried: map[*config.Route]methodSet{win.route: allMethods}}
	// One allocation for a short answer's text, where growing it chunk by
	// chunk took five (issue 18 item 3).
	s.text.Grow(textStart)
	s.armDeadline()
	return s, nil
}

// textStart is the room made for an answer's text when it starts.
const textStart = 512

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
	text    strings.Builder // the answer so far, every part, as the caller got it
	parts   int             // parts before the current one
	tried   map[*config.Route]methodSet
	// join judges the start of a continuation (join.go); nil when the
	// current part is the first, or its start has been judged.
	join *joiner
	// eof: the current part ended cleanly while its last text was held,
	// and that text was handed on; the next read is the end.
	eof bool
	// broken is the last break of the answer: what the caller is told
	// when no route can continue it.
	broken *BrokenError
	// answered is set by the first content that is not only whitespace,
	// or tool call, of any part: an answer without one is empty.
	answered bool
	// tools is set by a tool call of any part: an answer whose tool calls
	// went out cannot be continued as text.
	tools bool
	part  partUsage   // the current part
	done  []partUsage // the parts before it

	last atomic.Int64 // when the stream last spoke, unix nanoseconds
	// idleOn mirrors idle != nil, so that a chunk finds the timer armed
	// without taking mu.
	idleOn atomic.Bool

	mu         sync.Mutex // guards idle, cancelPart, deadline, expired, closed, ended
	idle       interface{ Stop() bool }
	cancelPart context.CancelCauseFunc  // the current part's
	deadline   interface{ Stop() bool } // fires at the chain's deadline
	expired    bool                     // the chain's deadline has passed
	closed     bool
	ended      bool
}

// partSpend is what one part of an answer cost: its tokens as its route
// reported them, or estimated (known false).
type partSpend struct {
	in, out int
	known   bool
}

// spent is what the current part cost: its reported usage, or an
// estimate from what it was asked and the text it streamed.
func (s *RoutedStream) spent() *partSpend {
	if s.part.known {
		return &partSpend{in: s.part.usage.PromptTokens, out: s.part.usage.CompletionTokens, known: true}
	}
	in := s.w.est
	if s.o.req != nil && s.o.req != s.w.req {
		in = quota.Estimate(s.o.req) // a continuation: the answer so far is in its prompt
	}
	return &partSpend{in: in, out: (s.part.bytes + 3) / 4}
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

// WrittenBy is the id of the route whose part the stream reads now: the
// first route's until the answer is continued, then the continuing
// route's; after the end, the route that finished the answer. It is for
// the goroutine that calls Next.
func (s *RoutedStream) WrittenBy() string { return s.o.route.ID }

// errRestarted is the cause a continuation is abandoned with: it started
// the answer over (or repeated it), and could not be joined to it.
var errRestarted = errors.New("started the answer over instead of continuing it")

// Next returns the next chunk, io.EOF at the clean end of the answer, or an
// error when the answer broke and could not be continued (a *BrokenError),
// or the caller went away (the context's error).
func (s *RoutedStream) Next() (llm.Chunk, error) {
	for {
		c, err := s.read()
		if err == nil {
			var emit, ok bool
			if c, emit, ok = s.joined(c); ok && emit {
				return s.track(c), nil
			} else if ok {
				continue
			}
			err = errRestarted
		}
		if err == io.EOF && s.join != nil {
			// The part ended while its last text was held: judge it now.
			out, ok := s.join.end()
			s.join = nil
			if !ok {
				err = errRestarted
			} else if out != "" {
				s.eof = true
				return s.track(llm.Chunk{Content: out}), nil
			}
		}
		if err == io.EOF && s.answered {
			s.stopIdle()
			s.end(true)
			return llm.Chunk{}, io.EOF
		}
		if err := s.broke(err); err != nil {
			return llm.Chunk{}, err
		}
	}
}

// read returns the current part's next chunk as it came: the first one,
// held since its route took over, or the upstream's next.
func (s *RoutedStream) read() (llm.Chunk, error) {
	if s.pending != nil {
		c := *s.pending
		s.pending = nil
		s.part.bytes += len(c.Content) + len(c.Reasoning)
		s.armIdle()
		return c, nil
	}
	if s.eof {
		return llm.Chunk{}, io.EOF
	}
	c, err := s.o.stream.Next()
	if err == nil {
		s.part.bytes += len(c.Content) + len(c.Reasoning)
		s.armIdle()
	}
	return c, err
}

// joined passes the content of a continuation's chunk through its joiner:
// c as the caller gets it, whether it carries anything (emit), and ok false
// when the continuation cannot be joined. A finish ends the judging.
func (s *RoutedStream) joined(c llm.Chunk) (llm.Chunk, bool, bool) {
	j := s.join
	if j == nil {
		return c, true, true
	}
	out, ok := j.feed(c.Content)
	if ok && c.FinishReason != "" {
		var rest string
		rest, ok = j.end()
		out += rest
	}
	if !ok {
		return c, false, false
	}
	if j.state == joinPassing {
		s.join = nil
	}
	c.Content = out
	return c, out != "" || c.Reasoning != "" || len(c.ToolCalls) > 0 || c.FinishReason != "" || c.Usage != nil, true
}

// broke ends the current part, which err broke (or which could not be
// joined: errRestarted), and has the next route continue the answer: its
// first chunk is then pending, and broke returns nil. It returns the
// stream's error when none can: the last real break (a *BrokenError), or
// the caller's leaving.
func (s *RoutedStream) broke(err error) error {
	s.stopIdle()
	if err == io.EOF {
		err = &failure.UpstreamError{Status: http.StatusOK, Header: s.o.stream.Header(), Err: failure.ErrEmptyAnswer}
	}
	restarted := errors.Is(err, errRestarted)
	var v failure.Verdict
	if restarted {
		// The method failed on this answer, not the route for everyone:
		// "unsupported here", as a field this route does not take. Its
		// other method may still be tried.
		v = failure.Verdict{Class: failure.Unsupported, Scope: failure.ScopeRequest, Message: errRestarted.Error()}
		err = &failure.UpstreamError{Status: http.StatusOK, Header: s.o.stream.Header(), Err: errRestarted}
		s.tried[s.o.route] |= 1 << methodOf(s.o)
	} else {
		v = s.judge(err)
		s.tried[s.o.route] = allMethods
	}
	s.o.stream.Close()
	s.o.err = err
	s.o.spent = s.spent()
	s.w.rests.Put(s.w.settle(s.o, v))
	if s.w.parent.Err() != nil {
		s.end(false)
		return s.w.parent.Err()
	}
	s.o.cancel(context.Canceled) // the part is over; end releases the last one
	if !restarted || s.broken == nil {
		s.broken = &BrokenError{Route: s.o.route.ID, Class: v.Class, Message: v.Message, Deadline: s.pastDeadline()}
	}
	s.join, s.eof = nil, false
	first, ok := s.continueOn()
	if !ok {
		s.broken.Parts = s.parts + 1
		s.end(false)
		if s.w.parent.Err() != nil {
			return s.w.parent.Err()
		}
		return s.broken
	}
	first.Role = ""
	s.pending = &first
	return nil
}

// methodOf is the method the part o continues the answer by.
func methodOf(o *outcome) method {
	switch o.method {
	case "prefix":
		return methodPrefix
	case "instruct":
		return methodInstruct
	}
	return methodFresh
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
	s.tools = s.tools || len(c.ToolCalls) > 0
	if !s.answered {
		c.FinishReason = ""
	}
	s.text.WriteString(c.Content)
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
	if s.idleOn.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle == nil && !s.closed {
		s.idle = s.w.r.clock.AfterFunc(d, s.idleCheck)
		s.idleOn.Store(true)
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
		s.idleOn.Store(false)
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
		s.idleOn.Store(false)
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
		u := s.part.usage
		if !s.part.known {
			sp := s.spent()
			s.o.spent = sp
			u = llm.Usage{PromptTokens: sp.in, CompletionTokens: sp.out, TotalTokens: sp.in + sp.out}
		}
		s.w.r.finishOK(s.w, s.o, u, s.part.known, s.o.stream.Header(), s.o.start)
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
		s.o.spent = s.spent()
		s.end(false)
		s.w.settle(s.o, failure.Verdict{Class: failure.Cancelled, Scope: failure.ScopeRequest, Message: "the caller went away"})
	}
	return nil
}
