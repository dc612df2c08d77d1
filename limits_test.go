package tollfree_test

import (
	"strings"
	"testing"
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
