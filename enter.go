package tollfree

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/llm"
)

// This file ends a request's caller-check turn (package caller's Check)
// when its answer ends: spent says what the answer cost the caller's
// tokens, and endingStream ends the turn when a stream ends, however it
// ends.

// spent is what an answer cost the caller's tokens per day: a route's
// usage (the estimate stands when the route reported none), nothing for an
// answer that called no model (the cache, a call shared with an identical
// request, a fallback).
func spent(by ServedBy, u Usage, known bool) (int, bool) {
	if by != ServedByRoute {
		return 0, true
	}
	return u.TotalTokens, known
}

// endingStream ends the request's turn when its stream ends: at its clean
// end, when it breaks, or when it is closed before either (the caller went
// away). The concurrency slot is never held past the stream. A route's
// stream is told to the observer once, when it ends: answered, failed (it
// broke and no route continued it), or cancelled.
type endingStream struct {
	llm.ChunkStream
	turn *caller.Turn
	by   ServedBy
	// For a route's stream: who hears how it ended, and when it began.
	obs   *observability
	chain string
	start time.Time
	clock interface{ Now() time.Time }
	told  atomic.Bool
}

var _ llm.ChunkStream = (*endingStream)(nil)

func (s *endingStream) Next() (llm.Chunk, error) {
	c, err := s.ChunkStream.Next()
	switch {
	case err == io.EOF:
		// The stream's usage counts what was streamed where the route
		// reported nothing: closer than the estimate made before.
		u, _ := s.ChunkStream.Usage()
		s.turn.End(spent(s.by, u, true))
		s.tell(outcomeAnswered)
	case err != nil:
		s.turn.End(0, false)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			s.tell(outcomeCancelled)
		} else {
			s.tell(outcomeFailed)
		}
	}
	return c, err
}

// tell tells the observer how a route's stream ended, once.
func (s *endingStream) tell(outcome string) {
	if s.obs == nil || s.told.Swap(true) {
		return
	}
	s.obs.Request(s.chain, outcome, s.clock.Now().Sub(s.start))
}

// Close ends the turn (the estimate stands if the stream did not end) and
// closes the stream.
func (s *endingStream) Close() error {
	s.turn.End(0, false)
	s.tell(outcomeCancelled)
	return s.ChunkStream.Close()
}
