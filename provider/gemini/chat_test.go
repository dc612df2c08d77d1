package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

func TestChatTranslatesAnswer(t *testing.T) {
	tests := []struct {
		name string
		body string
		want llm.Response
	}{
		{
			// docs/PROVIDERS.md, Gemini's whole-answer sample.
			name: "plain",
			body: `{
  "candidates": [{
    "content": {"parts": [{"text": "I am a large language model, trained by Google.\n"}], "role": "model"},
    "finishReason": "STOP",
    "index": 0
  }],
  "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 11, "totalTokenCount": 15,
                    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 4}]},
  "modelVersion": "gemini-2.0-pro-exp",
  "responseId": "resp-1"
}`,
			want: llm.Response{
				ID: "resp-1", Model: "gemini-2.0-pro-exp",
				Content:      "I am a large language model, trained by Google.\n",
				FinishReason: "stop",
				Usage:        llm.Usage{PromptTokens: 4, CompletionTokens: 11, TotalTokens: 15},
				UsageKnown:   true,
			},
		},
		{
			name: "thoughts_cache_length",
			body: `{"candidates":[{"content":{"parts":[{"text":"Let me think. ","thought":true},{"text":"Weighing it.","thought":true},{"text":"Forty"},{"text":"-two"},{"functionCall":{"name":"f","args":{}}}],"role":"model"},"finishReason":"MAX_TOKENS","index":0}],
"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":44,"thoughtsTokenCount":186,"totalTokenCount":235,"cachedContentTokenCount":3},
"modelVersion":"models/gemini-2.5-flash","responseId":"resp-2"}`,
			want: llm.Response{
				ID: "resp-2", Model: "gemini-2.5-flash",
				Content: "Forty-two", Reasoning: "Let me think. Weighing it.",
				// The function call is the answer's too (issue 33); the
				// answer was cut, so it finishes for length.
				ToolCalls:    json.RawMessage(`[{"id":"` + callID("resp-2", 0, "f") + `","type":"function","function":{"name":"f","arguments":"{}"}}]`),
				FinishReason: "length",
				Usage:        llm.Usage{PromptTokens: 5, CompletionTokens: 230, TotalTokens: 235, ReasoningTokens: 186, CachedTokens: 3},
				UsageKnown:   true,
			},
		},
		{
			name: "partial_then_safety_no_usage",
			body: `{"candidates":[{"content":{"parts":[{"text":"Part of it"}],"role":"model"},"finishReason":"SAFETY"}]}`,
			want: llm.Response{Content: "Part of it", FinishReason: "content_filter"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Seen", "1")
				w.Write([]byte(tt.body))
			})
			got, err := c.Chat(context.Background(), simpleCall("gemini-2.5-flash"))
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if got.Header.Get("X-Seen") != "1" {
				t.Errorf("Header lacks the upstream's X-Seen")
			}
			got.Header = nil
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("Chat = %+v; want %+v", *got, tt.want)
			}
		})
	}
}

// errorBodies returns the verbatim Gemini error bodies of docs/PROVIDERS.md,
// kept in testdata/errors as <status>_<what>.json.
func errorBodies(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "errors", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no error bodies in testdata/errors: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = b
	}
	return out
}

func TestUpstreamErrors(t *testing.T) {
	for name, body := range errorBodies(t) {
		status, err := strconv.Atoi(name[:3])
		if err != nil {
			t.Fatalf("testdata/errors/%s.json: name must start with the status", name)
		}
		for _, mode := range []string{"chat", "stream"} {
			t.Run(mode+"/"+name, func(t *testing.T) {
				c, _ := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json; charset=UTF-8")
					w.WriteHeader(status)
					w.Write(body)
				})
				call := simpleCall("gemini-2.5-flash")
				var err error
				if mode == "chat" {
					_, err = c.Chat(context.Background(), call)
				} else {
					var s llm.Stream
					s, err = c.Stream(context.Background(), call)
					if s != nil {
						s.Close()
						t.Fatalf("Stream returned a stream for HTTP %d", status)
					}
				}
				ue := asUpstream(t, err)
				if ue.Status != status {
					t.Errorf("Status = %d; want %d", ue.Status, status)
				}
				if !bytes.Equal(ue.Body, body) {
					t.Errorf("Body = %q; want the upstream's body verbatim", ue.Body)
				}
				if ue.Model != "gemini-2.5-flash" {
					t.Errorf("Model = %q; want gemini-2.5-flash", ue.Model)
				}
				if got := ue.Header.Get("Content-Type"); got != "application/json; charset=UTF-8" {
					t.Errorf("Header Content-Type = %q; want the upstream's", got)
				}
				if ue.Err != nil {
					t.Errorf("Err = %v; want nil for an HTTP error", ue.Err)
				}
			})
		}
	}
}

func TestUpstreamErrorBodyCapped(t *testing.T) {
	big := bytes.Repeat([]byte("x"), failure.MaxBody+1000)
	c, _ := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write(big)
	})
	_, err := c.Chat(context.Background(), simpleCall("gemini-2.5-flash"))
	ue := asUpstream(t, err)
	if ue.Status != 500 || len(ue.Body) != failure.MaxBody {
		t.Errorf("Status, len(Body) = %d, %d; want 500, %d", ue.Status, len(ue.Body), failure.MaxBody)
	}
}

