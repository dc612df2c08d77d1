package e2e_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state/memstore"
)

// Broken streams rescued with the defaults (issue 13): two or three
// routes, no continuation option, no timeout set. Groq's routes continue
// by prefix (Groq documents an assistant prefill), Cerebras's by instruct.

const contChains = `
chains:
  story:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant, cerebras/gpt-oss-120b]
  told:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b, groq/llama-3.1-8b-instant]
  alone:
    routes: [groq/llama-3.3-70b-versatile]
`

// contAnswer is every route's answer: more than 40 words, streamed a word
// a chunk.
const contAnswer = "Tollfree is one OpenAI-compatible endpoint that keeps an AI feature answering on the free tiers of many providers. " +
	"It walks a chain of routes, skips the ones resting or out of budget, hedges a slow one, and when a stream breaks " +
	"halfway it asks the next route to continue the answer, trimming any overlap so that the caller sees one coherent reply from start to end."

// newContHarness is a gateway on contChains whose routes all answer
// contAnswer.
func newContHarness(t *testing.T, o stackOptions) *harness {
	t.Helper()
	o.config = contChains
	h := harnessOf(t, startStackWith(t, o))
	emutest.SameAnswer(h.emu, contAnswer, "groq/llama-3.3-70b-versatile", "groq/llama-3.1-8b-instant", "cerebras/gpt-oss-120b")
	return h
}

// rescued fails the test unless body is one whole, coherent answer: every
// event JSON, the text exactly contAnswer (nothing repeated or restarted),
// one finish_reason, no error event, and [DONE] at the end.
func rescued(t *testing.T, r reply) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	body := string(r.body)
	if !strings.HasSuffix(body, "data: [DONE]\n\n") || strings.Contains(body, `"error"`) {
		t.Fatalf("the stream does not end with [DONE] alone:\n%s", body)
	}
	content, _, finishes := streamed(t, r.body)
	if content != contAnswer {
		t.Fatalf("the caller got\n%q\nwant\n%q", content, contAnswer)
	}
	if len(finishes) != 1 || finishes[0] != "stop" {
		t.Errorf("finish reasons %v, want one stop", finishes)
	}
}

// contAttempts lists a request's attempts as "route class method part".
func contAttempts(h *harness, id string) string {
	var out []string
	for _, a := range h.recs.forRequest(id) {
		out = append(out, fmt.Sprintf("%s %s %s %d", a.Route, a.Class, a.Method, a.Part))
	}
	return strings.Join(out, ", ")
}

// prefillRefusals counts the calls of a route refused for their prefill.
func prefillRefusals(h *harness, model string) int {
	n := 0
	for _, rec := range h.emu.Records() {
		if rec.Model == model && rec.Behaviour == "prefill_refused" {
			n++
		}
	}
	return n
}

// TestStreamCutContinued: a stream cut after 40 tokens is completed by the
// next route, by prefix: the caller gets one whole answer, its finish and
// [DONE], nothing repeated; the call log has the cut and the continuation.
func TestStreamCutContinued(t *testing.T) {
	checkLeaks(t)
	h := newContHarness(t, stackOptions{})
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 40})
	r := h.post("/v1/chat/completions", "application/json", streamBody("story", true))
	rescued(t, r)
	want := "groq/llama-3.3-70b-versatile overloaded  0, groq/llama-3.1-8b-instant ok prefix 1"
	if a := contAttempts(h, r.header.Get("X-Request-Id")); a != want {
		t.Errorf("attempts: %s\nwant %s", a, want)
	}
}

