package httpapi

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/route"
)

// parsePlan compiles a config of one Gemini route (a chain "gem") with
// extra, the server's limits at their defaults unless extra sets them.
func parsePlan(t *testing.T, extra string) *config.Plan {
	t.Helper()
	yaml := `
providers:
  gemini:
    preset: gemini
    api_key: ${GEMINI_API_KEY}
    models:
      gemini-2.5-flash: {tpm: 0, tpd: 0, max_context: 0}
chains:
  gem:
    routes: [gemini/gemini-2.5-flash]
` + extra
	plan, err := config.Parse("test.yaml", []byte(yaml), func(k string) string {
		if k == "GEMINI_API_KEY" {
			return "AIzaTestGeminiKey0001"
		}
		return ""
	})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return plan
}

// countingGateway is a fakeGateway for a real server's goroutines: it
// counts the calls that reached it.
type countingGateway struct {
	mu sync.Mutex // guards f, n
	f  *fakeGateway
	n  int
}

func (c *countingGateway) Serve(ctx context.Context, ch *config.Chain, call llm.Call) (*llm.Answer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.f.Serve(ctx, ch, call)
}

func (c *countingGateway) ServeStream(ctx context.Context, ch *config.Chain, call llm.Call) (*llm.AnswerStream, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.f.ServeStream(ctx, ch, call)
}

func (c *countingGateway) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// lastCall is the call the Gateway got last.
func (c *countingGateway) lastCall() llm.Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.call
}

// TestHugeMaxTokens: max_tokens 2^63-1 reaches the Gateway as sent, and
// the request too large for every route that it makes (package route's
// TestHugeMaxTokensIsTooLarge) is refused with a 400 that names max_tokens
// (issue 10).
func TestHugeMaxTokens(t *testing.T) {
	gw := &countingGateway{f: &fakeGateway{err: &route.TooLargeError{Chain: "gem", Tokens: 12, MaxTokens: math.MaxInt64}}}
	srv := serveOver(t, parsePlan(t, ""), gw)
	got := postJSON(t, srv.URL, `{"model":"gem","max_tokens":9223372036854775807,"messages":[{"role":"user","content":"What does tollfree do?"}]}`)
	if got.status != 400 || errorOf(t, got.body)["code"] != "context_length_exceeded" {
		t.Fatalf("status %d: %s; want 400 context_length_exceeded", got.status, got.body)
	}
	if msg, _ := errorOf(t, got.body)["message"].(string); !strings.Contains(msg, "max_tokens 9223372036854775807") {
		t.Errorf("message %q does not name max_tokens", msg)
	}
	if c := gw.lastCall(); c.Request == nil || c.Request.MaxTokens != math.MaxInt64 {
		t.Errorf("the Gateway got %+v, want max_tokens 2^63-1", c.Request)
	}
}

// TestRequestLimits: a request over the message or text limit (the
// defaults: 2048 messages, 2 MiB of text) is refused at decode time with a
// 400 in OpenAI's format naming the limit and the field, and reaches no
// route (the Gateway is not called). 110,000 short messages to a Gemini
// route used to be translated by repeated appends, seconds of CPU each
// (issue 10).
func TestRequestLimits(t *testing.T) {
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
			gw := &countingGateway{f: &fakeGateway{answer: &llm.Answer{Response: llm.Response{Content: "hi"}, ServedBy: llm.ServedByRoute}}}
			got := postJSON(t, serveOver(t, parsePlan(t, ""), gw).URL, tt.body)
			if got.status != 400 {
				t.Fatalf("status %d, want 400: %.300s", got.status, got.body)
			}
			e := errorOf(t, got.body)
			if e["type"] != "invalid_request_error" || e["param"] != tt.param || e["code"] != tt.code || !strings.Contains(e["message"].(string), tt.inMessage) {
				t.Errorf("error %v; want param %q, code %q, a message with %q", e, tt.param, tt.code, tt.inMessage)
			}
			if n := gw.calls(); n != 0 {
				t.Errorf("%d calls reached the Gateway, want none", n)
			}
		})
	}
}

// endless is a stream of 16 KiB chunks, 1 MiB in all, that notes how
// many it gave and when it is closed.
type endless struct {
	given  atomic.Int64
	closed atomic.Bool
}

func (e *endless) Next() (llm.Chunk, error) {
	if e.given.Load() == 64 {
		return llm.Chunk{}, io.EOF
	}
	e.given.Add(1)
	return llm.Chunk{Content: strings.Repeat("word ", 16<<10/5)}, nil
}
func (e *endless) Buffered() int            { return 0 }
func (e *endless) Usage() (llm.Usage, bool) { return llm.Usage{}, false }
func (e *endless) Close() error             { e.closed.Store(true); return nil }

