package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/internal/testenv"
)

// Time to first token over HTTP (issue 13, item 3): a stream slower than
// the first-token timeout fails over, and while a stream waits (for its
// first token, for a continuation) the caller gets SSE keep-alive comments,
// every 10 s by default, so that proxies and clients keep the connection.
// The chains set nothing but their routes: defaults only, unless a test is
// about an option.
const ttftChains = `
chains:
  plain:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
  think:
    routes: [groq/openai/gpt-oss-120b, groq/llama-3.1-8b-instant]
  one:
    routes: [groq/llama-3.3-70b-versatile]
  message:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
    fallback: {message: "The assistant is resting. Please try again in a minute."}
`

const keepAliveEvent = ": keep-alive"

// rawStream is a streamed response read event by event (a data event or
// a comment, each ended by a blank line) on its own goroutine.
type rawStream struct {
	resp   *http.Response
	events chan string // each event without its blank line
	end    chan error  // then the body's end: nil at a clean EOF
}

// openSSE posts a streaming request on chain; the response comes on the
// channel once its status is written.
func (h *harness) openSSE(chain string) <-chan *rawStream {
	ch := make(chan *rawStream, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/chat/completions", bytes.NewReader(streamBody(chain, false)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			close(ch)
			return
		}
		rs := &rawStream{resp: resp, events: make(chan string, 64), end: make(chan error, 1)}
		go rs.read()
		ch <- rs
	}()
	return ch
}

func (rs *rawStream) read() {
	defer rs.resp.Body.Close()
	defer close(rs.events)
	rd := bufio.NewReader(rs.resp.Body)
	var ev strings.Builder
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" {
				err = nil
			}
			rs.end <- err
			return
		}
		if line == "\n" {
			rs.events <- strings.TrimSuffix(ev.String(), "\n")
			ev.Reset()
			continue
		}
		ev.WriteString(line)
	}
}

// rest reads the events to the body's end.
func (rs *rawStream) rest(t *testing.T) (events []string, end error) {
	t.Helper()
	timeout := time.After(10 * time.Second) // a real bound: the body comes over the network
	for {
		select {
		case ev, ok := <-rs.events:
			if !ok {
				return events, <-rs.end
			}
			events = append(events, ev)
		case <-timeout:
			t.Fatalf("the stream did not end; so far: %q", events)
		}
	}
}

// timerDue waits until a timer of the gateway's clock is due at t0+at: the
// code under test has reached that wait. If none comes, it lets the clock
// run on (so that nothing is left waiting on it) and fails.
func (h *harness) timerDue(at time.Duration, what string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.clk.BlockUntilDeadline(ctx, t0.Add(at)); err != nil {
		h.clk.Advance(10 * time.Minute)
		h.t.Fatalf("nothing is due at %s: %s", at, what)
	}
}

// statusWritten waits for the response's status to be written, which the first
// keep-alive does; if it does not come, it lets the clock run on and
// fails.
func (h *harness) statusWritten(open <-chan *rawStream, what string) *rawStream {
	h.t.Helper()
	select {
	case rs := <-open:
		if rs == nil {
			h.t.Fatalf("%s: the request failed", what)
		}
		return rs
	case <-time.After(10 * time.Second): // a real bound: the status comes over the network
		h.clk.Advance(10 * time.Minute)
		h.t.Fatalf("%s: no status was written", what)
	}
	return nil
}

// next reads one event.
func (rs *rawStream) next(t *testing.T) string {
	t.Helper()
	select {
	case ev := <-rs.events:
		return ev
	case <-time.After(10 * time.Second): // a real bound: the event comes over the network
		t.Fatal("no event came")
	}
	return ""
}

// dataEvents splits events into keep-alive comments and data events,
// failing on anything else.
func dataEvents(t *testing.T, events []string) (keepAlives int, data []string) {
	t.Helper()
	for _, ev := range events {
		switch {
		case ev == keepAliveEvent:
			keepAlives++
		case strings.HasPrefix(ev, "data: "):
			data = append(data, strings.TrimPrefix(ev, "data: "))
		default:
			t.Fatalf("event %q is neither a keep-alive nor data", ev)
		}
	}
	return keepAlives, data
}

