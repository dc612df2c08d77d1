package tollfree_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// Issue 10, item 1: a parameter the caller sent that a route does not take
// skips that route for this request only (DESIGN.md, "unsupported here");
// only a refused setting of the route's own rests it (bad config).

// gemCompatProviders adds Gemini's OpenAI-compatible endpoint, which
// refuses every field it does not know (PROVIDERS.md §1).
const gemCompatProviders = emulatedProviders + `
  gemcompat: {dialect: openai, base_url: EMU/gemini/v1beta/openai, api_key: ${GEMINI_API_KEY}}
`

const unsupportedChains = `
chains:
  two:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
  cer:
    routes: [cerebras/gpt-oss-120b, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
  compat:
    routes: [gemcompat/gemini-2.5-flash, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
  groqs:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
  mixed:
    routes: [openrouter/openai/gpt-oss-120b:free, gemcompat/gemini-2.5-flash]
    attempt_timeout: 8s
    deadline: 25s
    fallback: {message: "The assistant is resting; try again soon."}
`

// askWith sends a one-question request on chain with extra top-level
// fields (`"logit_bias":{...}`), "" for none.
func (h *harness) askWith(chain, extra string) reply {
	h.t.Helper()
	body := `{"model":"` + chain + `","messages":[{"role":"user","content":"What does tollfree do?"}]`
	if extra != "" {
		body += "," + extra
	}
	return h.post("/v1/chat/completions", "application/json", []byte(body+"}"))
}

// noRests fails the test if anything rests.
func (h *harness) noRests() {
	h.t.Helper()
	rs, err := h.store.Rests(context.Background(), h.clk.Now())
	if err != nil {
		h.t.Fatal(err)
	}
	if len(rs) != 0 {
		h.t.Fatalf("rests = %+v, want none: a caller's parameter rested a route", rs)
	}
}

// TestCallerParamSkipsRoute: the first route refuses a field the caller
// sent, in its provider's words; the second answers; the first is not
// rested (store and /status.json), and the next plain request goes to it.
func TestCallerParamSkipsRoute(t *testing.T) {
	tests := []struct {
		name        string
		chain       string
		first       string // provider/model that refuses
		second      string // provider/model that answers
		refuses     []string
		extra       string
		wantInError string // what the refusal names, in the call record
	}{
		{name: "groq: `logit_bias` is not supported with this model", chain: "two",
			first: "groq/llama-3.3-70b-versatile", second: "cerebras/gpt-oss-120b",
			refuses: []string{"logit_bias"}, extra: `"logit_bias":{"50256":-100}`, wantInError: "logit_bias"},
		{name: "groq: reasoning_effort on a model without reasoning", chain: "two",
			first: "groq/llama-3.3-70b-versatile", second: "cerebras/gpt-oss-120b",
			refuses: []string{"reasoning_effort"}, extra: `"reasoning_effort":"low"`, wantInError: "reasoning_effort"},
		{name: "cerebras: property 'x' is unsupported", chain: "cer",
			first: "cerebras/gpt-oss-120b", second: "groq/llama-3.1-8b-instant",
			refuses: []string{"logit_bias"}, extra: `"logit_bias":{"50256":-100}`, wantInError: "logit_bias"},
		{name: `gemini openai-compat: Unknown name "store"`, chain: "compat",
			first: "gemcompat/gemini-2.5-flash", second: "groq/llama-3.1-8b-instant",
			extra: `"store":true`, wantInError: "store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := harnessOf(t, startStackWith(t, stackOptions{providers: gemCompatProviders, config: unsupportedChains}))
			fp, fm, _ := strings.Cut(tt.first, "/")
			emuProvider := fp
			if fp == "gemcompat" {
				emuProvider = "gemini" // the same emulated account
			}
			if tt.refuses != nil {
				h.emu.AddModel(emuProvider, emulator.Model{ID: fm, Unsupported: tt.refuses})
			}
			got := h.askWith(tt.chain, tt.extra)
			if got.status != 200 {
				t.Fatalf("status %d, want 200 from %s: %s", got.status, tt.second, got.body)
			}
			if m := got.json(t)["model"]; m != tt.second {
				t.Fatalf("answered by %v, want %s", m, tt.second)
			}
			var refused bool
			for _, a := range h.recs.forRequest(got.header.Get("X-Request-Id")) {
				if a.Route == tt.first {
					refused = a.Class.String() == "unsupported" && strings.Contains(a.Error, tt.wantInError) && a.RestKey.IsZero()
					if !refused {
						t.Errorf("attempt on %s: class %s, error %q, rest %q; want unsupported naming %s, no rest", tt.first, a.Class, a.Error, a.RestKey, tt.wantInError)
					}
				}
			}
			if !refused {
				t.Errorf("no unsupported attempt on %s recorded", tt.first)
			}
			h.noRests()
			if st := routeOf(t, h.snapshot(), tt.first); st.State != "ready" || st.Rest != nil {
				t.Errorf("/status.json: %s is %s (%+v), want ready", tt.first, st.State, st.Rest)
			}
			// The route is not rested: the next plain request goes to it.
			before := h.emu.Calls(emuProvider, fm)
			if r := h.askWith(tt.chain, ""); r.status != 200 || r.json(t)["model"] != tt.first {
				t.Fatalf("plain request: status %d, model %v, want %s: %s", r.status, r.json(t)["model"], tt.first, r.body)
			}
			if n := h.emu.Calls(emuProvider, fm); n != before+1 {
				t.Errorf("%s got %d calls for the plain request, want 1", tt.first, n-before)
			}
		})
	}
}

