package gemini

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

// sseUpstream starts a fake Gemini that answers a stream with the given
// pieces, flushing after each, then ends the body.
func sseUpstream(t *testing.T, pieces ...string) *Client {
	t.Helper()
	c, _ := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, p := range pieces {
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	})
	return c
}

// readAll reads s to its end and returns the chunks and the final error.
func readAll(t *testing.T, s llm.Stream) ([]llm.Chunk, error) {
	t.Helper()
	var chunks []llm.Chunk
	for range 100 {
		ch, err := s.Next()
		if err != nil {
			return chunks, err
		}
		chunks = append(chunks, ch)
	}
	t.Fatal("stream did not end after 100 chunks")
	return nil, nil
}

func openStream(t *testing.T, c *Client) llm.Stream {
	t.Helper()
	s, err := c.Stream(context.Background(), simpleCall("gemini-2.5-flash"))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStreamSample(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join("testdata", "stream_sample.sse"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Chunk{
		{Role: "assistant", Content: "Here you go!\n\n1.  **English:** Hi\n2.  **Spanish:** Hola\n3.  **French:** Bonjour\n4.  **German:** Hallo\n5.  "},
		{Content: "**Italian:** Ciao", FinishReason: "stop", Usage: &llm.Usage{
			PromptTokens: 5, CompletionTokens: 44 + 186, TotalTokens: 235, ReasoningTokens: 186,
		}},
	}
	tests := []struct {
		name    string
		framing string
	}{
		{"lf", "\n"},
		{"crlf", "\r\n"},
		{"cr", "\r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.ReplaceAll(string(sample), "\n", tt.framing)
			// Split mid-event too, to show framing does not depend on reads.
			c := sseUpstream(t, body[:100], body[100:len(body)/2], body[len(body)/2:])
			s := openStream(t, c)
			if s.Header().Get("Content-Type") != "text/event-stream" {
				t.Errorf("Header() lacks the upstream's Content-Type")
			}
			got, err := readAll(t, s)
			if err != io.EOF {
				t.Fatalf("stream ended with %v; want io.EOF", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("chunks:\n got %+v\nwant %+v", got, want)
			}
			if got[1].Usage != nil && got[1].Usage.TotalTokens != 235 {
				t.Errorf("usage not taken from the last event")
			}
			if _, err := s.Next(); err != io.EOF {
				t.Errorf("Next after the end = %v; want io.EOF again", err)
			}
		})
	}
}

func TestStreamTranslation(t *testing.T) {
	ev := func(json string) string { return "data: " + json + "\n\n" }
	tests := []struct {
		name   string
		pieces []string
		want   []llm.Chunk
	}{
		{
			name: "one_malformed_event_skipped",
			pieces: []string{
				ev(`{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"}}]}`),
				ev(`{"candidates":[{"content":{"parts":[{"text":"oo`),
				ev(`{"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"},"finishReason":"STOP"}]}`),
			},
			want: []llm.Chunk{
				{Role: "assistant", Content: "Hel"},
				{Content: "lo", FinishReason: "stop"},
			},
		},
		{
			name: "thoughts_comments_and_usage_before_finish",
			pieces: []string{
				": keep-alive\n\n",
				ev(`{"candidates":[{"content":{"parts":[{"text":"Thinking...","thought":true}],"role":"model"}}],"usageMetadata":{"promptTokenCount":2,"totalTokenCount":2}}`),
				ev(`{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":1,"thoughtsTokenCount":7,"totalTokenCount":10}}`),
				"data:\n\n",
				ev(`{"candidates":[{"content":{"role":"model"},"finishReason":"MAX_TOKENS"}]}`),
			},
			want: []llm.Chunk{
				{Role: "assistant", Reasoning: "Thinking..."},
				{Content: "Hi"},
				{FinishReason: "length", Usage: &llm.Usage{PromptTokens: 2, CompletionTokens: 8, TotalTokens: 10, ReasoningTokens: 7}},
			},
		},
		{
			name: "no_usage_at_all",
			pieces: []string{
				ev(`{"candidates":[{"content":{"parts":[{"text":"A"}],"role":"model"},"finishReason":"STOP"}]}`),
			},
			want: []llm.Chunk{{Role: "assistant", Content: "A", FinishReason: "stop"}},
		},
		{
			name: "answer_then_safety",
			pieces: []string{
				ev(`{"candidates":[{"content":{"parts":[{"text":"Some"}],"role":"model"}}]}`),
				ev(`{"candidates":[{"content":{"role":"model"},"finishReason":"SAFETY"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}}`),
			},
			want: []llm.Chunk{
				{Role: "assistant", Content: "Some"},
				{FinishReason: "content_filter", Usage: &llm.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStream(t, sseUpstream(t, tt.pieces...))
			got, err := readAll(t, s)
			if err != io.EOF {
				t.Fatalf("stream ended with %v; want io.EOF", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("chunks:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestStreamBroken(t *testing.T) {
	first := "data: " + `{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"}}]}` + "\n\n"
	errEvent := `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`
	tests := []struct {
		name       string
		pieces     []string
		wantChunks int
		want       []error
		wantBody   string
	}{
		{"cut_after_event", []string{first}, 1, []error{failure.ErrStreamCut}, ""},
		{"cut_mid_event", []string{first, `data: {"candidates":[{"content":{"par`}, 1, []error{failure.ErrStreamCut}, ""},
		{"empty_body", nil, 0, []error{failure.ErrStreamCut}, ""},
		{"error_event", []string{first, "data: " + errEvent + "\n\n"}, 1, []error{failure.ErrStreamCut}, errEvent},
		// One malformed event is skipped; the body then ends unfinished.
		{"malformed_event_then_cut", []string{first, "data: not json\n\n"}, 1, []error{failure.ErrStreamCut}, ""},
		{"second_malformed_event", []string{first, "data: not json\n\n", first, "data: nor this\n\n"}, 2, []error{failure.ErrMalformed, failure.ErrStreamCut}, "nor this"},
		{"prompt_blocked", []string{`data: {"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":9}}` + "\n\n"}, 0, []error{failure.ErrRefused}, ""},
		{"answer_blocked", []string{`data: {"candidates":[{"finishReason":"SAFETY","index":0}]}` + "\n\n"}, 0, []error{failure.ErrRefused}, ""},
		{"finish_without_text", []string{`data: {"candidates":[{"content":{"parts":[{"text":"hm","thought":true}]},"finishReason":"MAX_TOKENS"}]}` + "\n\n"}, 0, []error{failure.ErrEmptyAnswer}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStream(t, sseUpstream(t, tt.pieces...))
			got, err := readAll(t, s)
			if len(got) != tt.wantChunks {
				t.Errorf("got %d chunks before the error; want %d", len(got), tt.wantChunks)
			}
			ue := asUpstream(t, err)
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("err = %v; want %v", err, want)
				}
			}
			if ue.Status != http.StatusOK {
				t.Errorf("Status = %d; want 200", ue.Status)
			}
			if tt.wantBody != "" && string(ue.Body) != tt.wantBody {
				t.Errorf("Body = %q; want the event %q", ue.Body, tt.wantBody)
			}
			if _, again := s.Next(); again != err {
				t.Errorf("Next after the error = %v; want the same error", again)
			}
		})
	}
}

// hangingUpstream sends one event and then hangs until the request goes away.
func hangingUpstream(t *testing.T) *Client {
	t.Helper()
	release := make(chan struct{})
	c, _ := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: "+`{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	return c
}

func TestStreamHangCancelledByContext(t *testing.T) {
	c := hangingUpstream(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := c.Stream(ctx, simpleCall("gemini-2.5-flash"))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	if ch, err := s.Next(); err != nil || ch.Content != "Hel" {
		t.Fatalf("first Next = %+v, %v; want Hel", ch, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Next()
		done <- err
	}()
	cancel()
	err = <-done
	asUpstream(t, err)
	if !errors.Is(err, failure.ErrStreamCut) || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v; want ErrStreamCut and context.Canceled", err)
	}
}

func TestStreamCloseUnblocksNext(t *testing.T) {
	c := hangingUpstream(t)
	s := openStream(t, c)
	if _, err := s.Next(); err != nil {
		t.Fatalf("first Next: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Next()
		done <- err
	}()
	if err := s.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := <-done; !errors.Is(err, failure.ErrStreamCut) {
		t.Errorf("Next after Close = %v; want ErrStreamCut", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestStreamHangBeforeHeaders(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	c, _ := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		s, err := c.Stream(ctx, simpleCall("gemini-2.5-flash"))
		if s != nil {
			s.Close()
		}
		done <- err
	}()
	<-entered
	cancel()
	err := <-done
	if ue := asUpstream(t, err); ue.Status != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, Status %d; want context.Canceled, Status 0", err, ue.Status)
	}
}
