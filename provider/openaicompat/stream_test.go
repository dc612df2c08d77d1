package openaicompat

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/openai"
)

// sseHandler writes events as given (each already framed) and flushes
// after each.
func sseHandler(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Ratelimit-Remaining-Requests", "998")
		w.WriteHeader(200)
		for _, e := range events {
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}
}

func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
}

func data(s string) string { return "data: " + s + "\n\n" }

var (
	evRole    = data(chunk(`{"role":"assistant","content":""}`, ""))
	evHello   = data(chunk(`{"content":"Hello"}`, ""))
	evWorld   = data(chunk(`{"content":" world"}`, ""))
	evFinish  = data(chunk(`{}`, "stop"))
	evUsage   = data(`{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	evDone    = "data: [DONE]\n\n"
	usage5    = &llm.Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}
	wantHello = []llm.Chunk{{Role: "assistant"}, {Content: "Hello"}, {Content: " world"}, {FinishReason: "stop"}, {Usage: usage5}}
)

// drain reads s to its end and returns the chunks and the final error.
func drain(t *testing.T, s llm.Stream) ([]llm.Chunk, error) {
	t.Helper()
	var got []llm.Chunk
	for range 1000 {
		c, err := s.Next()
		if err != nil {
			if _, again := s.Next(); again != err {
				t.Errorf("Next after the end returned %v, then %v", err, again)
			}
			return got, err
		}
		got = append(got, c)
	}
	t.Fatal("stream does not end")
	return nil, nil
}

func TestStream(t *testing.T) {
	tests := []struct {
		name           string
		events         []string
		want           []llm.Chunk
		wantKeepAlives int64
		wantMalformed  int64
	}{
		{
			name:   "openai shape with include_usage",
			events: []string{evRole, evHello, evWorld, evFinish, evUsage, evDone},
			want:   wantHello,
		},
		{
			name: "CRLF framing, no space after data, keep-alives",
			events: []string{": OPENROUTER PROCESSING\r\n\r\n", strings.ReplaceAll(evRole, "\n", "\r\n"),
				": OPENROUTER PROCESSING\r\n\r\n", "data:" + chunk(`{"content":"Hello"}`, "") + "\r\n\r\n",
				strings.ReplaceAll(evWorld+evFinish+evUsage+evDone, "\n", "\r\n")},
			want:           wantHello,
			wantKeepAlives: 2,
		},
		{
			name:   "CR framing, event split across writes",
			events: []string{"data: " + chunk(`{"role":"assistant","content":""}`, "")[:20], chunk(`{"role":"assistant","content":""}`, "")[20:] + "\r\r", strings.ReplaceAll(evHello+evWorld+evFinish+evUsage+evDone, "\n", "\r")},
			want:   wantHello,
		},
		{
			name:          "one malformed event is skipped",
			events:        []string{evRole, evHello, "data: {\"choices\":[{\"delta\n\n", evWorld, evFinish, evUsage, evDone},
			want:          wantHello,
			wantMalformed: 1,
		},
		{
			name:   "no [DONE] after the finish",
			events: []string{evRole, evHello, evWorld, evFinish, evUsage},
			want:   wantHello,
		},
		{
			name: "cumulative usage on every chunk is reported once, the last",
			events: []string{
				data(`{"choices":[{"delta":{"role":"assistant","content":"Hello"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`),
				data(`{"choices":[{"delta":{"content":" world"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`),
				evDone,
			},
			want: []llm.Chunk{{Role: "assistant", Content: "Hello"}, {Content: " world", FinishReason: "stop"}, {Usage: usage5}},
		},
		{
			name: "groq x_groq usage on the finish chunk",
			events: []string{evRole, evHello,
				data(`{"choices":[{"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_1","usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}}`), evDone},
			want: []llm.Chunk{{Role: "assistant"}, {Content: "Hello"}, {FinishReason: "stop"}, {Usage: usage5}},
		},
		{
			name: "think block split across chunks",
			events: []string{evRole, data(chunk(`{"content":"<thi"}`, "")), data(chunk(`{"content":"nk>plan</th"}`, "")),
				data(chunk(`{"content":"ink>\n\nHi"}`, "")), evFinish, evDone},
			want: []llm.Chunk{{Role: "assistant"}, {Reasoning: "plan"}, {Content: "Hi"}, {FinishReason: "stop"}},
		},
		{
			name:   "reasoning deltas",
			events: []string{data(chunk(`{"role":"assistant","reasoning":"hm"}`, "")), data(chunk(`{"reasoning_content":"m"}`, "")), evHello, evFinish, evDone},
			want:   []llm.Chunk{{Role: "assistant", Reasoning: "hm"}, {Reasoning: "m"}, {Content: "Hello"}, {FinishReason: "stop"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, c := newUpstream(t, sseHandler(tt.events...))
			s, err := c.Stream(context.Background(), testCall())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Header().Get("X-Ratelimit-Remaining-Requests") != "998" {
				t.Errorf("Header() lacks the rate-limit header")
			}
			got, err := drain(t, s)
			if err != io.EOF {
				t.Fatalf("err = %v, want io.EOF", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %s\nwant %s", show(got), show(tt.want))
			}
			st := s.(*EventStream).Stats()
			if st.KeepAlives != tt.wantKeepAlives || st.Malformed != tt.wantMalformed {
				t.Errorf("Stats = %+v, want %d keep-alives, %d malformed", st, tt.wantKeepAlives, tt.wantMalformed)
			}
			h := <-u.gotHeader
			if h.Get("Accept") != "text/event-stream" {
				t.Errorf("Accept = %q", h.Get("Accept"))
			}
			body := string(<-u.gotBody)
			if !strings.Contains(body, `"stream":true,"stream_options":{"include_usage":true}`) {
				t.Errorf("upstream body does not ask for a stream with usage: %s", body)
			}
		})
	}
}

func show(cs []llm.Chunk) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("{")
		if c.Role != "" {
			b.WriteString("role=" + c.Role + " ")
		}
		if c.Content != "" {
			b.WriteString("content=" + c.Content + " ")
		}
		if c.Reasoning != "" {
			b.WriteString("reasoning=" + c.Reasoning + " ")
		}
		if c.FinishReason != "" {
			b.WriteString("finish=" + c.FinishReason + " ")
		}
		if c.Usage != nil {
			b.WriteString("usage ")
		}
		b.WriteString("} ")
	}
	return b.String()
}

func TestStreamFailures(t *testing.T) {
	orError := `{"id":"cmpl-abc123","object":"chat.completion.chunk","created":1234567890,"model":"gpt-3.5-turbo","provider":"openai","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`
	tests := []struct {
		name       string
		events     []string
		wantChunks int
		wantErr    error
		wantBody   string
	}{
		{
			name:       "cut halfway",
			events:     []string{evRole, evHello},
			wantChunks: 2,
			wantErr:    failure.ErrStreamCut,
		},
		{
			name:       "openrouter mid-stream error",
			events:     []string{": OPENROUTER PROCESSING\n\n", evRole, evHello, data(orError)},
			wantChunks: 2,
			wantErr:    failure.ErrStreamCut,
			wantBody:   orError,
		},
		{
			name:       "vllm error object",
			events:     []string{evRole, data(`{"object":"error","message":"boom","type":"InternalServerError","code":500}`), evDone},
			wantChunks: 1,
			wantErr:    failure.ErrStreamCut,
			wantBody:   `{"object":"error","message":"boom","type":"InternalServerError","code":500}`,
		},
		{
			name:       "two malformed events",
			events:     []string{evRole, data(`{bad`), evHello, data(`{worse`), evFinish, evDone},
			wantChunks: 2,
			wantErr:    failure.ErrMalformed,
			wantBody:   `{worse`,
		},
		{
			name:       "event named error",
			events:     []string{evRole, "event: error\ndata: {\"detail\":\"overloaded\"}\n\n"},
			wantChunks: 1,
			wantErr:    failure.ErrStreamCut,
			wantBody:   `{"detail":"overloaded"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newUpstream(t, sseHandler(tt.events...))
			s, err := c.Stream(context.Background(), testCall())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := drain(t, s)
			if len(got) != tt.wantChunks {
				t.Errorf("got %d chunks before the error, want %d", len(got), tt.wantChunks)
			}
			ue := asUpstream(t, err)
			if ue.Status != 200 || !errors.Is(ue.Err, tt.wantErr) || string(ue.Body) != tt.wantBody {
				t.Errorf("got Status %d, Err %v, Body %q; want 200, %v, %q", ue.Status, ue.Err, ue.Body, tt.wantErr, tt.wantBody)
			}
			if ue.Header == nil {
				t.Errorf("Header = nil")
			}
		})
	}
	t.Run("error event carries the ChunkError", func(t *testing.T) {
		_, c := newUpstream(t, sseHandler(evRole, data(orError)))
		s, err := c.Stream(context.Background(), testCall())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = drain(t, s)
		var ce *openai.ChunkError
		if !errors.As(err, &ce) || ce.Code != "server_error" {
			t.Errorf("err = %v, want a ChunkError with code server_error", err)
		}
	})
}

func TestStreamStatusErrors(t *testing.T) {
	for _, status := range []int{429, 503} {
		_, c := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			answer(w, status, `{"error":{"message":"busy"}}`)
		})
		s, err := c.Stream(context.Background(), testCall())
		if s != nil {
			t.Errorf("status %d: got a stream, want none", status)
		}
		ue := asUpstream(t, err)
		if ue.Status != status || ue.Err != nil || string(ue.Body) != `{"error":{"message":"busy"}}` || ue.Header.Get("Retry-After") != "7" {
			t.Errorf("got Status %d, Err %v, Body %q, Retry-After %q", ue.Status, ue.Err, ue.Body, ue.Header.Get("Retry-After"))
		}
	}
}

func TestStreamJSONAnswer(t *testing.T) {
	_, c := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		answer(w, 200, `{"choices":[{"message":{"content":"<think>x</think>Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	})
	s, err := c.Stream(context.Background(), testCall())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := drain(t, s)
	want := []llm.Chunk{{Role: "assistant", Content: "Hi", Reasoning: "x", FinishReason: "stop"}, {Usage: usage5}}
	if err != io.EOF || !reflect.DeepEqual(got, want) {
		t.Errorf("got %s, %v; want %s, io.EOF", show(got), err, show(want))
	}
}

// TestStreamStall checks that a stream gone silent after its headers ends
// when its ctx does, and when it is closed from another goroutine.
func TestStreamStall(t *testing.T) {
	tests := []struct {
		name    string
		stop    func(cancel context.CancelFunc, s llm.Stream)
		wantErr error
	}{
		{"ctx ends", func(cancel context.CancelFunc, s llm.Stream) { cancel() }, context.Canceled},
		{"closed", func(cancel context.CancelFunc, s llm.Stream) { s.Close() }, failure.ErrStreamCut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := block(t)
			_, c := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				sseHandler(evRole, evHello)(w, r)
				select {
				case <-release:
				case <-r.Context().Done():
				}
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := c.Stream(ctx, testCall())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for range 2 {
				if _, err := s.Next(); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			wg.Go(func() { tt.stop(cancel, s) })
			_, err = s.Next() // blocks until stopped
			wg.Wait()
			ue := asUpstream(t, err)
			if !errors.Is(ue.Err, tt.wantErr) || !errors.Is(ue.Err, failure.ErrStreamCut) {
				t.Errorf("Err = %v, want %v and ErrStreamCut", ue.Err, tt.wantErr)
			}
		})
	}
}

func TestStreamCloseTwiceConcurrently(t *testing.T) {
	_, c := newUpstream(t, sseHandler(evRole, evHello, evFinish, evDone))
	s, err := c.Stream(context.Background(), testCall())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { s.Close() })
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Errorf("third Close = %v", err)
	}
}

func TestStreamDoesNotModifyRequest(t *testing.T) {
	_, c := newUpstream(t, sseHandler(evRole, evFinish, evDone))
	call := testCall()
	call.Request.Stream, call.Request.IncludeUsage = false, false
	s, err := c.Stream(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if call.Request.Stream || call.Request.IncludeUsage {
		t.Errorf("Stream modified the call's request")
	}
}

func TestStreamUsageOption(t *testing.T) {
	u, _ := newUpstream(t, sseHandler(evRole, evFinish, evDone))
	c := New(Options{Name: "groq", BaseURL: u.URL + "/v1", StreamUsage: true})
	defer c.CloseIdleConnections()
	call := testCall()
	call.Request.IncludeUsage = false
	s, err := c.Stream(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	h := <-u.gotHeader
	if h.Get("Authorization") != "" {
		t.Errorf("Authorization sent without an API key")
	}
	if body := string(<-u.gotBody); !strings.Contains(body, `"stream_options":{"include_usage":true}`) {
		t.Errorf("StreamUsage did not ask for usage: %s", body)
	}
}

// TestStreamEndsOnceFinishedWithUsage: an upstream that sends the finish
// and the usage, then neither [DONE] nor the end of the body, is finished at
// once, with its usage: Next does not wait on the open connection.
func TestStreamEndsOnceFinishedWithUsage(t *testing.T) {
	tests := []struct {
		name   string
		events []string
		want   []llm.Chunk
	}{
		{"usage after the finish", []string{evRole, evHello, evFinish, evUsage}, []llm.Chunk{{Role: "assistant"}, {Content: "Hello"}, {FinishReason: "stop"}, {Usage: usage5}}},
		{"usage on the finish (Groq's x_groq)", []string{evRole, evHello, data(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"r","usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}}`)},
			[]llm.Chunk{{Role: "assistant"}, {Content: "Hello"}, {FinishReason: "stop"}, {Usage: usage5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := block(t)
			_, c := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				sseHandler(tt.events...)(w, r)
				select { // open and silent
				case <-release:
				case <-r.Context().Done():
				}
			})
			s, err := c.Stream(context.Background(), testCall())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := drain(t, s)
			if err != io.EOF || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %s, %v; want %s, io.EOF", show(got), err, show(tt.want))
			}
		})
	}
}

// TestStreamBufferedCountsTheEnd: once the finish and the usage are in, the
// end of the answer is at hand even though the upstream keeps the
// connection open and silent, so a writer that flushes when Buffered is
// zero sends the last chunks and the end in one write.
func TestStreamBufferedCountsTheEnd(t *testing.T) {
	release := block(t)
	_, c := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHandler(evRole, evHello, evFinish, evUsage)(w, r)
		select { // open and silent
		case <-release:
		case <-r.Context().Done():
		}
	})
	s, err := c.Stream(context.Background(), testCall())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es := s.(*EventStream)
	for i, want := range []llm.Chunk{{Role: "assistant"}, {Content: "Hello"}, {FinishReason: "stop"}, {Usage: usage5}} {
		got, err := s.Next()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("chunk %d: got %s, %v; want %s", i, show([]llm.Chunk{got}), err, show([]llm.Chunk{want}))
		}
	}
	if n := es.Buffered(); n == 0 {
		t.Errorf("after the usage, Buffered() = 0: a writer would flush before the end, which is already here")
	}
	if _, err := s.Next(); err != io.EOF {
		t.Errorf("after the usage, Next returned %v, want io.EOF", err)
	}
}
