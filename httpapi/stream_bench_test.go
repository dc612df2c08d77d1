package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
)

// flushEach is a ChunkStream of n word chunks, each flushed on its own (as
// when an upstream sends one at a time), then a finish.
type flushEach struct{ n int }

func (s *flushEach) Next() (llm.Chunk, error) {
	switch {
	case s.n > 0:
		s.n--
		return llm.Chunk{Content: "word "}, nil
	case s.n == 0:
		s.n--
		return llm.Chunk{FinishReason: "stop"}, nil
	}
	return llm.Chunk{}, io.EOF
}
func (s *flushEach) Buffered() int            { return 0 }
func (s *flushEach) Usage() (llm.Usage, bool) { return llm.Usage{}, false }
func (s *flushEach) Close() error             { return nil }

// BenchmarkStreamWrite measures what the HTTP API spends on a streamed
// answer of 400 chunks, each flushed, with the keep-alives on (issue 13:
// a lock and a clock read per chunk) and off; the Gateway and the network
// are left out.
//
//	go test -run '^$' -bench BenchmarkStreamWrite ./httpapi
func BenchmarkStreamWrite(b *testing.B) {
	for _, bb := range []struct {
		name      string
		keepAlive time.Duration
	}{{"keepalive-off", 0}, {"keepalive-on", 10 * time.Second}} {
		b.Run(bb.name, func(b *testing.B) {
			plan := testPlan()
			plan.Server.StreamKeepAlive = bb.keepAlive
			gw := &streamingGateway{}
			srv := New(Options{Plan: plan, Gateway: gw, Clock: clock.Real{}})
			body := streamBody("answer", false)
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatalf("status %d", w.Code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/401, "ns/chunk")
		})
	}
}

// streamingGateway streams 400 chunks for every call.
type streamingGateway struct{ fakeGateway }

func (g *streamingGateway) ServeStream(_ context.Context, _ *config.Chain, c llm.Call) (*llm.AnswerStream, error) {
	return &llm.AnswerStream{ChunkStream: &flushEach{n: 400}, ServedBy: llm.ServedByRoute, Route: "up/m1", RequestID: c.ID}, nil
}
