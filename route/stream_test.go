package route

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/state/memstore"
)

// fakeUp streams scripted chunks per model, then ends with err (io.EOF
// for a clean end). It keeps the requests it got.
type fakeUp struct {
	mu      sync.Mutex
	scripts map[string]fakeScript
	calls   []provider.Call
}

type fakeScript struct {
	chunks []llm.Chunk
	err    error
}

func (f *fakeUp) Chat(context.Context, provider.Call) (*llm.Response, error) {
	return nil, fmt.Errorf("fake: no Chat")
}

func (f *fakeUp) Stream(_ context.Context, call provider.Call) (llm.Stream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	s := f.scripts[call.Model]
	return &fakeStream{chunks: s.chunks, err: s.err}, nil
}

type fakeStream struct {
	chunks []llm.Chunk
	err    error
}

func (s *fakeStream) Next() (llm.Chunk, error) {
	if len(s.chunks) == 0 {
		return llm.Chunk{}, s.err
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}
func (s *fakeStream) Close() error        { return nil }
func (s *fakeStream) Header() http.Header { return http.Header{} }

type records struct {
	mu sync.Mutex
	a  []Attempt
}

func (r *records) RecordAttempt(a *Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.a = append(r.a, *a)
}

// TestStreamContinuedUsage: a stream cut without usage is continued on a
// route that can continue it, with the answer so far as a prefix; the
// parts' usage is summed (the cut part estimated), and each part is one
// attempt in the log.
func TestStreamContinuedUsage(t *testing.T) {
	prov := &config.Provider{Name: "p"}
	a := &config.Route{ID: "p/a", Provider: prov, Model: "a"}
	b := &config.Route{ID: "p/b", Provider: prov, Model: "b", Continuation: config.ContinuePrefix}
	ch := &config.Chain{Name: "c", Routes: []*config.Route{a, b}, AttemptTimeout: 10 * time.Second, Deadline: 30 * time.Second, MaxInFlight: 1, Interactive: true}
	plan := &config.Plan{Chains: map[string]*config.Chain{"c": ch}, Routes: map[string]*config.Route{"p/a": a, "p/b": b}}
	cut := &failure.UpstreamError{Status: 200, Err: failure.ErrStreamCut}
	up := &fakeUp{scripts: map[string]fakeScript{
		"a": {chunks: []llm.Chunk{{Role: "assistant", Content: "Hello "}, {Content: "wor"}}, err: cut},
		"b": {chunks: []llm.Chunk{{Role: "assistant", Content: "world."}, {FinishReason: "stop", Usage: &llm.Usage{PromptTokens: 50, CompletionTokens: 2}}}, err: io.EOF},
	}}
	clk := clock.NewFake(time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC))
	store, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rec := &records{}
	r, err := New(Options{Plan: plan, Upstreams: map[string]Upstream{"p": up}, Store: store, Clock: clk, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	req := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "Say hello world."}}}
	s, err := r.Stream(context.Background(), plan.Chains["c"], "id1", req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var text, finish string
	for {
		c, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if c.Role != "" && text != "" {
			t.Errorf("a continuation chunk carries the role %q", c.Role)
		}
		text += c.Content
		finish += c.FinishReason
	}
	if text != "Hello world." || finish != "stop" || s.Parts() != 2 {
		t.Errorf("text %q finish %q parts %d; want the whole answer in 2 parts", text, finish, s.Parts())
	}
	if last := up.calls[1].Request.Messages; len(last) != 2 || last[1].Role != "assistant" || !last[1].Prefix || last[1].Content != "Hello " {
		t.Errorf("continuation request messages %+v, want the answer so far, up to its last word, as an assistant prefix", last)
	}
	u, exact := s.Usage()
	if want := (llm.Usage{PromptTokens: s.w.est, CompletionTokens: 3 + 2, TotalTokens: s.w.est + 5}); u != want || exact {
		t.Errorf("usage %+v (exact %v), want %+v estimated", u, exact, want)
	}
	if len(rec.a) != 2 || rec.a[0].Route != "p/a" || rec.a[0].Part != 0 || rec.a[0].Class != failure.Overloaded ||
		rec.a[1].Route != "p/b" || rec.a[1].Part != 1 || rec.a[1].Class != failure.OK || rec.a[1].TokensIn != 50 || rec.a[1].TokensOut != 2 {
		t.Errorf("attempts %+v, want the cut part and the continuation with its own usage", rec.a)
	}
}

