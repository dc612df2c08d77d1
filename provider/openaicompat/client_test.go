package openaicompat

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testKey = "sk-test-secret"

// upstream is an httptest server running handler; it records the last
// request's header and body.
type upstream struct {
	*httptest.Server
	gotHeader chan http.Header
	gotBody   chan []byte
}

func newUpstream(t *testing.T, handler http.HandlerFunc) (*upstream, *Client) {
	t.Helper()
	u := &upstream{gotHeader: make(chan http.Header, 1), gotBody: make(chan []byte, 1)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "wrong endpoint "+r.Method+" "+r.URL.Path, http.StatusTeapot)
			return
		}
		body, _ := io.ReadAll(r.Body)
		select {
		case u.gotHeader <- r.Header.Clone():
		default:
		}
		select {
		case u.gotBody <- body:
		default:
		}
		handler(w, r)
	}))
	c := New(Options{
		Name: "groq", Flavor: "groq", BaseURL: u.URL + "/v1/", APIKey: testKey,
		Headers: map[string]string{"HTTP-Referer": "https://example.com"},
	})
	t.Cleanup(func() {
		u.Close()
		c.CloseIdleConnections()
	})
	return u, c
}

// block returns a channel the test closes to release hanging handlers. It
// is closed before the server shuts down.
func block(t *testing.T) chan struct{} {
	ch := make(chan struct{})
	t.Cleanup(func() { close(ch) })
	return ch
}

func testCall() provider.Call {
	return provider.Call{
		Model:   "llama-3.3-70b-versatile",
		Request: &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}, MaxTokens: 50, Stream: true, IncludeUsage: true},
		Extra:   map[string]json.RawMessage{"reasoning_format": json.RawMessage(`"parsed"`)},
	}
}

func answer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Ratelimit-Remaining-Requests", "999")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func asUpstream(t *testing.T, err error) *failure.UpstreamError {
	t.Helper()
	var ue *failure.UpstreamError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v (%T), want *failure.UpstreamError", err, err)
	}
	if ue.Provider != "groq" || ue.Flavor != "groq" || ue.Model != "llama-3.3-70b-versatile" {
		t.Errorf("UpstreamError names %q/%q/%q, want groq/groq/llama-3.3-70b-versatile", ue.Provider, ue.Flavor, ue.Model)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("error text holds the API key")
	}
	return ue
}

