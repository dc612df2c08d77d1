package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/route"
)

// What the HTTP API sends for a stream, whatever the Gateway streamed: the
// chunks a route's stream yields are package route's tests
// (TestStreamQuirks, TestStreamBreakContinued...); here they are given, and
// the bytes on the wire are checked.

// planOf is testPlan with ch as its only chain.
func planOf(ch *config.Chain) *config.Plan {
	p := testPlan()
	p.Chains, p.ChainOrder = map[string]*config.Chain{ch.Name: ch}, []string{ch.Name}
	return p
}

// chainOf is a chain named name over the routes (provider/model IDs).
func chainOf(name string, routes ...string) *config.Chain {
	ch := &config.Chain{Name: name, Deadline: 25 * time.Second}
	for _, id := range routes {
		p, m, _ := strings.Cut(id, "/")
		ch.Routes = append(ch.Routes, &config.Route{ID: id, Model: m, Provider: &config.Provider{Name: p}})
	}
	return ch
}

// reply is what a client read.
type reply struct {
	status  int
	header  http.Header
	body    []byte
	readErr error // an aborted response: unexpected EOF
}

// serveOver starts the Server for plan and gw on a real HTTP server (so
// that an aborted response is seen as a client sees it), on a fake clock at
// t0.
func serveOver(t *testing.T, plan *config.Plan, gw Gateway) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(Options{Plan: plan, Gateway: gw, Clock: clock.NewFake(t0)}))
	t.Cleanup(srv.Close)
	return srv
}

// postJSON posts body to url's chat endpoint.
func postJSON(t *testing.T, url, body string) reply {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b, readErr: err}
}

// streamBody is a streamed request on chain; usage asks for the usage
// chunk.
func streamBody(chain string, usage bool) string {
	opts := ""
	if usage {
		opts = `,"stream_options":{"include_usage":true}`
	}
	return `{"model":"` + chain + `","stream":true` + opts + `,"messages":[{"role":"user","content":"What does tollfree do?"}]}`
}

// wantStream is the exact body the gateway must send for an answer
// streamed in pieces: the first piece with the role, each following piece,
// the finish (on the last piece when lastFinish, else on a chunk of its
// own), the usage chunk when usage is not nil, and [DONE]; created is when
// the first token came. It is written out by hand, not with the server's
// encoder.
func wantStream(id string, created time.Time, model string, pieces []string, lastFinish bool, usage *[2]int) string {
	var b strings.Builder
	head := fmt.Sprintf(`data: {"id":"chatcmpl-%s","object":"chat.completion.chunk","created":%d,"model":%q,"choices":`, strings.TrimPrefix(id, "req_"), created.Unix(), model)
	for i, p := range pieces {
		delta := fmt.Sprintf(`{"content":%q}`, p)
		if i == 0 {
			delta = fmt.Sprintf(`{"role":"assistant","content":%q}`, p)
		}
		finish := "null"
		if lastFinish && i == len(pieces)-1 {
			finish = `"stop"`
		}
		fmt.Fprintf(&b, "%s[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", head, delta, finish)
	}
	if !lastFinish {
		fmt.Fprintf(&b, "%s[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", head)
	}
	if usage != nil {
		fmt.Fprintf(&b, "%s[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", head, usage[0], usage[1], usage[0]+usage[1])
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// TestStreamEncoding: a route's streamed answer, in either dialect's
// shape, with or without the usage asked for, goes out byte for byte as
// OpenAI's SSE format: 200, text/event-stream, one event per piece, the
// finish, the usage chunk only when asked, [DONE]; created is when the
// stream began (the first token); X-Tollfree-Route names the route. Also
// an answer over 64 KiB in one piece.
func TestStreamEncoding(t *testing.T) {
	const route = "groq/llama-3.3-70b-versatile"
	answer := "Hello from the tollfree emulator: this answer comes from " + route + "."
	long := strings.TrimSuffix(strings.Repeat(answer+" ", 64<<10/(len(answer)+1)+1), " ")
	tests := []struct {
		name       string
		pieces     []string
		lastFinish bool
	}{
		{"OpenAI dialect", emutest.Words(answer), false},
		{"Gemini's finish with the last text", emutest.Words(answer), true},
		{"one piece over 64 KiB", []string{long}, false},
	}
	for _, tt := range tests {
		for _, usage := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/usage=%v", tt.name, usage), func(t *testing.T) {
				text := strings.Join(tt.pieces, "")
				u := llm.Usage{PromptTokens: 6, CompletionTokens: (len(text) + 3) / 4}
				u.TotalTokens = u.PromptTokens + u.CompletionTokens
				gw := &fakeGateway{stream: &llm.AnswerStream{ServedBy: llm.ServedByRoute, Route: route,
					ChunkStream: &chunks{c: emutest.Chunks(tt.pieces, tt.lastFinish), usage: u}}}
				srv := serveOver(t, planOf(chainOf("groq", route)), gw)
				got := postJSON(t, srv.URL, streamBody("groq", usage))
				if got.status != 200 || got.header.Get("Content-Type") != "text/event-stream; charset=utf-8" || got.readErr != nil {
					t.Fatalf("status %d, Content-Type %q, read error %v: %s", got.status, got.header.Get("Content-Type"), got.readErr, got.body)
				}
				if r := got.header.Get(HeaderRoute); r != route {
					t.Errorf("%s = %q, want the route that sent the first token, %s", HeaderRoute, r, route)
				}
				var wu *[2]int
				if usage {
					wu = &[2]int{u.PromptTokens, u.CompletionTokens}
				}
				want := wantStream(got.header.Get(HeaderRequestID), t0, route, tt.pieces, tt.lastFinish, wu)
				if string(got.body) != want {
					i := 0
					for i < len(want) && i < len(got.body) && want[i] == got.body[i] {
						i++
					}
					t.Errorf("body differs at byte %d of %d (want %d):\n got …%.300s\nwant …%.300s", i, len(got.body), len(want), got.body[max(0, i-100):], want[max(0, i-100):])
				}
			})
		}
	}
}