// TestFirstChunk: the first token is the first content that is not only
// blanks, reasoning, or a tool call; the role and the blanks before it are
// carried onto it; a stream that ends before one is empty, whatever
// finish_reason it sent (issue 10).
func TestFirstChunk(t *testing.T) {
	u := &llm.Usage{PromptTokens: 3}
	tests := []struct {
		name   string
		chunks []llm.Chunk
		want   llm.Chunk // zero: an empty answer
	}{
		{"role, finish, end", []llm.Chunk{{Role: "assistant"}, {FinishReason: "stop"}}, llm.Chunk{}},
		{"finish on the role chunk, usage", []llm.Chunk{{Role: "assistant", FinishReason: "stop"}, {Usage: u}}, llm.Chunk{}},
		{"blanks only", []llm.Chunk{{Role: "assistant", Content: "\n"}, {Content: "  ", FinishReason: "stop"}}, llm.Chunk{}},
		{"blanks then text", []llm.Chunk{{Role: "assistant", Content: "\n"}, {Content: " Hi"}}, llm.Chunk{Role: "assistant", Content: "\n Hi"}},
		{"reasoning", []llm.Chunk{{Role: "assistant"}, {Reasoning: "hmm"}}, llm.Chunk{Role: "assistant", Reasoning: "hmm"}},
		{"a tool call", []llm.Chunk{{Role: "assistant"}, {ToolCalls: []byte(`[{"index":0}]`)}}, llm.Chunk{Role: "assistant", ToolCalls: []byte(`[{"index":0}]`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &fakeUp{scripts: map[string]fakeScript{"m": {chunks: tt.chunks, err: io.EOF}}}
			_, got, err := firstChunk(context.Background(), up, provider.Call{Model: "m"})
			if tt.want.Role == "" {
				if v := failure.Classify(err, time.Time{}); v.Class != failure.Empty {
					t.Fatalf("got %+v, %v (%s); want an empty answer", got, err, v.Class)
				}
				return
			}
			if err != nil || got.Role != tt.want.Role || got.Content != tt.want.Content || got.Reasoning != tt.want.Reasoning || string(got.ToolCalls) != string(tt.want.ToolCalls) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestStreamToolCallsNotContinued: a stream cut after its tool calls went
// out is not continued (a text continuation cannot finish them): it ends
// with the BrokenError, and no other route is called.
func TestStreamToolCallsNotContinued(t *testing.T) {
	prov := &config.Provider{Name: "p"}
	a := &config.Route{ID: "p/a", Provider: prov, Model: "a"}
	b := &config.Route{ID: "p/b", Provider: prov, Model: "b"}
	ch := &config.Chain{Name: "c", Routes: []*config.Route{a, b}, AttemptTimeout: 10 * time.Second, Deadline: 30 * time.Second, MaxInFlight: 1, Interactive: true}
	plan := &config.Plan{Chains: map[string]*config.Chain{"c": ch}, Routes: map[string]*config.Route{"p/a": a, "p/b": b}}
	call := json.RawMessage(`[{"index":0,"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"q\":"}}]`)
	up := &fakeUp{scripts: map[string]fakeScript{
		"a": {chunks: []llm.Chunk{{Role: "assistant", ToolCalls: call}}, err: &failure.UpstreamError{Status: 200, Err: failure.ErrStreamCut}},
		"b": {chunks: []llm.Chunk{{Role: "assistant", Content: "Hello."}, {FinishReason: "stop"}}, err: io.EOF},
	}}
	clk := clock.NewFake(time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC))
	store, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r, err := New(Options{Plan: plan, Upstreams: map[string]Upstream{"p": up}, Store: store, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := r.Stream(context.Background(), ch, "id1", &llm.Request{Messages: []llm.Message{{Role: "user", Content: "Look it up."}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var be *BrokenError
	for {
		_, err := s.Next()
		if err == nil {
			continue
		}
		if !errors.As(err, &be) || be.Route != "p/a" {
			t.Fatalf("the stream ended with %v, want p/a's BrokenError", err)
		}
		break
	}
	if len(up.calls) != 1 {
		t.Errorf("%d calls, want none after the cut", len(up.calls)-1)
	}
}
