package tollfree_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

const contextChains = `
chains:
  recent:
    routes: [groq/llama-3.3-70b-versatile]
    keep_exchanges: 2
  condensed:
    routes: [groq/llama-3.3-70b-versatile, cerebras/llama3.1-8b]
    trim_system: true
  strict:
    routes: [groq/llama-3.3-70b-versatile, cerebras/llama3.1-8b, cerebras/gpt-oss-120b]
  small:
    routes: [cerebras/llama3.1-8b]
  plain:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
  gem:
    routes: [gemini/gemini-2.5-flash-lite]
`

// chatJSON is a chat request body on chain with the given messages (JSON
// array elements), streamed or not.
func chatJSON(chain string, stream bool, messages ...string) []byte {
	s := ""
	if stream {
		s = `"stream":true,`
	}
	return []byte(`{"model":"` + chain + `",` + s + `"messages":[` + strings.Join(messages, ",") + `]}`)
}

func msg(role, content string) string {
	return `{"role":"` + role + `","content":"` + content + `"}`
}

// lastRecord is the emulator's record of its last call.
func lastRecord(t *testing.T, h *harness) emulator.Record {
	t.Helper()
	rs := h.emu.Records()
	if len(rs) == 0 {
		t.Fatal("no call reached the emulator")
	}
	return rs[len(rs)-1]
}

// TestKeepExchanges: a chain that keeps the last two exchanges (seed 000)
// sends the system prompt and those only, and the call log says so.
func TestKeepExchanges(t *testing.T) {
	h := newHarnessWith(t, continuingProviders, contextChains)
	const sys, u3, a3, u4 = "You answer questions about this site.", "And the third?", "The third is here.", "And the last one?"
	got := h.post("/v1/chat/completions", "application/json", chatJSON("recent", false,
		msg("system", sys), msg("user", "First question?"), msg("assistant", "First answer."),
		msg("user", "Second question?"), msg("assistant", "Second answer."),
		msg("user", u3), msg("assistant", a3), msg("user", u4)))
	if got.status != 200 {
		t.Fatalf("status %d: %s", got.status, got.body)
	}
	if want := emuTokens(sys + u3 + a3 + u4); lastRecord(t, h).PromptTokens != want {
		t.Errorf("the route got %d prompt tokens, want %d: the system prompt and the last two exchanges", lastRecord(t, h).PromptTokens, want)
	}
	atts := h.recs.forRequest(got.header.Get("X-Request-Id"))
	if len(atts) != 1 || atts[0].Cut != "kept the last 2 exchanges: 4 earlier messages dropped" {
		t.Errorf("attempts %+v, want the cut named in the call log", atts)
	}
}