func TestChat(t *testing.T) {
	u, c := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		answer(w, 200, `{"id":"chatcmpl-1","created":5,"model":"llama-3.3-70b-versatile","choices":[{"message":{"role":"assistant","content":"Hello","reasoning":"greet"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	})
	call := testCall()
	r, err := c.Chat(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.Response{ID: "chatcmpl-1", Created: 5, Model: "llama-3.3-70b-versatile", Content: "Hello", Reasoning: "greet", FinishReason: "stop",
		Usage: llm.Usage{PromptTokens: 3, CompletionTokens: 1, TotalTokens: 4}, UsageKnown: true}
	if r.Header.Get("X-Ratelimit-Remaining-Requests") != "999" {
		t.Errorf("Header lacks the rate-limit header: %v", r.Header)
	}
	r.Header = nil
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got  %+v\nwant %+v", r, want)
	}
	h := <-u.gotHeader
	if got := h.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if got := h.Get("HTTP-Referer"); got != "https://example.com" {
		t.Errorf("HTTP-Referer = %q", got)
	}
	if got := h.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	wantBody := `{"model":"llama-3.3-70b-versatile","messages":[{"role":"user","content":"hi"}],"max_tokens":50,"reasoning_format":"parsed"}`
	if got := string(<-u.gotBody); got != wantBody {
		t.Errorf("upstream body = %s\nwant %s", got, wantBody)
	}
	if !call.Request.Stream || !call.Request.IncludeUsage {
		t.Errorf("Chat modified the call's request")
	}
}

func TestChatFailures(t *testing.T) {
	big := strings.Repeat("x", failure.MaxBody+100)
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		wantStatus int
		wantErr    error // nil: Err must be nil
		wantBody   string
	}{
		{
			name: "429",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "2")
				answer(w, 429, `{"error":{"message":"Rate limit reached ... (RPM)","type":"requests","code":"rate_limit_exceeded"}}`)
			},
			wantStatus: 429,
			wantBody:   `{"error":{"message":"Rate limit reached ... (RPM)","type":"requests","code":"rate_limit_exceeded"}}`,
		},
		{
			name:       "503",
			handler:    func(w http.ResponseWriter, r *http.Request) { answer(w, 503, "upstream overloaded") },
			wantStatus: 503,
			wantBody:   "upstream overloaded",
		},
		{
			name:       "error body is capped",
			handler:    func(w http.ResponseWriter, r *http.Request) { answer(w, 500, big) },
			wantStatus: 500,
			wantBody:   big[:failure.MaxBody],
		},
		{
			name:       "malformed 200",
			handler:    func(w http.ResponseWriter, r *http.Request) { answer(w, 200, `<html>oops</html>`) },
			wantStatus: 200,
			wantErr:    failure.ErrMalformed,
			wantBody:   `<html>oops</html>`,
		},
		{
			name: "empty answer",
			handler: func(w http.ResponseWriter, r *http.Request) {
				answer(w, 200, `{"choices":[{"message":{"content":"  "}}]}`)
			},
			wantStatus: 200,
			wantErr:    failure.ErrEmptyAnswer,
			wantBody:   `{"choices":[{"message":{"content":"  "}}]}`,
		},
		{
			name: "body cut short",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "1000")
				w.WriteHeader(200)
				io.WriteString(w, `{"choices":[{"mess`)
				w.(http.Flusher).Flush()
				conn, _, _ := http.NewResponseController(w).Hijack()
				conn.Close()
			},
			wantStatus: 200,
			wantErr:    io.ErrUnexpectedEOF,
			wantBody:   `{"choices":[{"mess`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newUpstream(t, tt.handler)
			_, err := c.Chat(context.Background(), testCall())
			ue := asUpstream(t, err)
			if ue.Status != tt.wantStatus {
				t.Errorf("Status = %d, want %d", ue.Status, tt.wantStatus)
			}
			if tt.wantErr == nil && ue.Err != nil || tt.wantErr != nil && !errors.Is(ue.Err, tt.wantErr) {
				t.Errorf("Err = %v, want %v", ue.Err, tt.wantErr)
			}
			if string(ue.Body) != tt.wantBody {
				t.Errorf("Body = %.80q (%d bytes), want %.80q (%d bytes)", ue.Body, len(ue.Body), tt.wantBody, len(tt.wantBody))
			}
			if ue.Header == nil {
				t.Errorf("Header = nil, want the response header")
			}
		})
	}
}

// afterHeaders is a RoundTripper that calls then once the response
// headers are in: a test's way to end a ctx exactly during the body read.
type afterHeaders struct {
	rt   http.RoundTripper
	then func()
}

func (a afterHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.rt.RoundTrip(r)
	if err == nil {
		a.then()
	}
	return resp, err
}

func TestChatHangs(t *testing.T) {
	t.Run("no answer", func(t *testing.T) {
		release := block(t)
		arrived := make(chan struct{})
		_, c := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			close(arrived)
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-arrived
			cancel() // the attempt's deadline
		}()
		_, err := c.Chat(ctx, testCall())
		ue := asUpstream(t, err)
		if ue.Status != 0 || !errors.Is(ue.Err, context.Canceled) {
			t.Errorf("got Status %d, Err %v; want 0, context.Canceled", ue.Status, ue.Err)
		}
	})
	t.Run("stall after the headers", func(t *testing.T) {
		release := block(t)
		u, _ := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			io.WriteString(w, `{"choices":[`)
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		c := New(Options{Name: "groq", Flavor: "groq", BaseURL: u.URL + "/v1",
			Client: &http.Client{Transport: afterHeaders{rt: tr, then: cancel}}})
		_, err := c.Chat(ctx, testCall())
		ue := asUpstream(t, err)
		if ue.Status != 200 || !errors.Is(ue.Err, context.Canceled) {
			t.Errorf("got Status %d, Err %v; want 200, context.Canceled", ue.Status, ue.Err)
		}
	})
}

func TestChatTransportError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := New(Options{Name: "groq", Flavor: "groq", BaseURL: "http://" + addr + "/v1", APIKey: testKey})
	defer c.CloseIdleConnections()
	_, err = c.Chat(context.Background(), testCall())
	ue := asUpstream(t, err)
	if ue.Status != 0 || ue.Err == nil || ue.Header != nil {
		t.Errorf("got Status %d, Err %v, Header %v; want 0, a dial error, nil", ue.Status, ue.Err, ue.Header)
	}
	var ne *net.OpError
	if !errors.As(ue.Err, &ne) {
		t.Errorf("Err = %v, want a *net.OpError inside", ue.Err)
	}
}