// TestSlowReaderIsDropped: a client that stops reading a long stream is
// dropped after the write timeout: the handler returns and closes the
// stream it relayed, which lets its upstream call go (package route's
// TestStreamClosedMidwayIsCancelled), instead of both being held for as
// long as the client likes (issue 10). The client is a raw TCP connection
// that never reads, on sockets with small buffers so that they fill at once.
func TestSlowReaderIsDropped(t *testing.T) {
	plan := parsePlan(t, "server: {write_timeout: 300ms}\n")
	body := &endless{}
	gw := &fakeGateway{stream: &llm.AnswerStream{ServedBy: llm.ServedByRoute, Route: "gemini/gemini-2.5-flash", ChunkStream: body}}
	api := New(Options{Plan: plan, Gateway: gw})
	var active atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		active.Add(1)
		defer active.Add(-1)
		api.ServeHTTP(w, r)
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
	req := streamBody("gem", false)
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(req), req)
	waitFor(t, "the handler to start the stream", func() bool { return body.given.Load() > 0 })
	waitFor(t, "the handler to give up on a client that does not read", func() bool { return active.Load() == 0 })
	if !body.closed.Load() {
		t.Error("the handler returned without closing the stream: its upstream call is held")
	}
	if body.given.Load() == 64 {
		t.Error("the whole answer was written: the client's buffers did not fill, the test proves nothing")
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

// waitFor polls until cond holds, bounded by 10 s of real time: for real
// network events only.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestConnectionCap: with max_connections 2 and two connections held (idle
// for less than MinIdle, so not reclaimed), a third is answered at once
// with a 503 in OpenAI's format and Retry-After, a health check on another
// is answered 200 (the gateway is busy, not down) and /readyz 503
// saturated, and once a held connection closes, requests are served
// again. The listener is the one `tollfree serve` uses; before it,
// connections were never capped (issue 10).
func TestConnectionCap(t *testing.T) {
	plan := parsePlan(t, "server: {max_connections: 2}\n")
	gw := &countingGateway{f: &fakeGateway{answer: &llm.Answer{Response: llm.Response{Content: "hi", FinishReason: "stop"}, ServedBy: llm.ServedByRoute, Route: "gemini/gemini-2.5-flash"}}}
	api := New(Options{Plan: plan, Gateway: gw})
	srv := httptest.NewUnstartedServer(api)
	lim := ConnLimitsOf(plan)
	lim.MinIdle = time.Hour
	srv.Listener = LimitListener(srv.Listener, lim, srv.Config)
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
		resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"gem","messages":[{"role":"user","content":"What does tollfree do?"}]}`))
		if err != nil {
			t.Fatalf("POST over the cap: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}

	resp, body := post()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" || errorOf(t, body)["code"] != "too_many_connections" {
		t.Errorf("over the cap: %d Retry-After %q %s; want 503, Retry-After 1, too_many_connections", resp.StatusCode, resp.Header.Get("Retry-After"), body)
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
	rz, err := client.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatalf("GET /readyz over the cap: %v", err)
	}
	rb, _ := io.ReadAll(rz.Body)
	rz.Body.Close()
	if rz.StatusCode != 503 || !strings.Contains(string(rb), `"status":"saturated"`) {
		t.Errorf("GET /readyz over the cap: %d %s; want 503 saturated", rz.StatusCode, rb)
	}
	if n := gw.calls(); n != 0 {
		t.Errorf("%d calls reached the Gateway over the cap", n)
	}

	held[0].Close()
	waitFor(t, "a request to be served once a connection is free", func() bool {
		resp, _ := post()
		return resp.StatusCode == 200
	})
}

// TestIdleConnectionsReclaimed: an address at its cap of idle keep-alive
// connections gets its next connection served by closing its idlest one,
// not refused; with the whole cap taken by idle connections, a client from
// anywhere is served the same way; connections serving a request are
// never reclaimed. Before (issue 32) nothing was reclaimed: the new
// connection got a 503, or was closed unanswered.
func TestIdleConnectionsReclaimed(t *testing.T) {
	plan := parsePlan(t, "server: {max_connections: 3, max_connections_per_address: 2}\n")
	api := New(Options{Plan: plan, Gateway: &fakeGateway{}})
	srv := httptest.NewUnstartedServer(api)
	lim := ConnLimitsOf(plan)
	lim.MinIdle = 0
	srv.Listener = LimitListener(srv.Listener, lim, srv.Config)
	srv.Start()
	defer srv.Close()

	// get sends GET /v1/models on a new connection and keeps it open.
	get := func(what string) (net.Conn, int) {
		t.Helper()
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprint(c, "GET /v1/models HTTP/1.1\r\nHost: gateway\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: no answer: %v", what, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return c, resp.StatusCode
	}
	// closed reports whether the server closed c.
	closed := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := c.Read(make([]byte, 1))
		return err != nil
	}
	// held waits until the server holds idle connections idle (or not yet
	// sent a request) and busy ones serving one: it marks one idle just
	// after writing its answer, which the client may read first.
	ll := srv.Listener.(*limitListener)
	held := func(idle, busy int) {
		t.Helper()
		waitFor(t, fmt.Sprintf("%d idle and %d busy connections", idle, busy), func() bool {
			ll.mu.Lock()
			defer ll.mu.Unlock()
			i, b := 0, 0
			for c := range ll.conns {
				if c.idleSince.IsZero() {
					b++
				} else {
					i++
				}
			}
			return i == idle && b == busy
		})
	}
	first, _ := get("the first connection")
	get("the second connection")
	held(2, 0)
	if _, code := get("a third connection from the same address"); code != 200 {
		t.Fatalf("a third connection past the address's cap of 2: %d, want 200 (its idlest one closed)", code)
	}
	if !closed(first) {
		t.Error("the idlest connection was not closed for the third")
	}
	held(2, 0)

	// An active connection (a request whose body is still coming) is
	// never reclaimed: with it and an idle one, the next gets the idle
	// one's slot, then none is left to reclaim.
	active, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer active.Close()
	fmt.Fprint(active, "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	for i := range 4 {
		held(1, 1)
		if _, code := get(fmt.Sprintf("connection %d while one is active", i)); code != 200 {
			t.Fatalf("connection %d with idle ones to reclaim: %d, want 200", i, code)
		}
	}
	_ = active.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	b := make([]byte, 512)
	n, err := active.Read(b)
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Errorf("the connection serving a request was closed for a new one: %v %q", err, b[:n])
	}
}