// TestContextFitsEachRoute: a system prompt of 18,000 bytes
// (seed 001) goes whole to the large route, condensed to the small
// safety-net route (max_context 1000) of a chain that allows it, and
// nowhere else: without the declaration the small route is skipped as too
// large, and a request too long for every route is a clear 400.
func TestContextFitsEachRoute(t *testing.T) {
	sys := strings.Repeat("Project 🚀 tollfree: a gateway over free tiers. ", 360)
	question := "What have you built?"
	t.Run("condensed for the small route", func(t *testing.T) {
		h := newHarnessWith(t, continuingProviders, contextChains)
		for _, stream := range []bool{false, true} {
			h.clk.Advance(time.Minute)
			h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
			got := h.post("/v1/chat/completions", "application/json", chatJSON("condensed", stream, msg("system", sys), msg("user", question)))
			if got.status != 200 || got.header.Get("X-Tollfree-Route") != "cerebras/llama3.1-8b" {
				t.Fatalf("status %d route %q: %s", got.status, got.header.Get("X-Tollfree-Route"), got.body)
			}
			// The emulator counts a token per 4 bytes, the gateway's estimate
			// per word and symbol: the two agree only roughly.
			if rec := lastRecord(t, h); rec.PromptTokens >= 1000 || rec.PromptTokens < 500 {
				t.Errorf("the small route got about %d prompt tokens, want a condensed context within its 1000", rec.PromptTokens)
			}
			var cut string
			for _, a := range h.recs.forRequest(got.header.Get("X-Request-Id")) {
				if a.Route == "cerebras/llama3.1-8b" {
					cut = a.Cut
				}
			}
			if !strings.HasPrefix(cut, fmt.Sprintf("system prompt cut from %d to ", len(sys))) || !strings.HasSuffix(cut, " bytes to fit a context of 1000 tokens") {
				t.Errorf("call log cut = %q, want the system prompt's cut", cut)
			}
		}
		if rs := h.emu.Records(); rs[0].PromptTokens != emuTokens(sys+question) {
			t.Errorf("the large route got %d prompt tokens, want the whole %d", rs[0].PromptTokens, emuTokens(sys+question))
		}
	})
	t.Run("without trim_system the small route is skipped", func(t *testing.T) {
		h := newHarnessWith(t, continuingProviders, contextChains)
		h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
		got := h.post("/v1/chat/completions", "application/json", chatJSON("strict", false, msg("system", sys), msg("user", question)))
		if got.status != 200 || got.header.Get("X-Tollfree-Route") != "cerebras/gpt-oss-120b" {
			t.Fatalf("status %d route %q: %s", got.status, got.header.Get("X-Tollfree-Route"), got.body)
		}
		if n := h.emu.Calls("cerebras", "llama3.1-8b"); n != 0 {
			t.Errorf("the too-small route was called %d times", n)
		}
		for _, a := range h.recs.forRequest(got.header.Get("X-Request-Id")) {
			if a.Cut != "" {
				t.Errorf("attempt %+v: something was cut without the chain's leave", a)
			}
		}
	})
	t.Run("too long for every route", func(t *testing.T) {
		h := newHarnessWith(t, continuingProviders, contextChains)
		for _, stream := range []bool{false, true} {
			got := h.post("/v1/chat/completions", "application/json", chatJSON("small", stream, msg("system", sys), msg("user", question)))
			if got.status != 400 || got.errorCode(t) != "context_length_exceeded" {
				t.Fatalf("stream %v: status %d: %s", stream, got.status, got.body)
			}
			if m := got.json(t)["error"].(map[string]any)["message"].(string); !strings.Contains(m, "too long for every route") || !strings.Contains(m, "1000") {
				t.Errorf("message %q does not say the request is too long, and the largest context", m)
			}
		}
		if n := len(h.emu.Records()); n != 0 {
			t.Errorf("%d calls reached a provider", n)
		}
	})
}

// TestTextHygiene: lone UTF-16 surrogates and invalid UTF-8 in a client's
// JSON never reach a provider (the emulator refuses them, as some real APIs
// do), streamed or not, in either dialect (seed 004).
func TestTextHygiene(t *testing.T) {
	contents := map[string]string{
		"lone high surrogate":         `"\ud83d"`,
		"lone low surrogate and text": `"x \ude00 y"`,
		"invalid UTF-8":               "\"bad \xff byte\"",
		"lone surrogate in a part":    `[{"type":"text","text":"\ud83d"}]`,
	}
	h := newHarness(t, contextChains)
	for name, content := range contents {
		for _, chain := range []string{"plain", "gem"} {
			for _, stream := range []bool{false, true} {
				h.clk.Advance(time.Minute)
				got := h.post("/v1/chat/completions", "application/json", chatJSON(chain, stream, `{"role":"user","content":`+content+`}`))
				if got.status != 200 {
					t.Errorf("%s on %s (stream %v): status %d: %s", name, chain, stream, got.status, got.body)
				}
			}
		}
	}
	for _, r := range h.emu.Records() {
		if r.Behaviour == "invalid" {
			t.Errorf("a provider refused a body: %+v", r)
		}
	}
}

// TestNonStreamedProtections: without stream, a body cut short and a stall
// after the headers fail over as before.
func TestNonStreamedProtections(t *testing.T) {
	tests := []struct {
		name    string
		step    emulator.Step
		advance time.Duration
		class   string
	}{
		{"body cut short", emulator.Step{Kind: emulator.StreamCut}, 0, "overloaded"},
		{"stall after the headers", emulator.Step{Kind: emulator.StreamStall}, 8 * time.Second, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, contextChains)
			h.emu.Script("groq", "llama-3.3-70b-versatile", tt.step)
			done := make(chan reply, 1)
			go func() {
				done <- h.post("/v1/chat/completions", "application/json", chatJSON("plain", false, msg("user", "Hi")))
			}()
			if tt.advance > 0 {
				h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
				h.clk.Advance(tt.advance)
			}
			got := <-done
			if got.status != 200 || got.content(t) != defaultAnswer("cerebras/gpt-oss-120b") {
				t.Fatalf("status %d: %s", got.status, got.body)
			}
			if r, ok := h.rest("groq/llama-3.3-70b-versatile"); !ok || r.Class != tt.class {
				t.Errorf("rest %+v (%v), want %s", r, ok, tt.class)
			}
		})
	}
}