func TestChatConnectionReset(t *testing.T) {
	_, c := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := http.NewResponseController(w).Hijack()
		conn.Close()
	})
	_, err := c.Chat(context.Background(), testCall())
	ue := asUpstream(t, err)
	if ue.Status != 0 || ue.Err == nil {
		t.Errorf("got Status %d, Err %v; want 0 and the transport error", ue.Status, ue.Err)
	}
}

// TestPrefixWireForm (issue 13): the partial answer of a prefix
// continuation is sent with "prefix": true to Mistral only; every other
// flavor gets a plain trailing assistant message (Groq refuses a message
// field it does not know), and the call's request is left as it was.
func TestPrefixWireForm(t *testing.T) {
	for _, tt := range []struct{ flavor, want string }{
		{"mistral", `{"role":"assistant","content":"Tollfree keeps","prefix":true}`},
		{"groq", `{"role":"assistant","content":"Tollfree keeps"}`},
		{"generic", `{"role":"assistant","content":"Tollfree keeps"}`},
	} {
		t.Run(tt.flavor, func(t *testing.T) {
			u, _ := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				answer(w, 200, `{"id":"x","choices":[{"message":{"role":"assistant","content":" an AI feature answering."},"finish_reason":"stop"}]}`)
			})
			c := New(Options{Name: "groq", Flavor: tt.flavor, BaseURL: u.URL + "/v1"})
			t.Cleanup(c.CloseIdleConnections)
			req := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "Tollfree keeps", Prefix: true}}}
			if _, err := c.Chat(context.Background(), provider.Call{Model: "m", Request: req}); err != nil {
				t.Fatal(err)
			}
			want := `{"model":"m","messages":[{"role":"user","content":"hi"},` + tt.want + `]}`
			if got := string(<-u.gotBody); got != want {
				t.Errorf("body = %s\nwant %s", got, want)
			}
			if !req.Messages[1].Prefix {
				t.Error("the call's request was modified")
			}
		})
	}
}

// TestRedirectIsNotFollowed: a base URL answered with a redirect is the
// wrong one. The call fails with the 3xx, which the classifier reads as
// a configuration error, and the address it points to is never called:
// followed, it would get the prompt (and, on the same host, the key).
func TestRedirectIsNotFollowed(t *testing.T) {
	moved := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/chat/completions" {
			moved <- struct{}{}
			answer(w, 200, `{"choices":[{"message":{"role":"assistant","content":"moved"},"finish_reason":"stop"}]}`)
			return
		}
		http.Redirect(w, r, "/v2/chat/completions", http.StatusPermanentRedirect)
	}))
	defer srv.Close()
	c := New(Options{Name: "groq", Flavor: "groq", BaseURL: srv.URL + "/v1", APIKey: testKey})
	defer c.CloseIdleConnections()
	_, err := c.Chat(context.Background(), testCall())
	ue := asUpstream(t, err)
	if ue.Status != http.StatusPermanentRedirect {
		t.Fatalf("Status = %d, want 308 (the redirect, not followed)", ue.Status)
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

// TestBasicAuthFromTheBaseURL: a base URL with user:password@ and no API
// key (an Ollama behind a proxy that asks for it) is sent with Basic
// authorization, as http.Client would send it, and its password is in no
// error.
func TestBasicAuthFromTheBaseURL(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		http.Error(w, `{"error":{"message":"no"}}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://ollama:hunter2@", 1) + "/v1"
	c := New(Options{Name: "groq", Flavor: "groq", BaseURL: base})
	defer c.CloseIdleConnections()
	_, err := c.Chat(context.Background(), testCall())
	asUpstream(t, err)
	if a := <-got; a != "Basic b2xsYW1hOmh1bnRlcjI=" {
		t.Errorf("Authorization = %q, want Basic ollama:hunter2", a)
	}

	srv.Close() // now a transport error, which quotes the URL
	_, err = c.Chat(context.Background(), testCall())
	if ue := asUpstream(t, err); ue.Status != 0 || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("transport error %q (status %d): want one without the password", err, ue.Status)
	}
}
