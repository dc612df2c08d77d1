package httpapi

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/route"
)

// heldGateway is a fakeGateway whose ServeStream answers only once the
// test closes release: a request still working on its first token. It
// says on entered that it was called.
type heldGateway struct {
	fakeGateway
	release chan struct{}
	entered chan struct{} // buffered
}

func newHeldGateway(f fakeGateway) *heldGateway {
	return &heldGateway{fakeGateway: f, release: make(chan struct{}), entered: make(chan struct{}, 1)}
}

func (g *heldGateway) ServeStream(ctx context.Context, ch *config.Chain, c llm.Call) (*llm.AnswerStream, error) {
	g.entered <- struct{}{}
	<-g.release
	return g.fakeGateway.ServeStream(ctx, ch, c)
}

// syncBuffer is a log's output, written by the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestKeepAliveThenAnswer (issue 13): once a keep-alive has written a
// stream's status, whatever the Gateway then answers goes out inside the
// stream: an error as one OpenAI-style error event (its code and message
// as a status would have had them) and a clean end, an answer as its
// events and [DONE]. The status is written once: the server logs no
// second WriteHeader.
func TestKeepAliveThenAnswer(t *testing.T) {
	stream := &llm.AnswerStream{ServedBy: llm.ServedByRoute, Route: "up/m1",
		ChunkStream: &chunks{c: []llm.Chunk{{Role: "assistant", Content: "Hello"}, {FinishReason: "stop"}}}}
	tests := []struct {
		name      string
		gw        fakeGateway
		wantData  []string // in the one data event, or in the stream
		wantDone  bool
		wantError bool
	}{
		{"no route", fakeGateway{err: &route.ExhaustedError{Chain: "answer", RetryAt: t0.Add(40 * time.Second)}},
			[]string{`"code":"no_route_available"`, `"type":"server_error"`, "no route of chain"}, false, true},
		{"the caller's limit", fakeGateway{err: &quota.LimitError{Scope: quota.ScopeCaller, Kind: quota.KindHour, Limit: 10, Window: time.Hour, RetryAt: t0.Add(90 * time.Second)}},
			[]string{`"code":"caller_limit"`, `"type":"rate_limit_error"`, "made 10 requests in the last hour"}, false, true},
		{"the caller's bad request", fakeGateway{err: &route.CallerError{Route: "up/m1", Class: failure.BadRequest, Status: 400, Message: "temperature must be at most 2"}},
			[]string{`"code":"bad_request"`, "temperature must be at most 2"}, false, true},
		{"an answer", fakeGateway{stream: stream}, []string{`"content":"Hello"`, `"finish_reason":"stop"`}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := testPlan()
			plan.Server.StreamKeepAlive = 10 * time.Second
			clk := clock.NewFake(t0)
			gw := newHeldGateway(tt.gw)
			var logged syncBuffer
			srv := httptest.NewUnstartedServer(New(Options{Plan: plan, Gateway: gw, Clock: clk}))
			srv.Config.ErrorLog = log.New(&logged, "", 0)
			srv.Start()
			defer srv.Close()
			got := make(chan reply, 1)
			go func() {
				resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(streamBody("answer", false)))
				if err != nil {
					got <- reply{readErr: err}
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				got <- reply{status: resp.StatusCode, header: resp.Header, body: b, readErr: err}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := clk.BlockUntilDeadline(ctx, t0.Add(10*time.Second)); err != nil {
				t.Fatalf("no keep-alive is due at 10s: %v", err)
			}
			clk.Set(t0.Add(10 * time.Second))
			// The keep-alive's write; the next is due 10s later.
			if err := clk.BlockUntilDeadline(ctx, t0.Add(20*time.Second)); err != nil {
				t.Fatalf("no second keep-alive is due: %v", err)
			}
			close(gw.release)
			r := <-got
			if r.readErr != nil || r.status != 200 || r.header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
				t.Fatalf("status %d, Content-Type %q, read %v; want a whole event stream", r.status, r.header.Get("Content-Type"), r.readErr)
			}
			body := string(r.body)
			rest, ok := strings.CutPrefix(body, ": keep-alive\n\n")
			if !ok || strings.Contains(rest, "keep-alive") {
				t.Fatalf("body %q; want one keep-alive first", body)
			}
			for _, s := range tt.wantData {
				if !strings.Contains(rest, s) {
					t.Errorf("body lacks %q: %q", s, body)
				}
			}
			if strings.HasSuffix(rest, "data: [DONE]\n\n") != tt.wantDone {
				t.Errorf("body %q; want [DONE] %v", body, tt.wantDone)
			}
			if tt.wantError {
				errorOf(t, []byte(strings.TrimSuffix(strings.TrimPrefix(rest, "data: "), "\n\n")))
				if strings.Count(rest, "data: ") != 1 {
					t.Errorf("body %q; want one error event", body)
				}
			}
			if s := logged.String(); s != "" {
				t.Errorf("the server logged %q", s)
			}
		})
	}
}

// TestKeepAliveOff: with server.stream_keepalive 0s a stream waiting for
// its first token gets nothing, and a failure, however late, its status.
func TestKeepAliveOff(t *testing.T) {
	clk := clock.NewFake(t0)
	gw := newHeldGateway(fakeGateway{err: &route.ExhaustedError{Chain: "answer"}})
	srv := httptest.NewServer(New(Options{Plan: testPlan(), Gateway: gw, Clock: clk}))
	defer srv.Close()
	got := make(chan reply, 1)
	go func() {
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(streamBody("answer", false)))
		if err != nil {
			got <- reply{readErr: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- reply{status: resp.StatusCode, body: b, readErr: err}
	}()
	<-gw.entered
	if n := clk.Waiters(); n != 0 {
		t.Errorf("%d timers pending while the stream waits, want none", n)
	}
	clk.Advance(time.Minute)
	close(gw.release)
	if r := <-got; r.status != 503 || errorOf(t, r.body)["code"] != "no_route_available" {
		t.Errorf("status %d, body %s (%v); want a 503", r.status, r.body, r.readErr)
	}
}