// contentOf is the content the data events carried, and whether they
// ended with [DONE].
func contentOf(t *testing.T, data []string) (content string, done bool) {
	t.Helper()
	var body strings.Builder
	for _, d := range data {
		body.WriteString("data: " + d + "\n\n")
	}
	content, _, _ = streamed(t, []byte(body.String()))
	return content, len(data) > 0 && data[len(data)-1] == "[DONE]"
}

// TestStreamFirstTokenFailsOver: a route whose first token would take 20 s
// is given up at the 10 s first-token timeout; the caller gets the next
// route's whole answer, and the slow route is logged as a timeout and
// rests.
func TestStreamFirstTokenFailsOver(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, ttftChains)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Delay: 20 * time.Second})
	open := h.openSSE("plain")
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	h.timerDue(10*time.Second, "the first-token timeout")
	h.clk.Set(t0.Add(10 * time.Second))
	rs := h.statusWritten(open, "at the 10s first-token timeout")
	events, end := rs.rest(t)
	_, data := dataEvents(t, events)
	const next = "groq/llama-3.1-8b-instant"
	if content, done := contentOf(t, data); rs.resp.StatusCode != 200 || end != nil || content != defaultAnswer(next) || !done {
		t.Fatalf("status %d, content %q, [DONE] %v, end %v; want %s's whole answer", rs.resp.StatusCode, content, done, end, next)
	}
	atts := h.recs.all()
	if len(atts) != 2 || atts[0].Route != "groq/llama-3.3-70b-versatile" || atts[0].Class.String() != "timeout" || atts[0].Latency != 10*time.Second {
		t.Errorf("attempts %+v; want the slow route logged as a timeout after 10s, then %s", atts, next)
	}
	if r, ok := h.rest("groq/llama-3.3-70b-versatile"); !ok || r.Class != "timeout" {
		t.Errorf("rest %+v (%v), want the slow route resting as a timeout", r, ok)
	}
}

// TestStreamKeepAliveWhileThinking: a thinking route given 30 s for its
// first token answers at 25 s; meanwhile the caller gets a keep-alive
// comment at 10 s (which writes the status: 200, an event stream) and at
// 20 s, and then the answer, ending with [DONE].
func TestStreamKeepAliveWhileThinking(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, ttftChains)
	const route = "groq/openai/gpt-oss-120b"
	h.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 25 * time.Second})
	open := h.openSSE("think")
	h.waitCalls("groq", "openai/gpt-oss-120b", 1)
	h.timerDue(10*time.Second, "the first keep-alive")
	h.clk.Set(t0.Add(10 * time.Second))
	rs := h.statusWritten(open, "at 10s")
	if ct := rs.resp.Header.Get("Content-Type"); rs.resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q; want an event stream", rs.resp.StatusCode, ct)
	}
	if ev := rs.next(t); ev != keepAliveEvent {
		t.Fatalf("at 10s: event %q, want a keep-alive", ev)
	}
	h.timerDue(20*time.Second, "the second keep-alive")
	h.clk.Set(t0.Add(20 * time.Second))
	if ev := rs.next(t); ev != keepAliveEvent {
		t.Fatalf("at 20s: event %q, want a keep-alive", ev)
	}
	h.timerDue(25*time.Second, "the route's answer")
	h.clk.Set(t0.Add(25 * time.Second))
	events, end := rs.rest(t)
	n, data := dataEvents(t, events)
	if content, done := contentOf(t, data); n != 0 || end != nil || content != defaultAnswer(route) || !done {
		t.Errorf("after the keep-alives: %d more, content %q, [DONE] %v, end %v; want %s's whole answer", n, content, done, end, route)
	}
}

