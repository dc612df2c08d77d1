package e2e_test

import (
	"strings"
	"testing"
	"time"
)

// contextChains are TestTextHygiene's chains, one per dialect.
const contextChains = `
chains:
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

// TestTextHygiene: lone UTF-16 surrogates and invalid UTF-8 in a client's
// JSON never reach a provider (the emulator refuses them, as some real APIs
// do), streamed or not, in either dialect (seed 004). It stays end to end:
// the guarantee is the whole path's, from the HTTP API's decoding of the
// caller's bytes to each adapter's encoding of the provider's.
func TestTextHygiene(t *testing.T) {
	checkLeaks(t)
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