// TestRescuedStreamAttributed (issue 33): a stream cut on the first route
// and finished by the second names, in its chunks, the route that wrote
// them: the first part's chunks the first route, the last chunks (finish
// and usage) the route that finished it; its usage is the sum of the
// parts; and each part's call-log line has its own route's tokens, the
// broken part's estimated from what it streamed and marked so.
func TestRescuedStreamAttributed(t *testing.T) {
	checkLeaks(t)
	h := newContHarness(t, stackOptions{})
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 40})
	r := h.post("/v1/chat/completions", "application/json", streamBody("story", true))
	rescued(t, r)
	evs := events(t, r.body)
	if len(evs) < 3 {
		t.Fatalf("%d events", len(evs))
	}
	if m := evs[0]["model"]; m != "groq/llama-3.3-70b-versatile" {
		t.Errorf("first chunk names %v, want the first route", m)
	}
	last := evs[len(evs)-1]
	if m := last["model"]; m != "groq/llama-3.1-8b-instant" {
		t.Errorf("the usage chunk names %v, want the route that finished the answer", m)
	}
	usage, _ := last["usage"].(map[string]any)
	if usage == nil {
		t.Fatalf("no usage chunk: %v", last)
	}
	recs := h.recs.forRequest(r.header.Get("X-Request-Id"))
	if len(recs) != 2 {
		t.Fatalf("%d call-log lines, want 2", len(recs))
	}
	broken, cont := recs[0], recs[1]
	if broken.TokensOut == 0 || !broken.TokensEstimated || broken.TokensIn == 0 {
		t.Errorf("the broken part's line: in %d out %d estimated %v, want its own tokens, estimated", broken.TokensIn, broken.TokensOut, broken.TokensEstimated)
	}
	if cont.TokensOut == 0 || cont.TokensEstimated {
		t.Errorf("the continuation's line: out %d estimated %v, want what its route reported", cont.TokensOut, cont.TokensEstimated)
	}
	if got, want := int(usage["completion_tokens"].(float64)), broken.TokensOut+cont.TokensOut; got != want {
		t.Errorf("usage completion_tokens %d, want the parts' sum %d", got, want)
	}
}

// TestStreamPrefillRefusedContinued: the next route refuses the prefill
// (Mistral-style 400): it is asked again at once by instruct and completes
// the answer; the refusal rests nothing and never reaches the caller. It
// is learned: the next request, and another gateway on the same state
// store, ask that route by instruct straight away.
func TestStreamPrefillRefusedContinued(t *testing.T) {
	checkLeaks(t)
	clk := clock.NewFake(t0)
	st, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := newContHarness(t, stackOptions{clock: clk, store: st})
	h.emu.AddModel("groq", emulator.Model{ID: "llama-3.1-8b-instant", Answer: contAnswer, RefusePrefill: true})
	cut := emulator.Step{Kind: emulator.StreamCut, After: 40}

	h.emu.Script("groq", "llama-3.3-70b-versatile", cut)
	r := h.post("/v1/chat/completions", "application/json", streamBody("story", false))
	rescued(t, r)
	want := "groq/llama-3.3-70b-versatile overloaded  0, groq/llama-3.1-8b-instant unsupported prefix 1, groq/llama-3.1-8b-instant ok instruct 1"
	if a := contAttempts(h, r.header.Get("X-Request-Id")); a != want {
		t.Fatalf("attempts: %s\nwant %s", a, want)
	}
	if _, ok := h.rest("groq/llama-3.1-8b-instant"); ok {
		t.Error("the route that refused the prefill rests")
	}

	clk.Advance(time.Minute) // past the cut route's rest
	h.emu.Script("groq", "llama-3.3-70b-versatile", cut)
	r = h.post("/v1/chat/completions", "application/json", streamBody("story", false))
	rescued(t, r)
	want = "groq/llama-3.3-70b-versatile overloaded  0, groq/llama-3.1-8b-instant ok instruct 1"
	if a := contAttempts(h, r.header.Get("X-Request-Id")); a != want {
		t.Errorf("the next request: attempts: %s\nwant %s", a, want)
	}
	if n := prefillRefusals(h, "llama-3.1-8b-instant"); n != 1 {
		t.Errorf("the route was asked for a prefill %d times, want once", n)
	}

	// Another gateway on the same store (another instance, or this one
	// restarted) knows it too.
	clk2 := clock.NewFake(t0.Add(2 * time.Minute))
	h2 := newContHarness(t, stackOptions{clock: clk2, store: st})
	h2.emu.AddModel("groq", emulator.Model{ID: "llama-3.1-8b-instant", Answer: contAnswer, RefusePrefill: true})
	h2.emu.Script("groq", "llama-3.3-70b-versatile", cut)
	r = h2.post("/v1/chat/completions", "application/json", streamBody("story", false))
	rescued(t, r)
	if a := contAttempts(h2, r.header.Get("X-Request-Id")); a != want {
		t.Errorf("another gateway: attempts: %s\nwant %s", a, want)
	}
	if n := prefillRefusals(h2, "llama-3.1-8b-instant"); n != 0 {
		t.Errorf("another gateway asked for a prefill %d times, want none", n)
	}
}