// TestStreamFailsBeforeKeepAlive: a stream that fails before the first
// keep-alive is due gets its ordinary status and JSON error, with
// Retry-After.
func TestStreamFailsBeforeKeepAlive(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, ttftChains)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	got := h.post("/v1/chat/completions", "application/json", streamBody("one", false))
	if got.status != http.StatusServiceUnavailable || got.errorCode(t) != "no_route_available" || got.header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q, body %s; want a 503 in OpenAI's format", got.status, got.header.Get("Retry-After"), got.body)
	}
}

// TestStreamFailsAfterKeepAlive: a stream whose routes all fail after a
// keep-alive committed its status (each slower than the 10 s first-token
// timeout: at 10 s, then 20 s) gets the failure inside the stream, as an
// OpenAI-style error event, and a clean end; or, on a chain with a
// fallback message, that message as a stream ending with [DONE].
func TestStreamFailsAfterKeepAlive(t *testing.T) {
	checkLeaks(t)
	for _, chain := range []string{"plain", "message"} {
		t.Run(chain, func(t *testing.T) {
			h := newHarness(t, ttftChains)
			h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
			h.emu.Script("groq", "llama-3.1-8b-instant", emulator.Step{Kind: emulator.Hang})
			open := h.openSSE(chain)
			h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
			h.timerDue(10*time.Second, "the first keep-alive")
			h.clk.Set(t0.Add(10 * time.Second))
			rs := h.statusWritten(open, "at 10s")
			if ev := rs.next(t); ev != keepAliveEvent {
				t.Fatalf("at 10s: event %q, want a keep-alive", ev)
			}
			h.waitCalls("groq", "llama-3.1-8b-instant", 1)
			h.timerDue(20*time.Second, "the second route's first-token timeout")
			h.clk.Set(t0.Add(20 * time.Second))
			events, end := rs.rest(t)
			_, data := dataEvents(t, events)
			if rs.resp.StatusCode != 200 || end != nil {
				t.Fatalf("status %d, end %v; want 200 and a clean end", rs.resp.StatusCode, end)
			}
			if chain == "message" {
				content, done := contentOf(t, data)
				if content != "The assistant is resting. Please try again in a minute." || !done {
					t.Errorf("content %q, [DONE] %v; want the fallback message as a stream", content, done)
				}
				// The headers went out with the keep-alive: the trailers
				// say it was the fallback.
				if got := rs.resp.Trailer.Get("X-Tollfree-Fallback"); got != "message" {
					t.Errorf("trailer X-Tollfree-Fallback = %q, want message (trailers %v)", got, rs.resp.Trailer)
				}
				return
			}
			var ev struct {
				Error struct{ Message, Type, Code string }
			}
			if len(data) != 1 || json.Unmarshal([]byte(data[0]), &ev) != nil || ev.Error.Code != "no_route_available" ||
				ev.Error.Type != "server_error" || !strings.Contains(ev.Error.Message, "timeout") {
				t.Errorf("data events %q; want one error event saying no route could answer", data)
			}
		})
	}
}

