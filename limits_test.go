package tollfree_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/httpapi"
)

// tpmOnlyProviders is emulatedProviders with Groq's 70b model given no
// context size, so that only its TPM (12,000, the preset's) can see that a
// request is too large.
const tpmOnlyProviders = `
providers:
  groq:
    preset: groq
    base_url: EMU/groq/v1
    api_key: ${GROQ_API_KEY}
    models:
      llama-3.3-70b-versatile: {max_context: 0}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`

// TestHugeMaxTokensIsTooLarge: max_tokens 2^63-1 is a request too large
// for every route (by TPM, or by context), refused with a 400 that names
// max_tokens, and no call reaches a route. It used to wrap the token
// reservation negative, which every TPM check passed (issue 10).
func TestHugeMaxTokensIsTooLarge(t *testing.T) {
	const chains = `
chains:
  tpm:
    routes: [groq/llama-3.3-70b-versatile]
  context:
    routes: [groq/llama-3.1-8b-instant]
`
	for _, chain := range []string{"tpm", "context"} {
		t.Run(chain, func(t *testing.T) {
			h := newHarnessWith(t, tpmOnlyProviders, chains)
			got := h.post("/v1/chat/completions", "application/json", []byte(`{"model":"`+chain+`","max_tokens":9223372036854775807,"messages":[{"role":"user","content":"What does tollfree do?"}]}`))
			if got.status != 400 || got.errorCode(t) != "context_length_exceeded" {
				t.Fatalf("status %d: %s; want 400 context_length_exceeded", got.status, got.body)
			}
			msg := got.json(t)["error"].(map[string]any)["message"].(string)
			if !strings.Contains(msg, "max_tokens 9223372036854775807") {
				t.Errorf("message %q does not name max_tokens", msg)
			}
			if n := len(h.emu.Records()); n != 0 {
				t.Errorf("%d calls reached a route, want none", n)
			}
		})
	}
}

// TestRequestLimits: a request over the message or text limit is refused
// at decode time with a 400 in OpenAI's format naming the limit and the
// field, and reaches no route. 110,000 short messages to a Gemini route used
// to be translated by repeated appends, seconds of CPU each (issue 10).
func TestRequestLimits(t *testing.T) {
	// A Gemini route without token limits or a context size: nothing but
	// the request limits stands between such a request and the translation.
	const providers = `
providers:
  gemini:
    preset: gemini
    base_url: EMU/gemini/v1beta
    api_key: ${GEMINI_API_KEY}
    models:
      gemini-2.5-flash: {tpm: 0, tpd: 0, max_context: 0}
`
	const chains = `
chains:
  gem:
    routes: [gemini/gemini-2.5-flash]
`
	var many strings.Builder
	many.WriteString(`{"model":"gem","messages":[`)
	for i := range 110_000 {
		if i > 0 {
			many.WriteByte(',')
		}
		many.WriteString(`{"role":"user","content":"hi"}`)
	}
	many.WriteString(`]}`)
	long := `{"model":"gem","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"` + strings.Repeat("word ", 3<<20/5) + `"}]}`
	tests := []struct {
		name, body, param, code, inMessage string
	}{
		{"110,000 messages", many.String(), "messages", "array_above_max_length", "maximum length 2048, but got an array with length 110000"},
		{"3 MiB of text", long, "messages[1].content", "string_above_max_length", "limit of 2097152 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessWith(t, providers, chains)
			got := h.post("/v1/chat/completions", "application/json", []byte(tt.body))
			if got.status != 400 {
				t.Fatalf("status %d, want 400: %.300s", got.status, got.body)
			}
			e := got.json(t)["error"].(map[string]any)
			if e["type"] != "invalid_request_error" || e["param"] != tt.param || e["code"] != tt.code || !strings.Contains(e["message"].(string), tt.inMessage) {
				t.Errorf("error %v; want param %q, code %q, a message with %q", e, tt.param, tt.code, tt.inMessage)
			}
			if n := len(h.emu.Records()); n != 0 {
				t.Errorf("%d calls reached a route, want none", n)
			}
		})
	}
}