// TestStreamBrokenEvent: a stream that breaks after its first token and
// that no route could continue (a *route.BrokenError after the chunks)
// ends with the chunks sent so far, then an OpenAI-style error event
// naming the break, and an aborted response: never a finish_reason or
// [DONE]. The router's side of each case: package route's
// TestStreamBreakNotContinued, TestStreamEndsAtTheChainDeadline,
// TestStreamReasoningOnlyIsEmpty.
func TestStreamBrokenEvent(t *testing.T) {
	const rt = "groq/llama-3.3-70b-versatile"
	pieces := emutest.Words("Hello from the tollfree emulator: this answer comes from " + rt + ".")[:3]
	tests := []struct {
		name    string
		err     error
		wantMsg string
	}{
		{"cut, no route can continue", &route.BrokenError{Route: rt, Class: failure.Overloaded, Message: "stream ended before it finished"},
			"the answer from groq/llama-3.3-70b-versatile broke off (overloaded: stream ended before it finished) and no route could continue it; the text received so far is incomplete"},
		{"cut at the chain's deadline", &route.BrokenError{Route: rt, Class: failure.Timeout, Message: "the chain's deadline passed", Deadline: true},
			"the answer from groq/llama-3.3-70b-versatile was cut at the chain's deadline of 6s; the text received so far is incomplete"},
		{"reasoning and no answer", &route.BrokenError{Route: rt, Class: failure.Empty, Message: "the stream ended with no answer"},
			"the answer from groq/llama-3.3-70b-versatile broke off (empty: the stream ended with no answer) and no route could continue it; the text received so far is incomplete"},
	}
	for _, tt := range tests {
		for _, usage := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/usage=%v", tt.name, usage), func(t *testing.T) {
				ch := chainOf("cont", rt, "groq/llama-3.1-8b-instant")
				ch.Deadline = 6 * time.Second
				gw := &fakeGateway{stream: &llm.AnswerStream{ServedBy: llm.ServedByRoute, Route: rt,
					ChunkStream: &chunks{c: emutest.Chunks(pieces, false)[:3], err: tt.err}}}
				srv := serveOver(t, planOf(ch), gw)
				got := postJSON(t, srv.URL, streamBody("cont", usage))
				if got.readErr == nil {
					t.Error("the response ended cleanly; want it aborted")
				}
				full := wantStream(got.header.Get(HeaderRequestID), t0, rt, pieces, false, nil)
				prefix := full[:strings.Index(full, `[{"index":0,"delta":{},"finish_reason":"stop"}]}`)]
				prefix = prefix[:strings.LastIndex(prefix, "data: ")]
				wantErr := `data: {"error":{"message":"` + tt.wantMsg + `","type":"server_error","code":"stream_broken"}}` + "\n\n"
				if string(got.body) != prefix+wantErr {
					t.Fatalf("body:\n%s\nwant:\n%s", got.body, prefix+wantErr)
				}
			})
		}
	}
}

