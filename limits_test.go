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

// TestRequestLimits: a request over the message or text limit is refused
// at decode time with a 400 in OpenAI's format naming the limit and the
// field, and reaches no route. 110,000 short messages to a Gemini route used
// to be translated by repeated appends, seconds of CPU each (issue 10).
func TestRequestLimits(t *testing.T) {
	// A Gemini route without token limits or a context size: nothing but
	// the request limits stands between such a request and the translation.
	const providers = `
providers:
  gemini:
    preset: gemini
    base_url: EMU/gemini/v1beta
    api_key: ${GEMINI_API_KEY}
    models:
      gemini-2.5-flash: {tpm: 0, tpd: 0, max_context: 0}
`
	const chains = `
chains:
  gem:
    routes: [gemini/gemini-2.5-flash]
`
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
			h := newHarnessWith(t, providers, chains)
			got := h.post("/v1/chat/completions", "application/json", []byte(tt.body))
			if got.status != 400 {
				t.Fatalf("status %d, want 400: %.300s", got.status, got.body)
			}
			e := got.json(t)["error"].(map[string]any)
			if e["type"] != "invalid_request_error" || e["param"] != tt.param || e["code"] != tt.code || !strings.Contains(e["message"].(string), tt.inMessage) {
				t.Errorf("error %v; want param %q, code %q, a message with %q", e, tt.param, tt.code, tt.inMessage)
			}
			if n := len(h.emu.Records()); n != 0 {
				t.Errorf("%d calls reached a route, want none", n)
			}
		})
	}
}