// TestStreamKeepAliveWhileContinuing: a stream cut after three words waits
// for its continuation on the next route (8 s late, under its first-token
// timeout); with server.stream_keepalive: 3s the caller gets a keep-alive
// at 3 s and at 6 s, between the words, and then the rest of the answer,
// once, and [DONE].
func TestStreamKeepAliveWhileContinuing(t *testing.T) {
	checkLeaks(t)
	const answer = "Tollfree keeps an AI feature answering on the free tiers of many providers."
	h := harnessOf(t, startStackWith(t, stackOptions{providers: emutest.Providers, config: "server: {stream_keepalive: 3s}\n" + ttftChains}))
	emutest.SameAnswer(h.emu, answer, "groq/llama-3.3-70b-versatile", "groq/llama-3.1-8b-instant")
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 3})
	h.emu.Script("groq", "llama-3.1-8b-instant", emulator.Step{Kind: emulator.Answer, Delay: 8 * time.Second})
	open := h.openSSE("plain")
	h.waitCalls("groq", "llama-3.1-8b-instant", 1)
	rs := h.statusWritten(open, "after the first words")
	var events []string
	for _, at := range []time.Duration{3 * time.Second, 6 * time.Second} {
		h.timerDue(at, "a keep-alive")
		h.clk.Set(t0.Add(at))
		// Read up to the keep-alive before the clock moves on: it is
		// written on another goroutine, which would otherwise see the
		// continuation's words come first and hold it back.
		for ev := ""; ev != keepAliveEvent; events = append(events, ev) {
			ev = rs.next(t)
		}
	}
	h.timerDue(8*time.Second, "the continuation")
	h.clk.Set(t0.Add(8 * time.Second))
	more, end := rs.rest(t)
	events = append(events, more...)
	var order []string
	for _, ev := range events {
		if ev == keepAliveEvent {
			order = append(order, "keep-alive")
		} else if len(order) == 0 || order[len(order)-1] != "data" {
			order = append(order, "data")
		}
	}
	_, data := dataEvents(t, events)
	content, done := contentOf(t, data)
	if content != answer || !done || end != nil {
		t.Errorf("content %q, [DONE] %v, end %v; want the whole answer once", content, done, end)
	}
	if got := strings.Join(order, ", "); got != "data, keep-alive, keep-alive, data" {
		t.Errorf("events: %s; want the first words, two keep-alives, then the rest", got)
	}
}

// TestOpenAIClientReadsKeepAlives: the official openai-go client reads a
// stream that had keep-alive comments while a thinking route worked (at 10
// and 20 s) as an ordinary successful stream.
func TestOpenAIClientReadsKeepAlives(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, ttftChains)
	const route = "groq/openai/gpt-oss-120b"
	h.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 25 * time.Second})
	raw := &teeTransport{}
	c := openai.NewClient(option.WithBaseURL(h.srv.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: raw}))
	type result struct {
		acc openai.ChatCompletionAccumulator
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		s := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
			Model:    "think",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What does tollfree do?")},
		})
		for s.Next() {
			r.acc.AddChunk(s.Current())
		}
		r.err = s.Err()
		done <- r
	}()
	h.waitCalls("groq", "openai/gpt-oss-120b", 1)
	for i, at := range []time.Duration{10 * time.Second, 20 * time.Second} {
		h.timerDue(at, "a keep-alive")
		h.clk.Set(t0.Add(at))
		// The keep-alive is written on another goroutine: it must have
		// reached the client before the clock moves on.
		testenv.WaitFor(t, "a keep-alive", func() bool { return raw.keepAlives() > i })
	}
	h.timerDue(25*time.Second, "the answer")
	h.clk.Set(t0.Add(25 * time.Second))
	r := <-done
	if r.err != nil || len(r.acc.Choices) != 1 {
		t.Fatalf("stream: %v, %d choices", r.err, len(r.acc.Choices))
	}
	if ch := r.acc.Choices[0]; r.acc.Model != route || ch.Message.Content != defaultAnswer(route) || ch.FinishReason != "stop" {
		t.Errorf("model %q, content %q, finish %q; want %s's answer", r.acc.Model, ch.Message.Content, ch.FinishReason, route)
	}
	if n := raw.keepAlives(); n != 2 {
		t.Errorf("%d keep-alives in the body the client read, want 2", n)
	}
}

// teeTransport keeps a copy of the response body its client reads.
type teeTransport struct {
	mu   sync.Mutex // guards body
	body []byte
}

func (t *teeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(resp.Body, t), resp.Body}
	}
	return resp, err
}

func (t *teeTransport) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.body = append(t.body, p...)
	return len(p), nil
}

// keepAlives counts the keep-alive comments the client has read.
func (t *teeTransport) keepAlives() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Count(t.body, []byte(keepAliveEvent+"\n\n"))
}