func TestChatUnusableAnswers(t *testing.T) {
	tests := []struct {
		name string
		body string
		want error
	}{
		{"prompt_blocked", `{"promptFeedback":{"blockReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH"}]},"usageMetadata":{"promptTokenCount":9,"totalTokenCount":9},"modelVersion":"gemini-2.5-flash"}`, failure.ErrRefused},
		{"prompt_blocked_other", `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"}}`, failure.ErrRefused},
		{"answer_safety_no_text", `{"candidates":[{"content":{"role":"model"},"finishReason":"SAFETY","index":0,"safetyRatings":[]}]}`, failure.ErrRefused},
		{"answer_recitation_no_text", `{"candidates":[{"finishReason":"RECITATION","index":0}]}`, failure.ErrRefused},
		{"stop_no_text", `{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP"}]}`, failure.ErrEmptyAnswer},
		{"thoughts_only", `{"candidates":[{"content":{"parts":[{"text":"hmm","thought":true}],"role":"model"},"finishReason":"MAX_TOKENS"}]}`, failure.ErrEmptyAnswer},
		{"empty_object", `{}`, failure.ErrEmptyAnswer},
		{"no_candidates", `{"candidates":[],"usageMetadata":{"promptTokenCount":3}}`, failure.ErrEmptyAnswer},
		{"not_json", `<html>Bad Gateway</html>`, failure.ErrMalformed},
		{"truncated", `{"candidates":[{"content":{"parts":[{"text":"Hel`, failure.ErrMalformed},
		{"array", `[{"error":{"code":429}}]`, failure.ErrMalformed},
		{"wrong_type", `{"candidates":"none"}`, failure.ErrMalformed},
		{"error_object", `{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}`, failure.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(tt.body))
			})
			r, err := c.Chat(context.Background(), simpleCall("gemini-2.5-flash"))
			if r != nil {
				t.Errorf("Chat returned a response with an error")
			}
			ue := asUpstream(t, err)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v; want %v", err, tt.want)
			}
			if ue.Status != http.StatusOK || !bytes.Equal(ue.Body, []byte(tt.body)) {
				t.Errorf("Status, Body = %d, %q; want 200 and the body", ue.Status, ue.Body)
			}
		})
	}
}

func TestChatTransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	c := New(Options{Name: "gemini", BaseURL: url, APIKey: testKey, Client: srv.Client()})
	_, err := c.Chat(context.Background(), simpleCall("gemini-2.5-flash"))
	ue := asUpstream(t, err)
	if ue.Status != 0 || ue.Err == nil || ue.Header != nil {
		t.Errorf("Status, Err, Header = %d, %v, %v; want 0, an error, nil", ue.Status, ue.Err, ue.Header)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("error text holds the API key")
	}
}

func TestChatHangCancelled(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	c, _ := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Chat(ctx, simpleCall("gemini-2.5-flash"))
		done <- err
	}()
	<-entered
	cancel()
	err := <-done
	ue := asUpstream(t, err)
	if !errors.Is(err, context.Canceled) || ue.Status != 0 {
		t.Errorf("err = %v, Status %d; want context.Canceled and Status 0", err, ue.Status)
	}
}

func TestDefaultClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(okAnswer))
	}))
	defer srv.Close()
	c := New(Options{Name: "gemini", BaseURL: srv.URL})
	defer c.hc.CloseIdleConnections()
	if c.hc == http.DefaultClient || c.hc.Timeout != 0 {
		t.Errorf("default client = %p with Timeout %v; want a client of its own without Timeout", c.hc, c.hc.Timeout)
	}
	r, err := c.Chat(context.Background(), simpleCall("gemini-2.5-flash"))
	if err != nil || r.Content != "ok" {
		t.Fatalf("Chat = %+v, %v; want ok", r, err)
	}
}

func TestCapBody(t *testing.T) {
	tests := []struct{ in, want int }{{0, 0}, {10, 10}, {failure.MaxBody, failure.MaxBody}, {failure.MaxBody + 1, failure.MaxBody}}
	for _, tt := range tests {
		in := make([]byte, tt.in)
		got := capBody(in)
		if len(got) != tt.want {
			t.Errorf("len(capBody(%d bytes)) = %d; want %d", tt.in, len(got), tt.want)
		}
		if len(got) > 0 && &got[0] == &in[0] {
			t.Errorf("capBody(%d bytes) did not copy", tt.in)
		}
	}
}

// TestRedirectIsNotFollowed: a base URL answered with a redirect is the
// wrong one; the call fails with the 3xx (a configuration error), and
// the address it points to never gets the prompt.
func TestRedirectIsNotFollowed(t *testing.T) {
	moved := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/moved/") {
			moved <- struct{}{}
			w.Write([]byte(okAnswer))
			return
		}
		http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := New(Options{Name: "gemini", BaseURL: srv.URL, APIKey: testKey, Client: srv.Client()})
	_, err := c.Chat(context.Background(), simpleCall("gemini-2.5-flash"))
	ue := asUpstream(t, err)
	if ue.Status != http.StatusTemporaryRedirect {
		t.Fatalf("Status = %d, want 307 (the redirect, not followed)", ue.Status)
	}
	if v := failure.Classify(err, time.Now()); v.Class != failure.BadConfig {
		t.Errorf("class %v, want BadConfig: the base URL is wrong", v.Class)
	}
	select {
	case <-moved:
		t.Error("the redirect's target was called")
	default:
	}
}
