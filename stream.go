package tollfree

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/tollfree/tollfree/cache"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/route"
)

// The bodies of an AnswerStream besides a route's own stream
// (*route.RoutedStream): a route's stream whose answer goes into the cache,
// and a whole answer replayed as a stream (a cache hit, a fallback).
var (
	_ llm.ChunkStream = (*route.RoutedStream)(nil)
	_ llm.ChunkStream = (*storingStream)(nil)
	_ llm.ChunkStream = (*replay)(nil)
)

// storingStream is a route's stream on a chain that caches: the answer is
// stored once it ended cleanly, never a cut one, an error or a fallback.
// Answers with tool calls are not stored: their deltas are not reassembled.
type storingStream struct {
	*route.RoutedStream
	cache *cache.Cache
	key   cache.Key
	ttl   time.Duration
	ctx   context.Context // the request's, without its cancellation

	text, reasoning strings.Builder
	finish          string
	tools, stored   bool
}

func (s *storingStream) Next() (llm.Chunk, error) {
	c, err := s.RoutedStream.Next()
	switch {
	case err == nil:
		s.text.WriteString(c.Content)
		s.reasoning.WriteString(c.Reasoning)
		if c.FinishReason != "" {
			s.finish = c.FinishReason
		}
		if c.ToolCalls != nil {
			s.tools = true
		}
	case err == io.EOF && !s.tools && !s.stored:
		s.stored = true
		finish := s.finish
		if finish == "" {
			finish = "stop"
		}
		u, exact := s.Usage()
		s.cache.Set(s.ctx, s.key, &cache.Entry{Route: s.Route.ID, Content: s.text.String(), Reasoning: s.reasoning.String(),
			FinishReason: finish, Usage: u, UsageKnown: exact}, s.ttl)
	}
	return c, err
}

// replay is a whole answer as a stream: one chunk with all of it, one with
// its finish, then io.EOF.
type replay struct {
	chunks [2]llm.Chunk
	next   int
	usage  llm.Usage
	exact  bool
}

// replayEntry streams a cached answer.
func replayEntry(e *cache.Entry) *replay {
	finish := e.FinishReason
	if finish == "" {
		finish = "stop"
	}
	return &replay{
		chunks: [2]llm.Chunk{
			{Role: "assistant", Content: e.Content, Reasoning: e.Reasoning, ToolCalls: deltaToolCalls(e.ToolCalls)},
			{FinishReason: finish},
		},
		usage: e.Usage, exact: e.UsageKnown,
	}
}

// fallbackStream streams a fallback's text. Its usage is zero: no model
// was called.
func fallbackStream(by ServedBy, text, id string, cacheMiss bool) *AnswerStream {
	r := &replay{chunks: [2]llm.Chunk{{Role: "assistant", Content: text}, {FinishReason: "stop"}}, exact: true}
	return &AnswerStream{ChunkStream: r, ServedBy: by, RequestID: id, CacheMiss: cacheMiss}
}

func (r *replay) Next() (llm.Chunk, error) {
	if r.next >= len(r.chunks) {
		return llm.Chunk{}, io.EOF
	}
	r.next++
	return r.chunks[r.next-1], nil
}

func (r *replay) Buffered() int            { return len(r.chunks) - r.next }
func (r *replay) Usage() (llm.Usage, bool) { return r.usage, r.exact }
func (r *replay) Close() error             { return nil }