// runePieces cuts s into pieces of at most n bytes on character
// boundaries (a character longer than n alone), as the emulator's
// ChunkBytes does.
func runePieces(s string, n int) []string {
	var out []string
	for s != "" {
		i := 0
		for i < len(s) {
			_, size := utf8.DecodeRuneInString(s[i:])
			if i > 0 && i+size > n {
				break
			}
			i += size
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// TestStreamReasoning: reasoning deltas go out as reasoning_content or are
// dropped, per chain; <think>…</think> text in the content is stripped,
// also when the tags are split across chunks (three bytes a chunk here).
func TestStreamReasoning(t *testing.T) {
	const text = "<think>Two and two.</think>\n\nThe answer is 4 😀."
	tests := []struct {
		reasoning, wantReasoning string
	}{
		{"pass", "first, then Two and two."},
		{"drop", ""},
	}
	for _, tt := range tests {
		t.Run(tt.reasoning, func(t *testing.T) {
			const route = "groq/openai/gpt-oss-120b"
			cs := []llm.Chunk{{Role: "assistant", Reasoning: "first, then "}}
			for _, p := range runePieces(text, 3) {
				cs = append(cs, llm.Chunk{Content: p})
			}
			cs = append(cs, llm.Chunk{FinishReason: "stop"})
			ch := chainOf("think", route)
			ch.Reasoning = tt.reasoning
			gw := &fakeGateway{stream: &llm.AnswerStream{ServedBy: llm.ServedByRoute, Route: route, ChunkStream: &chunks{c: cs}}}
			got := postJSON(t, serveOver(t, planOf(ch), gw).URL, streamBody("think", false))
			if got.status != 200 {
				t.Fatalf("status %d: %s", got.status, got.body)
			}
			if strings.Contains(string(got.body), "think>") || strings.Contains(string(got.body), "<think") {
				t.Errorf("a think tag reached the caller:\n%s", got.body)
			}
			content, reasoning, finishes := sseText(t, got.body)
			if content != "The answer is 4 😀." || reasoning != tt.wantReasoning {
				t.Errorf("content %q, reasoning %q; want %q and %q", content, reasoning, "The answer is 4 😀.", tt.wantReasoning)
			}
			if strings.Join(finishes, ",") != "stop" {
				t.Errorf("finish reasons %v, want one stop", finishes)
			}
		})
	}
}

// sseText returns the content and reasoning_content a streamed body
// carried, and its finish reasons.
func sseText(t *testing.T, body []byte) (content, reasoning string, finishes []string) {
	t.Helper()
	for _, ev := range strings.Split(string(body), "\n\n") {
		d, ok := strings.CutPrefix(ev, "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var m struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					Reasoning string `json:"reasoning_content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("event is not JSON (%v): %q", err, d)
		}
		for _, c := range m.Choices {
			content += c.Delta.Content
			reasoning += c.Delta.Reasoning
			if c.FinishReason != nil {
				finishes = append(finishes, *c.FinishReason)
			}
		}
	}
	return content, reasoning, finishes
}

// heldStream yields a first token and claims more is at hand (Buffered),
// as an upstream whose first read brought several events does; its second
// Next waits until the test lets it go.
type heldStream struct {
	next    int
	release chan struct{}
}

func (s *heldStream) Next() (llm.Chunk, error) {
	s.next++
	switch s.next {
	case 1:
		return llm.Chunk{Role: "assistant", Content: "first"}, nil
	case 2:
		<-s.release
		return llm.Chunk{Content: " second", FinishReason: "stop"}, nil
	}
	return llm.Chunk{}, io.EOF
}
func (s *heldStream) Buffered() int            { return 1 }
func (s *heldStream) Usage() (llm.Usage, bool) { return llm.Usage{}, false }
func (s *heldStream) Close() error             { return nil }

// TestStreamFlushesTheFirstToken: the first token goes out as soon as it
// is at hand, even when more of the answer is (issue 18 item 3: the time
// to first token must not wait for the gateway to read and write what
// came with it). Later chunks that came together still leave together.
func TestStreamFlushesTheFirstToken(t *testing.T) {
	const rt = "groq/llama-3.3-70b-versatile"
	hs := &heldStream{release: make(chan struct{})}
	defer func() {
		select {
		case <-hs.release:
		default:
			close(hs.release)
		}
	}()
	gw := &fakeGateway{stream: &llm.AnswerStream{ServedBy: llm.ServedByRoute, Route: rt, ChunkStream: hs}}
	srv := serveOver(t, planOf(chainOf("groq", rt)), gw)
	// Without the flush, neither the headers nor the first event would
	// reach the client: the handler is blocked in the second Next until
	// the client has them.
	type first struct {
		resp  *http.Response
		event string
		err   error
	}
	got := make(chan first, 1)
	go func() {
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(streamBody("groq", false)))
		if err != nil {
			got <- first{err: err}
			return
		}
		buf := make([]byte, 4096)
		var b strings.Builder
		for !strings.Contains(b.String(), "\n\n") {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		got <- first{resp: resp, event: b.String()}
	}()
	var f first
	select {
	case f = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the first token was not flushed while the rest of the answer was still coming")
	}
	if f.err != nil {
		t.Fatal(f.err)
	}
	resp := f.resp
	defer resp.Body.Close()
	if !strings.Contains(f.event, `"content":"first"`) {
		t.Errorf("first event %q, want the first token", f.event)
	}
	close(hs.release)
	rest, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(rest), `"content":" second"`) || !strings.HasSuffix(string(rest), "data: [DONE]\n\n") {
		t.Errorf("rest of the stream %q, want the second chunk and [DONE]", rest)
	}
}

// flushLog is a ResponseWriter that notes how much of the body had been
// written at each flush.
type flushLog struct {
	*httptest.ResponseRecorder
	flushedAt []int
}

func (f *flushLog) Flush() {
	f.flushedAt = append(f.flushedAt, f.Body.Len())
	f.ResponseRecorder.Flush()
}

// TestStreamFlushes: a streamed answer whose chunks are all at hand is
// flushed twice: its first token at once, and the rest when nothing more
// is at hand. Its end ([DONE]) is written but left for net/http to send
// with the response's own end, in one write (issue 18 item 3).
func TestStreamFlushes(t *testing.T) {
	const rt = "groq/llama-3.3-70b-versatile"
	pieces := emutest.Words("Hello from the tollfree emulator.")
	gw := &fakeGateway{stream: &llm.AnswerStream{ServedBy: llm.ServedByRoute, Route: rt,
		ChunkStream: &chunks{c: emutest.Chunks(pieces, false)}}}
	srv := New(Options{Plan: planOf(chainOf("groq", rt)), Gateway: gw, Clock: clock.NewFake(t0)})
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(streamBody("groq", false)))
	r.Header.Set("Content-Type", "application/json")
	w := &flushLog{ResponseRecorder: httptest.NewRecorder()}
	srv.ServeHTTP(w, r)
	body := w.Body.String()
	if w.Code != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("status %d, body %q", w.Code, body)
	}
	first := strings.Index(body, "\n\n") + 2
	if len(w.flushedAt) != 2 || w.flushedAt[0] != first || w.flushedAt[1] >= len(body) || !strings.HasSuffix(body[:w.flushedAt[1]], `"finish_reason":"stop"}]}`+"\n\n") {
		t.Errorf("flushed at bytes %v of %d, want %d (the first token), then after the finish, before [DONE]", w.flushedAt, len(body), first)
	}
}