// TestStreamEndsAtTheChainDeadline: the chain's deadline caps a whole
// stream, after its first token too. A route sending a token every 0.9 s
// on a chain with a 6 s deadline is cut at 6 s: the caller gets the tokens
// so far and an explicit error event, never a finish or [DONE]; no
// continuation is tried past the deadline and the route does not rest (it
// was answering). Such a stream used to run on for the whole answer (issue
// 10: 17 s).
func TestStreamEndsAtTheChainDeadline(t *testing.T) {
	const chains = `
chains:
  slow:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
    attempt_timeout: 5s
    deadline: 6s
    idle_timeout: 5s
`
	const tick = 900 * time.Millisecond
	h := newHarnessWith(t, continuingProviders, chains)
	h.emu.AddModel("groq", emulator.Model{ID: "llama-3.3-70b-versatile", ChunkDelay: tick, Answer: strings.TrimSpace(strings.Repeat("word ", 30))})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := h.openStream(streamBody("slow", false))
	for i := 0; i <= 6; i++ { // tokens at 0, 0.9 ... 5.4 s
		if i > 0 {
			at := t0.Add(time.Duration(i) * tick)
			if err := h.clk.BlockUntilDeadline(ctx, at); err != nil {
				t.Fatalf("the route does not wait for its token %d: %v", i, err)
			}
			h.clk.Set(at)
		}
		if ev := c.event(); !strings.Contains(ev, `"content":"word `) {
			t.Fatalf("event %d = %q, want a word", i, ev)
		}
	}
	// The next token is due at 6.3 s; the chain's deadline is 6 s.
	if err := h.clk.BlockUntilDeadline(ctx, t0.Add(7*tick)); err != nil {
		t.Fatalf("the route does not wait for its token 7: %v", err)
	}
	h.clk.Set(t0.Add(6 * time.Second))
	type ending struct {
		body []byte
		err  error
	}
	done := make(chan ending, 1)
	go func() {
		body, err := c.rest()
		done <- ending{body, err}
	}()
	var end ending
	select {
	case end = <-done:
	case <-ctx.Done():
		t.Fatalf("at the chain's 6s deadline the stream is still open; so far:\n%s", c.raw.Bytes())
	}
	if end.err == nil {
		t.Error("the response ended cleanly; want it aborted")
	}
	tail := string(end.body[strings.LastIndex(string(end.body), `"content":"word `):])
	wantErr := `data: {"error":{"message":"the answer from groq/llama-3.3-70b-versatile was cut at the chain's deadline of 6s; the text received so far is incomplete","type":"server_error","code":"stream_broken"}}` + "\n\n"
	if !strings.HasSuffix(tail, "\n\n"+wantErr) || strings.Contains(tail, "[DONE]") || strings.Contains(tail, "finish_reason\":\"stop") {
		t.Errorf("the stream ends with\n%s\nwant the last word, then\n%s", tail, wantErr)
	}
	if !h.clk.Now().Equal(t0.Add(6 * time.Second)) {
		t.Errorf("the clock moved on to %v", h.clk.Now())
	}
	id := c.resp.Header.Get("X-Request-Id")
	atts := h.recs.forRequest(id)
	if len(atts) != 1 || atts[0].Class.String() != "timeout" || !atts[0].RestKey.IsZero() {
		t.Errorf("attempts %+v, want one timeout without a rest", atts)
	}
	if n := h.emu.Calls("groq", "llama-3.1-8b-instant"); n != 0 {
		t.Errorf("%d continuations tried past the deadline", n)
	}
}

// TestSlowReaderIsDropped: a client that stops reading a long stream is
// dropped after the write timeout: the gateway's handler returns and the
// upstream call it relayed is cancelled, instead of both being held for as
// long as the client likes (issue 10). The client is a raw TCP connection
// that never reads, on sockets with small buffers so that they fill at once.
func TestSlowReaderIsDropped(t *testing.T) {
	const config = `
server: {write_timeout: 300ms}
chains:
  long:
    routes: [groq/llama-3.3-70b-versatile]
`
	h := newHarness(t, config)
	// 1 MiB of answer in 16 KiB chunks: far more than the sockets hold.
	answer := strings.TrimSpace(strings.Repeat("word ", 1<<20/5))
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Text: answer, ChunkBytes: 16 << 10})
	var active atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		active.Add(1)
		defer active.Add(-1)
		h.gw.Handler().ServeHTTP(w, r)
	}))
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	body := streamBody("long", false)
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	waitFor(t, "the handler to give up on a client that does not read", func() bool { return active.Load() == 0 })
	atts := h.recs.all()
	if len(atts) != 1 || atts[0].Class.String() != "cancelled" {
		t.Errorf("attempts %+v, want one cancelled: the upstream call is let go", atts)
	}
}

// smallBuffers gives each accepted connection a small send buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// TestConnectionCap: with max_connections 2 and two connections held, a
// third is answered at once with a 503 in OpenAI's format and Retry-After,
// a health check on another is answered 200 (the gateway is busy, not
// down), and once a held connection closes, requests are served again. The
// listener is the one `tollfree serve` uses; before it, connections were
// never capped (issue 10).
func TestConnectionCap(t *testing.T) {
	const config = `
server: {max_connections: 2}
chains:
  answer:
    routes: [groq/llama-3.3-70b-versatile]
`
	h := newHarness(t, config)
	srv := httptest.NewUnstartedServer(h.gw.Handler())
	srv.Listener = httpapi.LimitListener(srv.Listener, h.plan.Server.MaxConnections, h.gw.Handler())
	srv.Start()
	defer srv.Close()

	// Two keep-alive connections, each served once and held open.
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprint(c, "GET /v1/models HTTP/1.1\r\nHost: gateway\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("a connection within the cap: %v %v", resp, err)
		}
		resp.Body.Close()
		held = append(held, c)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	post := func() (*http.Response, []byte) {
		t.Helper()
		resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"answer","messages":[{"role":"user","content":"What does tollfree do?"}]}`))
		if err != nil {
			t.Fatalf("POST over the cap: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}

	resp, body := post()
	got := reply{status: resp.StatusCode, header: resp.Header, body: body}
	if got.status != 503 || got.header.Get("Retry-After") != "1" || got.errorCode(t) != "too_many_connections" {
		t.Errorf("over the cap: %d Retry-After %q %s; want 503, Retry-After 1, too_many_connections", got.status, got.header.Get("Retry-After"), body)
	}
	hz, err := client.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz over the cap: %v", err)
	}
	hb, _ := io.ReadAll(hz.Body)
	hz.Body.Close()
	if hz.StatusCode != 200 || !strings.Contains(string(hb), `"status":"ok"`) {
		t.Errorf("GET /healthz over the cap: %d %s; want 200 ok", hz.StatusCode, hb)
	}
	if n := len(h.emu.Records()); n != 0 {
		t.Errorf("%d calls reached a route over the cap", n)
	}

	held[0].Close()
	waitFor(t, "a request to be served once a connection is free", func() bool {
		resp, _ := post()
		return resp.StatusCode == 200
	})
}
