package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/emulator"
)

// Issue 32, item 2: every documented wording of a refused field is
// "unsupported here". A field the caller sent that the first route refuses
// sends the request to the next route (200), and nothing rests; the same
// field in the first route's own extra rests that route as bad_config, and
// the next route answers too. The old classifier took OpenAI's "Unknown
// parameter: 'x'." and "Unrecognized request argument supplied: x" and
// Cohere's "unknown field" for the caller's mistake: a 400 to the caller,
// the healthy next route never asked, and the route's own field never
// rested.

const refusalChains = `
chains:
  two:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
`

// ownTopKProviders gives groq/llama-3.3-70b-versatile an extra field of
// its own, top_k.
const ownTopKProviders = `
providers:
  groq:
    preset: groq
    base_url: EMU/groq/v1
    api_key: ${GROQ_API_KEY}
    models:
      llama-3.3-70b-versatile: {extra: {top_k: 40}}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`

func TestRefusedFieldWordings(t *testing.T) {
	checkLeaks(t)
	const first, second = "groq/llama-3.3-70b-versatile", "cerebras/gpt-oss-120b"
	for _, wording := range []emulator.Refusal{emulator.RefusalUnknownParameter, emulator.RefusalUnrecognized,
		emulator.RefusalCohere, emulator.RefusalNIM, emulator.RefusalVLLM} {
		t.Run(string(wording)+"/caller's field", func(t *testing.T) {
			h := harnessOf(t, startStackWith(t, stackOptions{config: refusalChains}))
			h.emu.AddModel("groq", emulator.Model{ID: "llama-3.3-70b-versatile", Unsupported: []string{"top_k"}, Refusal: wording})
			r := h.post("/v1/chat/completions", "application/json",
				[]byte(`{"model":"two","messages":[{"role":"user","content":"Hi"}],"top_k":5}`))
			if r.status != http.StatusOK || r.header.Get("X-Tollfree-Route") != second {
				t.Fatalf("status %d from %q: %s\nwant 200 from %s", r.status, r.header.Get("X-Tollfree-Route"), r.body, second)
			}
			if a := routeClasses(h, r.header.Get("X-Request-Id")); a != first+" unsupported, "+second+" ok" {
				t.Errorf("attempts: %s", a)
			}
			if rest, ok := h.rest(first); ok {
				t.Errorf("the route that refused the caller's field rests: %+v", rest)
			}
		})
		t.Run(string(wording)+"/route's own field", func(t *testing.T) {
			h := harnessOf(t, startStackWith(t, stackOptions{providers: ownTopKProviders, config: refusalChains}))
			h.emu.AddModel("groq", emulator.Model{ID: "llama-3.3-70b-versatile", Unsupported: []string{"top_k"}, Refusal: wording})
			r := h.post("/v1/chat/completions", "application/json",
				[]byte(`{"model":"two","messages":[{"role":"user","content":"Hi"}]}`))
			if r.status != http.StatusOK || r.header.Get("X-Tollfree-Route") != second {
				t.Fatalf("status %d from %q: %s\nwant 200 from %s", r.status, r.header.Get("X-Tollfree-Route"), r.body, second)
			}
			if rest, ok := h.rest(first); !ok || rest.Class != "bad_config" {
				t.Errorf("rest of %s: %+v (found %v), want bad_config", first, rest, ok)
			}
		})
	}
}

// routeClasses lists a request's attempts as "route class".
func routeClasses(h *harness, id string) string {
	var out []string
	for _, a := range h.recs.forRequest(id) {
		out = append(out, a.Route+" "+a.Class.String())
	}
	return strings.Join(out, ", ")
}

// TestBrokenFieldsRefused (issue 32): fields the gateway passes on that no
// upstream takes broken get a precise 400 in OpenAI's error format, naming
// the parameter, and nothing is forwarded. The old gateway forwarded each
// of them: presence_penalty 1e309, tools [{}], tool_choice 5, a 1 MB user.
func TestBrokenFieldsRefused(t *testing.T) {
	checkLeaks(t)
	h := harnessOf(t, startStackWith(t, stackOptions{config: refusalChains}))
	const msgs = `"model":"two","messages":[{"role":"user","content":"Hi"}]`
	for _, tc := range []struct{ field, param, code, says string }{
		{`"presence_penalty":1e309`, "presence_penalty", "invalid_value", "between -2 and 2"},
		{`"frequency_penalty":"high"`, "frequency_penalty", "invalid_type", "must be a number"},
		{`"tools":[{}]`, "tools[0].type", "missing_required_parameter", "tools[0].type is required"},
		{`"tools":[{"type":"function","function":{}}]`, "tools[0].function.name", "missing_required_parameter", "is required"},
		{`"tools":{"type":"function"}`, "tools", "invalid_type", "must be an array"},
		{`"tool_choice":5`, "tool_choice", "invalid_type", `"none", "auto", "required"`},
		{`"tool_choice":"always"`, "tool_choice", "invalid_value", `"none", "auto", "required"`},
		{`"user":"` + strings.Repeat("u", 1<<20) + `"`, "user", "invalid_value", "at most 256 bytes"},
	} {
		r := h.post("/v1/chat/completions", "application/json", []byte(`{`+msgs+`,`+tc.field+`}`))
		e, _ := r.json(t)["error"].(map[string]any)
		if r.status != http.StatusBadRequest || e["param"] != tc.param || e["code"] != tc.code || e["type"] != "invalid_request_error" ||
			!strings.Contains(e["message"].(string), tc.says) {
			t.Errorf("%.40s: %d %.300s\nwant 400 invalid_request_error, param %s, code %s, saying %q", tc.field, r.status, r.body, tc.param, tc.code, tc.says)
		}
	}
	if n := len(h.emu.Records()); n != 0 {
		t.Errorf("%d calls forwarded upstream, want none", n)
	}
}
