package tollfree_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tollfree/tollfree/emulator"
)

const streamChains = `
chains:
  groq:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
    idle_timeout: 5s
  gem:
    routes: [gemini/gemini-2.5-flash, groq/llama-3.3-70b-versatile]
    attempt_timeout: 8s
    deadline: 25s
  or:
    routes: [openrouter/openai/gpt-oss-120b:free, groq/llama-3.3-70b-versatile]
    attempt_timeout: 8s
    deadline: 25s
  cont:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
    idle_timeout: 5s
  nocont:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
    idle_timeout: 5s
  hedge:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
    hedge_delay: 3s
  cached:
    routes: [groq/llama-3.3-70b-versatile]
    cache_ttl: 1h
    idle_timeout: 5s
  think:
    routes: [groq/openai/gpt-oss-120b, groq/llama-3.3-70b-versatile]
    attempt_timeout: 8s
    deadline: 60s
    reasoning: pass
  quiet:
    routes: [groq/openai/gpt-oss-120b, groq/llama-3.3-70b-versatile]
    attempt_timeout: 8s
    deadline: 60s
    reasoning: drop
`

// TestStreamQuirks: every streaming quirk of PROVIDERS.md §3, in each
// dialect, gives the caller the same OpenAI-format stream, byte for byte:
// keep-alive comments, CRLF framing, one malformed event, a missing [DONE],
// a line over 64 KiB, lines split across reads; usage in the last chunk when asked; Gemini's
// streamGenerateContent translated chunk by chunk.
func TestStreamQuirks(t *testing.T) {
	tests := []struct {
		chain, route string
		kind         emulator.Kind
		lastFinish   bool // Gemini sends the finish with the last text
	}{
		{"groq", "groq/llama-3.3-70b-versatile", emulator.Answer, false},
		{"groq", "groq/llama-3.3-70b-versatile", emulator.StreamCRLF, false},
		{"groq", "groq/llama-3.3-70b-versatile", emulator.StreamNoDone, false},
		{"groq", "groq/llama-3.3-70b-versatile", emulator.StreamMalformedEvent, false},
		{"groq", "groq/llama-3.3-70b-versatile", emulator.StreamSplitLines, false},
		{"groq", "groq/llama-3.3-70b-versatile", emulator.StreamLongLine, false}, // over Groq's 12,000 TPM: last
		{"or", "openrouter/openai/gpt-oss-120b:free", emulator.StreamKeepAlive, false},
		{"or", "openrouter/openai/gpt-oss-120b:free", emulator.StreamNoDone, false},
		{"or", "openrouter/openai/gpt-oss-120b:free", emulator.StreamMalformedEvent, false},
		{"gem", "gemini/gemini-2.5-flash", emulator.Answer, true},
		{"gem", "gemini/gemini-2.5-flash", emulator.StreamCRLF, true},
		{"gem", "gemini/gemini-2.5-flash", emulator.StreamKeepAlive, true},
		{"gem", "gemini/gemini-2.5-flash", emulator.StreamMalformedEvent, true},
		{"gem", "gemini/gemini-2.5-flash", emulator.StreamLongLine, true},
		{"gem", "gemini/gemini-2.5-flash", emulator.StreamSplitLines, true},
	}
	h := newHarness(t, streamChains)
	for _, tt := range tests {
		for _, usage := range []bool{false, true} {
			name := tt.route + "/" + string(tt.kind)
			if usage {
				name += "/usage"
			}
			t.Run(name, func(t *testing.T) {
				h.clk.Advance(3 * time.Minute) // fresh minutes of the free tiers' budgets
				p, m, _ := strings.Cut(tt.route, "/")
				h.emu.Script(p, m, emulator.Step{Kind: tt.kind})
				got := h.post("/v1/chat/completions", "application/json", streamBody(tt.chain, usage))
				if got.status != 200 || got.header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
					t.Fatalf("status %d, Content-Type %q: %s", got.status, got.header.Get("Content-Type"), got.body)
				}
				answer := defaultAnswer(tt.route)
				pieces := words(answer)
				if tt.kind == emulator.StreamLongLine {
					n := 64<<10/(len(answer)+1) + 1
					answer = strings.TrimSuffix(strings.Repeat(answer+" ", n), " ")
					pieces = []string{answer}
				}
				var u *[2]int
				if usage {
					u = &[2]int{emuTokens("What does tollfree do?"), emuTokens(answer)}
				}
				want := wantStream(got.header.Get("X-Request-Id"), h.clk.Now(), tt.route, pieces, tt.lastFinish, u)
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
	if n := len(h.recs.all()); n != 2*len(tests) {
		t.Errorf("%d attempts recorded, want one per stream (%d)", n, 2*len(tests))
	}
	for _, a := range h.recs.all() {
		if a.Class.String() != "ok" || !a.Stream || a.TokensOut == 0 {
			t.Errorf("attempt %+v, want an ok stream with its usage", a)
		}
	}
}

// TestStreamFailoverBeforeFirstToken: until the first token, a stream
// fails over like a whole answer (the attempt timeout is a first-token
// timeout), and the caller sees only the next route's stream.
func TestStreamFailoverBeforeFirstToken(t *testing.T) {
	tests := []struct {
		name      string
		chain     string
		first     string
		step      emulator.Step
		advance   time.Duration // fake time to let pass once the first call arrived
		restClass string
	}{
		{"503", "groq", "groq/llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand}, 0, "overloaded"},
		{"429", "groq", "groq/llama-3.3-70b-versatile", emulator.Step{Kind: emulator.RateMinute, RetryAfter: time.Minute}, 0, "rate_minute"},
		{"no first token within the attempt timeout", "groq", "groq/llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang}, 8 * time.Second, "timeout"},
		{"silent stream before its first token", "groq", "groq/llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamStall}, 8 * time.Second, "timeout"},
		{"cut before its first token", "groq", "groq/llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut}, 0, "overloaded"},
		{"OpenRouter's error event before the first token", "or", "openrouter/openai/gpt-oss-120b:free", emulator.Step{Kind: emulator.StreamErrorEvent}, 0, "overloaded"},
		{"Gemini cut before its first token", "gem", "gemini/gemini-2.5-flash", emulator.Step{Kind: emulator.StreamCut}, 0, "overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, streamChains)
			p, m, _ := strings.Cut(tt.first, "/")
			h.emu.Script(p, m, tt.step)
			next := h.plan.Chains[tt.chain].Routes[1].ID
			done := make(chan reply, 1)
			go func() { done <- h.post("/v1/chat/completions", "application/json", streamBody(tt.chain, true)) }()
			if tt.advance > 0 {
				h.waitCalls(p, m, 1)
				h.clk.Advance(tt.advance)
			}
			got := <-done
			answer := defaultAnswer(next)
			want := wantStream(got.header.Get("X-Request-Id"), t0.Add(tt.advance), next, words(answer), false,
				&[2]int{emuTokens("What does tollfree do?"), emuTokens(answer)})
			if string(got.body) != want {
				t.Fatalf("status %d, body:\n%s\nwant:\n%s", got.status, got.body, want)
			}
			if r, ok := h.rest(tt.first); !ok || r.Class != tt.restClass {
				t.Errorf("rest on %s = %+v (%v), want %s", tt.first, r, ok, tt.restClass)
			}
		})
	}
}

// TestStreamHedgeRacesForTheFirstToken: a first route slow to its first
// token is raced after the hedge delay; the second route's first token
// wins, the first is cancelled and logged as a silent loser (it had sent no
// token), and one such loss rests nothing.
func TestStreamHedgeRacesForTheFirstToken(t *testing.T) {
	h := newHarness(t, streamChains)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Delay: 6 * time.Second})
	done := make(chan reply, 1)
	go func() { done <- h.post("/v1/chat/completions", "application/json", streamBody("hedge", false)) }()
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	h.clk.Advance(3 * time.Second)
	got := <-done
	const winner = "cerebras/gpt-oss-120b"
	want := wantStream(got.header.Get("X-Request-Id"), t0.Add(3*time.Second), winner, words(defaultAnswer(winner)), false, nil)
	if string(got.body) != want {
		t.Fatalf("status %d, body:\n%s\nwant:\n%s", got.status, got.body, want)
	}
	h.gw.Router().Close()
	var won, lost bool
	for _, a := range h.recs.forRequest(got.header.Get("X-Request-Id")) {
		won = won || a.Route == winner && a.Hedge && a.Class.String() == "ok"
		lost = lost || a.Route == "groq/llama-3.3-70b-versatile" && a.Class.String() == "silent_loser"
	}
	if !won || !lost {
		t.Errorf("attempts %+v, want a hedged ok and a silent loser", h.recs.forRequest(got.header.Get("X-Request-Id")))
	}
	if _, ok := h.rest("groq/llama-3.3-70b-versatile"); ok {
		t.Error("the loser of the race rests")
	}
}

// events parses a streamed body's data events (not [DONE]).
func events(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range strings.Split(string(body), "\n\n") {
		d, ok := strings.CutPrefix(ev, "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("event is not JSON (%v): %q", err, d)
		}
		out = append(out, m)
	}
	return out
}

// streamed returns the content and reasoning_content a body carried, and
// its finish reasons.
func streamed(t *testing.T, body []byte) (content, reasoning string, finishes []string) {
	t.Helper()
	for _, m := range events(t, body) {
		ch, _ := m["choices"].([]any)
		if len(ch) == 0 {
			continue
		}
		c := ch[0].(map[string]any)
		d := c["delta"].(map[string]any)
		s, _ := d["content"].(string)
		content += s
		s, _ = d["reasoning_content"].(string)
		reasoning += s
		if f, ok := c["finish_reason"].(string); ok {
			finishes = append(finishes, f)
		}
	}
	return content, reasoning, finishes
}

// TestStreamBreakContinued: a stream that breaks after its first token
// (cut without a finish, silent past the idle timeout, an error event) is
// continued on the next route that can continue a partial answer, and the
// caller gets one whole answer, byte for byte what an unbroken stream
// sends. The call log has both parts.
func TestStreamBreakContinued(t *testing.T) {
	const answer = "Tollfree keeps an AI feature answering on the free tiers of many providers."
	tests := []struct {
		name  string
		step  emulator.Step
		idle  bool // the break is a stall: the idle timeout must pass
		class string
	}{
		{"cut without a finish", emulator.Step{Kind: emulator.StreamCut, After: 4}, false, "overloaded"},
		{"silent past the idle timeout", emulator.Step{Kind: emulator.StreamStall, After: 4}, true, "timeout"},
		{"an error event", emulator.Step{Kind: emulator.StreamErrorEvent, After: 4}, false, "overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessWith(t, continuingProviders, streamChains)
			sameAnswer(h, answer, "groq/llama-3.3-70b-versatile", "groq/llama-3.1-8b-instant")
			h.emu.Script("groq", "llama-3.3-70b-versatile", tt.step)
			c := h.openStream(streamBody("cont", false))
			for range 4 {
				if c.event() == "" {
					t.Fatal("the stream ended before its fourth chunk")
				}
			}
			if tt.idle {
				h.clk.Advance(5 * time.Second)
			}
			body, err := c.rest()
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			id := c.resp.Header.Get("X-Request-Id")
			want := wantStream(id, t0, "groq/llama-3.3-70b-versatile", words(answer), false, nil)
			if string(body) != want {
				t.Fatalf("body:\n%s\nwant:\n%s", body, want)
			}
			atts := h.recs.forRequest(id)
			if len(atts) != 2 {
				t.Fatalf("attempts %+v, want the broken part and its continuation", atts)
			}
			if a := atts[0]; a.Route != "groq/llama-3.3-70b-versatile" || a.Part != 0 || a.Class.String() != tt.class {
				t.Errorf("first part %+v, want %s on part 0", a, tt.class)
			}
			if a := atts[1]; a.Route != "groq/llama-3.1-8b-instant" || a.Part != 1 || a.Class.String() != "ok" || !a.Stream {
				t.Errorf("continuation %+v, want ok on part 1", a)
			}
			if _, ok := h.rest("groq/llama-3.3-70b-versatile"); !ok {
				t.Error("the route whose stream broke does not rest")
			}
		})
	}
}

// TestStreamBreakNotContinued: where no route can continue, a broken
// stream ends with an OpenAI-style error event, never a finish_reason or
// [DONE]; a continuation that a route refuses does not replace the real
// error; the official client sees an error, not a whole answer.
func TestStreamBreakNotContinued(t *testing.T) {
	tests := []struct {
		name     string
		chain    string
		refusal  bool // the continuing route refuses with a 400
		wantText string
	}{
		{"no route can continue", "nocont", false, "overloaded: stream ended before it finished"},
		{"the continuing route refuses", "cont", true, "overloaded: stream ended before it finished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessWith(t, continuingProviders, streamChains)
			h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 3})
			if tt.refusal {
				h.emu.Script("groq", "llama-3.1-8b-instant", emulator.Step{Kind: emulator.BadRequest, Text: "prefix is not supported"})
			}
			c := h.openStream(streamBody(tt.chain, true))
			body, err := c.rest()
			if err == nil {
				t.Error("the response ended cleanly; want it aborted")
			}
			id := c.resp.Header.Get("X-Request-Id")
			full := wantStream(id, t0, "groq/llama-3.3-70b-versatile", words(defaultAnswer("groq/llama-3.3-70b-versatile"))[:3], false, nil)
			prefix := full[:strings.Index(full, `data: {"id":"chatcmpl-`+strings.TrimPrefix(id, "req_")+`","object":"chat.completion.chunk","created":1781517600,"model":"groq/llama-3.3-70b-versatile","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)]
			wantErr := `data: {"error":{"message":"the answer from groq/llama-3.3-70b-versatile broke off (` + tt.wantText + `) and no route could continue it; the text received so far is incomplete","type":"server_error","code":"stream_broken"}}` + "\n\n"
			if string(body) != prefix+wantErr {
				t.Fatalf("body:\n%s\nwant:\n%s", body, prefix+wantErr)
			}
			atts := h.recs.forRequest(id)
			if tt.refusal {
				if len(atts) != 2 || atts[1].Part != 1 || atts[1].Class.String() != "bad_request" {
					t.Errorf("attempts %+v, want the refused continuation logged as part 1", atts)
				}
				if _, ok := h.rest("groq/llama-3.1-8b-instant"); ok {
					t.Error("a refused continuation rests its route")
				}
			}
		})
	}
}

// TestStreamReasoning: reasoning deltas go out as reasoning_content or are
// dropped, per chain; <think>…</think> text in the content is stripped,
// also when the tags are split across chunks (three bytes a chunk here).
func TestStreamReasoning(t *testing.T) {
	const text = "<think>Two and two.</think>\n\nThe answer is 4 😀."
	tests := []struct {
		chain, wantReasoning string
	}{
		{"think", "first, then Two and two."},
		{"quiet", ""},
	}
	for _, tt := range tests {
		t.Run(tt.chain, func(t *testing.T) {
			h := newHarness(t, streamChains)
			h.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: text, Reasoning: "first, then ", ChunkBytes: 3})
			got := h.post("/v1/chat/completions", "application/json", streamBody(tt.chain, false))
			if got.status != 200 {
				t.Fatalf("status %d: %s", got.status, got.body)
			}
			if strings.Contains(string(got.body), "think>") || strings.Contains(string(got.body), "<think") {
				t.Errorf("a think tag reached the caller:\n%s", got.body)
			}
			content, reasoning, finishes := streamed(t, got.body)
			if content != "The answer is 4 😀." || reasoning != tt.wantReasoning {
				t.Errorf("content %q, reasoning %q; want %q and %q", content, reasoning, "The answer is 4 😀.", tt.wantReasoning)
			}
			if strings.Join(finishes, ",") != "stop" {
				t.Errorf("finish reasons %v, want one stop", finishes)
			}
		})
	}
}

// TestStreamReasoningRouteWaitsLonger: a thinking route without a timeout
// of its own waits three times the chain's attempt timeout for its first
// token (8s here: 24s), where another route would have failed over.
func TestStreamReasoningRouteWaitsLonger(t *testing.T) {
	h := newHarness(t, streamChains)
	h.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 20 * time.Second})
	done := make(chan reply, 1)
	go func() { done <- h.post("/v1/chat/completions", "application/json", streamBody("quiet", false)) }()
	h.waitCalls("groq", "openai/gpt-oss-120b", 1)
	h.clk.Advance(8 * time.Second)
	notYet(t, done, "8s")
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 0 {
		t.Fatalf("failed over after the chain's 8s: %d calls to the next route", n)
	}
	h.clk.Advance(12 * time.Second)
	got := <-done
	if content, _, _ := streamed(t, got.body); got.header.Get("X-Tollfree-Route") != "groq/openai/gpt-oss-120b" || content != defaultAnswer("groq/openai/gpt-oss-120b") {
		t.Fatalf("route %q, body %s", got.header.Get("X-Tollfree-Route"), got.body)
	}
}

// TestOpenAIClientStreams: the official openai-go client streams through
// the gateway: a plain answer with its usage, a failover before the first
// token, a hedge won by the second route; and a broken stream is an error
// to it, not a whole answer.
func TestOpenAIClientStreams(t *testing.T) {
	params := openai.ChatCompletionNewParams{
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What does tollfree do?")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	tests := []struct {
		name      string
		chain     string
		script    func(h *harness)
		advance   time.Duration // once the first route was called
		wantRoute string
	}{
		{"plain", "groq", func(*harness) {}, 0, "groq/llama-3.3-70b-versatile"},
		{"failover before the first token", "groq", func(h *harness) {
			h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
		}, 0, "cerebras/gpt-oss-120b"},
		{"hedge won by the second route", "hedge", func(h *harness) {
			h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
		}, 3 * time.Second, "cerebras/gpt-oss-120b"},
		{"Gemini translated", "gem", func(*harness) {}, 0, "gemini/gemini-2.5-flash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, streamChains)
			tt.script(h)
			c := openai.NewClient(option.WithBaseURL(h.srv.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
			p := params
			p.Model = tt.chain
			type result struct {
				acc openai.ChatCompletionAccumulator
				err error
			}
			done := make(chan result, 1)
			go func() {
				var r result
				s := c.Chat.Completions.NewStreaming(context.Background(), p)
				for s.Next() {
					r.acc.AddChunk(s.Current())
				}
				r.err = s.Err()
				done <- r
			}()
			if tt.advance > 0 {
				h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
				h.clk.Advance(tt.advance)
			}
			r := <-done
			if r.err != nil {
				t.Fatalf("stream: %v", r.err)
			}
			if r.acc.Model != tt.wantRoute || len(r.acc.Choices) != 1 {
				t.Fatalf("model %q, %d choices; want %s", r.acc.Model, len(r.acc.Choices), tt.wantRoute)
			}
			answer := defaultAnswer(tt.wantRoute)
			if ch := r.acc.Choices[0]; ch.Message.Content != answer || ch.FinishReason != "stop" {
				t.Errorf("content %q finish %q; want %q, stop", ch.Message.Content, ch.FinishReason, answer)
			}
			if u := r.acc.Usage; u.PromptTokens != int64(emuTokens("What does tollfree do?")) || u.CompletionTokens != int64(emuTokens(answer)) {
				t.Errorf("usage %+v, want the route's", u)
			}
		})
	}
	t.Run("broken", func(t *testing.T) {
		h := newHarness(t, streamChains)
		h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 3})
		c := openai.NewClient(option.WithBaseURL(h.srv.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
		p := params
		p.Model = "nocont"
		s := c.Chat.Completions.NewStreaming(context.Background(), p)
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if s.Err() == nil || !strings.Contains(s.Err().Error(), "broke off") {
			t.Errorf("err = %v, want the gateway's error event", s.Err())
		}
		if len(acc.Choices) == 1 && acc.Choices[0].FinishReason != "" {
			t.Errorf("a cut answer finished with %q", acc.Choices[0].FinishReason)
		}
	})
}

// TestStreamCached: a streamed answer that ended cleanly is cached, and
// the next identical request is answered from the cache; a cut one is not.
func TestStreamCached(t *testing.T) {
	h := newHarness(t, streamChains)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 2})
	for i, want := range []string{"miss", "miss", "hit"} {
		got := h.post("/v1/chat/completions", "application/json", streamBody("cached", false))
		if c := got.header.Get("X-Tollfree-Cache"); c != want {
			t.Fatalf("request %d: X-Tollfree-Cache %q, want %q", i, c, want)
		}
		content, _, _ := streamed(t, got.body)
		if i > 0 && content != defaultAnswer("groq/llama-3.3-70b-versatile") {
			t.Errorf("request %d: content %q", i, content)
		}
		h.clk.Advance(31 * time.Second) // past the cut route's rest
	}
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 2 {
		t.Errorf("%d calls, want 2: the cut answer, then the one cached", n)
	}
}

// TestStreamEmptyAnswerFailsOver (issue 10, item 7): a stream that sends
// its role, a finish_reason and [DONE] with no content is an empty answer,
// not a finished one: the caller gets the next route's answer, the empty
// route rests 30 s, and the same request asked again with the cache on is
// never answered empty from the cache. A whole (non-streamed) empty answer
// is treated alike.
func TestStreamEmptyAnswerFailsOver(t *testing.T) {
	const empty, next = "groq/llama-3.3-70b-versatile", "cerebras/gpt-oss-120b"
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			h := newHarness(t, cachedChain)
			h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Empty})
			body := []byte(`{"model":"site","messages":[{"role":"user","content":"What does tollfree do?"}]}`)
			if stream {
				body = streamBody("site", false)
			}
			answer := func(r reply) string {
				if stream {
					content, _, _ := streamed(t, r.body)
					return content
				}
				return r.content(t)
			}
			got := h.post("/v1/chat/completions", "application/json", body)
			if stream {
				want := wantStream(got.header.Get("X-Request-Id"), t0, next, words(defaultAnswer(next)), false, nil)
				if string(got.body) != want {
					t.Fatalf("status %d, body:\n%s\nwant:\n%s", got.status, got.body, want)
				}
			} else if got.status != 200 || answer(got) != defaultAnswer(next) {
				t.Fatalf("status %d, body %s, want %s's answer", got.status, got.body, next)
			}
			var classes []string
			for _, a := range h.recs.forRequest(got.header.Get("X-Request-Id")) {
				classes = append(classes, a.Route+" "+a.Class.String())
			}
			if got, want := strings.Join(classes, ", "), empty+" empty, "+next+" ok"; got != want {
				t.Errorf("attempts: %s, want %s", got, want)
			}
			if r, ok := h.rest(empty); !ok || r.Class != "empty" || !r.Until.Equal(t0.Add(30*time.Second)) {
				t.Errorf("rest = %+v (found %v), want empty until t0+30s", r, ok)
			}
			h.clk.Advance(31 * time.Second) // the empty route's rest is over
			again := h.post("/v1/chat/completions", "application/json", body)
			if c := answer(again); again.status != 200 || c != defaultAnswer(next) || again.header.Get("X-Tollfree-Cache") != "hit" {
				t.Errorf("asked again: status %d, X-Tollfree-Cache %q, content %q; want %s's answer from the cache",
					again.status, again.header.Get("X-Tollfree-Cache"), c, next)
			}
		})
	}
}

// TestStreamReasoningOnlyIsEmpty: reasoning is a first token, but a stream
// that ends with reasoning and no content is empty: the route rests, and
// the request is answered afresh by the next route (there is no answer
// text to continue, so any route will do); where no route is left, the
// stream ends with an error event, never [DONE].
func TestStreamReasoningOnlyIsEmpty(t *testing.T) {
	t.Run("the next route answers", func(t *testing.T) {
		h := newHarness(t, streamChains)
		h.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Empty, Reasoning: "let me think "})
		got := h.post("/v1/chat/completions", "application/json", streamBody("think", false))
		content, reasoning, finishes := streamed(t, got.body)
		const next = "groq/llama-3.3-70b-versatile"
		if got.status != 200 || content != defaultAnswer(next) || reasoning != "let me think " || strings.Join(finishes, ",") != "stop" ||
			!strings.HasSuffix(string(got.body), "data: [DONE]\n\n") {
			t.Fatalf("status %d: content %q, reasoning %q, finishes %v; body:\n%s", got.status, content, reasoning, finishes, got.body)
		}
		var parts []string
		for _, a := range h.recs.forRequest(got.header.Get("X-Request-Id")) {
			parts = append(parts, fmt.Sprintf("%s %s part %d", a.Route, a.Class, a.Part))
		}
		if got, want := strings.Join(parts, ", "), "groq/openai/gpt-oss-120b empty part 0, "+next+" ok part 1"; got != want {
			t.Errorf("attempts: %s, want %s", got, want)
		}
		if r, ok := h.rest("groq/openai/gpt-oss-120b"); !ok || r.Class != "empty" {
			t.Errorf("rest = %+v (found %v), want an empty rest", r, ok)
		}
	})
	t.Run("no route is left", func(t *testing.T) {
		h := newHarness(t, streamChains)
		h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Empty, Reasoning: "let me think "})
		c := h.openStream(streamBody("cached", false))
		body, err := c.rest()
		if err == nil || strings.Contains(string(body), "[DONE]") || strings.Contains(string(body), `"finish_reason":"stop"`) ||
			!strings.Contains(string(body), "broke off (empty") {
			t.Fatalf("read error %v; body:\n%s\nwant an error event and an aborted response", err, body)
		}
		if r, ok := h.rest("groq/llama-3.3-70b-versatile"); !ok || r.Class != "empty" {
			t.Errorf("rest = %+v (found %v), want an empty rest", r, ok)
		}
	})
}
