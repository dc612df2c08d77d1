package tollfree_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// continuingProviders is emulatedProviders with groq's 8b model declared
// able to continue a partial answer, and cerebras's llama given a small
// context (a safety-net route, seed 001).
const continuingProviders = `
providers:
  groq:
    preset: groq
    base_url: EMU/groq/v1
    api_key: ${GROQ_API_KEY}
    models:
      llama-3.1-8b-instant: {can_continue: true}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras:
    preset: cerebras
    base_url: EMU/cerebras/v1
    api_key: ${CEREBRAS_API_KEY}
    models:
      llama3.1-8b: {max_context: 1000}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`

// startStack starts what newHarness starts, with the providers block given
// (EMU stands for the emulator's URL), for tests and benchmarks alike.
func startStack(tb testing.TB, providers, chains string) *stack {
	tb.Helper()
	return startStackWith(tb, stackOptions{providers: providers, config: chains})
}

// newHarnessWith is newHarness with the providers block given.
func newHarnessWith(t *testing.T, providers, chains string) *harness {
	t.Helper()
	return harnessOf(t, startStack(t, providers, chains))
}

// streamBody is a streaming request on chain; usage asks for the usage
// chunk.
func streamBody(chain string, usage bool) []byte {
	opts := ""
	if usage {
		opts = `,"stream_options":{"include_usage":true}`
	}
	return []byte(`{"model":"` + chain + `","stream":true` + opts + `,"messages":[{"role":"user","content":"What does tollfree do?"}]}`)
}

// sseClient reads a streamed reply event by event, so that a test can act
// (advance the clock) at a given point of the stream.
type sseClient struct {
	t      *testing.T
	resp   *http.Response
	rd     *bufio.Reader
	raw    bytes.Buffer // every byte read
	cancel context.CancelFunc
}

// openStream posts body and returns once the response headers arrived.
func (h *harness) openStream(body []byte) *sseClient {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		h.t.Fatalf("POST: %v", err)
	}
	c := &sseClient{t: h.t, resp: resp, cancel: cancel}
	c.rd = bufio.NewReader(io.TeeReader(resp.Body, &c.raw))
	h.t.Cleanup(c.close)
	return c
}

// event returns the next event's data ("" at the end of the body).
func (c *sseClient) event() string {
	c.t.Helper()
	var data string
	for {
		line, err := c.rd.ReadString('\n')
		if err != nil {
			return data
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" && data != "" {
			return data
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data += d
		}
	}
}

// rest reads to the end and returns every byte of the body, and the read
// error (an unexpected EOF for an aborted response).
func (c *sseClient) rest() ([]byte, error) {
	_, err := io.Copy(io.Discard, c.rd)
	return c.raw.Bytes(), err
}

func (c *sseClient) close() {
	c.cancel()
	c.resp.Body.Close()
}

// emuTokens is the emulator's token estimate of a text.
func emuTokens(s string) int { return (len(s) + 3) / 4 }

// defaultAnswer is the emulator's answer for a route.
func defaultAnswer(route string) string {
	return "Hello from the tollfree emulator: this answer comes from " + route + "."
}

// waitFor polls until cond holds: for real network events only.
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

// notYet fails the test if a reply has already arrived.
func notYet(t *testing.T, ch <-chan reply, when string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s: a reply already arrived: %d %s", when, r.status, r.body)
	default:
	}
}