// TestCallerParamNoRouteTakesIt: when every route refuses the caller's
// field, the caller gets a 400 in OpenAI's error format with the provider's
// reason naming it (not a 503 or the fallback), and nothing rests. The
// mixed chain is the case: OpenAI's "Unsupported parameter" and
// Gemini's "Unknown name" used to rest both routes for 6 h.
func TestCallerParamNoRouteTakesIt(t *testing.T) {
	tests := []struct {
		chain   string
		refuses []string // emulated provider/model refusing logit_bias
		routes  []string // emulated provider/model of each route
		wantMsg string
	}{
		{chain: "groqs", refuses: []string{"groq/llama-3.3-70b-versatile", "groq/llama-3.1-8b-instant"},
			routes:  []string{"groq/llama-3.3-70b-versatile", "groq/llama-3.1-8b-instant"},
			wantMsg: "`logit_bias` is not supported with this model"},
		{chain: "mixed", refuses: []string{"openrouter/openai/gpt-oss-120b:free"},
			routes:  []string{"openrouter/openai/gpt-oss-120b:free", "gemini/gemini-2.5-flash"},
			wantMsg: "Unsupported parameter: 'logit_bias' is not supported with this model."},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.chain + "/whole"
			if stream {
				name = tt.chain + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				h := harnessOf(t, startStackWith(t, stackOptions{providers: gemCompatProviders, config: unsupportedChains}))
				for _, r := range tt.refuses {
					p, m, _ := strings.Cut(r, "/")
					h.emu.AddModel(p, emulator.Model{ID: m, Unsupported: []string{"logit_bias"}})
				}
				extra := `"logit_bias":{"50256":-100}`
				if stream {
					extra += `,"stream":true`
				}
				got := h.askWith(tt.chain, extra)
				if got.status != 400 {
					t.Fatalf("status %d, want 400: %s", got.status, got.body)
				}
				e, _ := got.json(t)["error"].(map[string]any)
				if e["code"] != "unsupported_parameter" || e["param"] != "logit_bias" || e["type"] != "invalid_request_error" {
					t.Errorf("error = %v, want code unsupported_parameter, param logit_bias, type invalid_request_error", e)
				}
				if msg, _ := e["message"].(string); !strings.Contains(msg, tt.wantMsg) {
					t.Errorf("message %q does not give the provider's reason %q", msg, tt.wantMsg)
				}
				if got.header.Get("X-Tollfree-Fallback") != "" || got.header.Get("Retry-After") != "" {
					t.Errorf("a refused parameter answered as an outage: %v", got.header)
				}
				for _, r := range tt.routes {
					p, m, _ := strings.Cut(r, "/")
					if n := h.emu.Calls(p, m); n != 1 {
						t.Errorf("%s called %d times, want 1", r, n)
					}
				}
				h.noRests()
				if r := h.askWith(tt.chain, ""); r.status != 200 {
					t.Fatalf("plain request: status %d: %s", r.status, r.body)
				}
			})
		}
	}
}

// ownFieldProviders gives cerebras/gpt-oss-120b an extra field of the
// route's own (GLM's clear_thinking, set on the wrong model).
const ownFieldProviders = `
providers:
  groq:     {preset: groq,     base_url: EMU/groq/v1,       api_key: ${GROQ_API_KEY}}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras:
    preset: cerebras
    base_url: EMU/cerebras/v1
    api_key: ${CEREBRAS_API_KEY}
    models:
      gpt-oss-120b: {extra: {clear_thinking: false}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
  gemcompat: {dialect: openai, base_url: EMU/gemini/v1beta/openai, api_key: ${GEMINI_API_KEY}}
`

// TestRouteOwnFieldRests: a field of the route's own configured extra that
// the model refuses is bad config: the route rests 6 h and the next route
// answers, whatever the caller sent.
func TestRouteOwnFieldRests(t *testing.T) {
	h := harnessOf(t, startStackWith(t, stackOptions{providers: ownFieldProviders, config: unsupportedChains}))
	h.emu.AddModel("cerebras", emulator.Model{ID: "gpt-oss-120b", Unsupported: []string{"clear_thinking"}})
	got := h.askWith("cer", `"temperature":0.2`)
	if got.status != 200 || got.json(t)["model"] != "groq/llama-3.1-8b-instant" {
		t.Fatalf("status %d, want 200 from groq/llama-3.1-8b-instant: %s", got.status, got.body)
	}
	rest, ok := h.rest("cerebras/gpt-oss-120b")
	if !ok || rest.Class != "bad_config" || !rest.Until.Equal(t0.Add(6*time.Hour)) {
		t.Fatalf("rest = %+v (found %v), want bad_config until t0+6h", rest, ok)
	}
	if st := routeOf(t, h.snapshot(), "cerebras/gpt-oss-120b"); st.Rest == nil || st.Rest.Class != "bad_config" {
		t.Errorf("/status.json shows %s %+v, want resting bad_config", st.State, st.Rest)
	}
	before := h.emu.Calls("cerebras", "gpt-oss-120b")
	if r := h.askWith("cer", ""); r.status != 200 || r.json(t)["model"] != "groq/llama-3.1-8b-instant" {
		t.Fatalf("second request: status %d: %s", r.status, r.body)
	}
	if n := h.emu.Calls("cerebras", "gpt-oss-120b"); n != before {
		t.Errorf("the resting route was called %d times", n-before)
	}
}