// TestStreamStallContinued: a stream that goes silent after 40 tokens,
// past the chain's idle timeout (30 s by default, on the fake clock), is
// completed by the next route.
func TestStreamStallContinued(t *testing.T) {
	checkLeaks(t)
	h := newContHarness(t, stackOptions{})
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamStall, After: 40})
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/chat/completions", strings.NewReader(string(streamBody("story", false))))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	rd := bufio.NewReader(resp.Body)
	for n := 0; n < 40; {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended after %d events: %v\n%s", n, err, body.String())
		}
		body.WriteString(line)
		if strings.HasPrefix(line, "data: ") {
			n++
		}
	}
	if h.emu.Calls("groq", "llama-3.1-8b-instant") != 0 {
		t.Fatal("continued before the stream went silent")
	}
	h.clk.Advance(30 * time.Second)
	rest := new(strings.Builder)
	if _, err := bufio.NewReader(rd).WriteTo(rest); err != nil {
		t.Fatal(err)
	}
	body.WriteString(rest.String())
	rescued(t, reply{status: resp.StatusCode, header: resp.Header, body: []byte(body.String())})
	want := "groq/llama-3.3-70b-versatile timeout  0, groq/llama-3.1-8b-instant ok prefix 1"
	if a := contAttempts(h, resp.Header.Get("X-Request-Id")); a != want {
		t.Errorf("attempts: %s\nwant %s", a, want)
	}
}

// TestStreamInstructContinued: a route that continues by instruct
// (Cerebras's, by default) completes the answer whether it repeats the
// last words first or starts over and reproduces the answer (the repeated
// text is trimmed); one that starts over with different words cannot be
// joined, and the next route completes the answer instead.
func TestStreamInstructContinued(t *testing.T) {
	checkLeaks(t)
	for _, tt := range []struct {
		mode emulator.Continuation
		want string
	}{
		{emulator.ContinueOverlap, "cerebras/gpt-oss-120b ok instruct 1"},
		{emulator.ContinueRestart, "cerebras/gpt-oss-120b ok instruct 1"},
		{emulator.ContinueRestartDiverge, "cerebras/gpt-oss-120b unsupported instruct 1, groq/llama-3.1-8b-instant ok prefix 2"},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			h := newContHarness(t, stackOptions{})
			h.emu.AddModel("cerebras", emulator.Model{ID: "gpt-oss-120b", Answer: contAnswer, Continue: tt.mode})
			h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 40})
			r := h.post("/v1/chat/completions", "application/json", streamBody("told", true))
			rescued(t, r)
			want := "groq/llama-3.3-70b-versatile overloaded  0, " + tt.want
			if a := contAttempts(h, r.header.Get("X-Request-Id")); a != want {
				t.Errorf("attempts: %s\nwant %s", a, want)
			}
		})
	}
}

// TestStreamNotContinued: when no route can continue a cut stream, it ends
// with the explicit error event after the text sent, never a finish or
// [DONE].
func TestStreamNotContinued(t *testing.T) {
	checkLeaks(t)
	h := newContHarness(t, stackOptions{})
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 40})
	r := h.post("/v1/chat/completions", "application/json", streamBody("alone", false))
	body := string(r.body)
	if r.status != http.StatusOK || strings.Contains(body, "[DONE]") || !strings.Contains(body, "stream_broken") {
		t.Fatalf("status %d, body:\n%s\nwant the error event and no [DONE]", r.status, body)
	}
	content, _, finishes := streamed(t, r.body)
	if want := strings.Join(emutest.Words(contAnswer)[:40], ""); content != want || len(finishes) != 0 {
		t.Errorf("the caller got %q with finishes %v, want the 40 words and no finish", content, finishes)
	}
}

// TestOpenAIClientRescuedStream: the official openai-go client reads a
// stream cut and rescued on another route as one ordinary stream.
func TestOpenAIClientRescuedStream(t *testing.T) {
	checkLeaks(t)
	h := newContHarness(t, stackOptions{})
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 40})
	c := openai.NewClient(option.WithBaseURL(h.srv.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	s := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "story",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What does tollfree do?")},
	})
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != contAnswer || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("choices %+v, want the whole answer and stop", acc.Choices)
	}
}
