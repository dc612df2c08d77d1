package e2e_test

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

// streamChains are the chains of the streaming end-to-end tests.
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
  nocont:
    # one route: none to continue a broken stream
    routes: [groq/llama-3.3-70b-versatile]
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
`

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

// TestOpenAIClientStreams: the official openai-go client streams through
// the gateway: a plain answer with its usage, a failover before the first
// token, a hedge won by the second route; and a broken stream is an error
// to it, not a whole answer.
func TestOpenAIClientStreams(t *testing.T) {
	checkLeaks(t)
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
	checkLeaks(t)
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

// TestEmptyAnswerNeverCached (issue 10, item 7): a request whose first
// route answers empty (a stream with its role, a finish_reason and [DONE]
// but no content; or a whole empty answer) gets the next route's answer,
// and the same request asked again with the cache on is never answered
// empty from the cache: the next route's answer is the one kept. (The
// failover and the rest: route's TestStreamEmptyAnswerFailsOver.)
func TestEmptyAnswerNeverCached(t *testing.T) {
	checkLeaks(t)
	const next = "cerebras/gpt-oss-120b"
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
			if got := h.post("/v1/chat/completions", "application/json", body); got.status != 200 || answer(got) != defaultAnswer(next) {
				t.Fatalf("status %d, body %s, want %s's answer", got.status, got.body, next)
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
