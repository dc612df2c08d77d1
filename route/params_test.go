package route

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/failure"
)

// Issue 10, item 1: a parameter the caller sent that a route does not take
// skips that route for this request only (docs/DECISIONS.md, "unsupported here");
// only a refused setting of the route's own rests it (bad config). A route
// that does not rest is ready in the status (package status's
// TestSnapshotStates); one resting for bad config shows it there too.

// gemCompatProviders adds Gemini's OpenAI-compatible endpoint, which
// refuses every field it does not know (docs/PROVIDERS.md).
const gemCompatProviders = emutest.Providers + `
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

// askWith answers the tests' question on chain with extra top-level fields
// of the caller's (as the HTTP API decodes them: unknown fields verbatim in
// Extra, stream in Stream), streamed or not. It returns the request id,
// the route that answered, and the error.
func (s *stack) askWith(chain string, extra map[string]string, stream bool) (id, route string, err error) {
	s.t.Helper()
	req := question(emutest.Question)
	req.Stream = stream
	for k, v := range extra {
		switch k {
		case "temperature":
			var f float64
			if err := json.Unmarshal([]byte(v), &f); err != nil {
				s.t.Fatal(err)
			}
			req.Temperature = &f
		case "reasoning_effort":
			if err := json.Unmarshal([]byte(v), &req.ReasoningEffort); err != nil {
				s.t.Fatal(err)
			}
		default:
			if req.Extra == nil {
				req.Extra = make(map[string]json.RawMessage)
			}
			req.Extra[k] = json.RawMessage(v)
		}
	}
	return s.answerOrStream(chain, req)
}

// TestCallerParamSkipsRoute: the first route refuses a field the caller
// sent, in its provider's words; the second answers; the first is not
// rested, and the next plain request goes to it.
func TestCallerParamSkipsRoute(t *testing.T) {
	tests := []struct {
		name        string
		chain       string
		first       string // provider/model that refuses
		second      string // provider/model that answers
		refuses     []string
		extra       map[string]string
		wantInError string // what the refusal names, in the call record
	}{
		{name: "groq: `logit_bias` is not supported with this model", chain: "two",
			first: "groq/llama-3.3-70b-versatile", second: "cerebras/gpt-oss-120b",
			refuses: []string{"logit_bias"}, extra: map[string]string{"logit_bias": `{"50256":-100}`}, wantInError: "logit_bias"},
		{name: "groq: reasoning_effort on a model without reasoning", chain: "two",
			first: "groq/llama-3.3-70b-versatile", second: "cerebras/gpt-oss-120b",
			refuses: []string{"reasoning_effort"}, extra: map[string]string{"reasoning_effort": `"low"`}, wantInError: "reasoning_effort"},
		{name: "cerebras: property 'x' is unsupported", chain: "cer",
			first: "cerebras/gpt-oss-120b", second: "groq/llama-3.1-8b-instant",
			refuses: []string{"logit_bias"}, extra: map[string]string{"logit_bias": `{"50256":-100}`}, wantInError: "logit_bias"},
		{name: `gemini openai-compat: Unknown name "store"`, chain: "compat",
			first: "gemcompat/gemini-2.5-flash", second: "groq/llama-3.1-8b-instant",
			extra: map[string]string{"store": `true`}, wantInError: "store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStackWith(t, stackOptions{providers: gemCompatProviders, chains: unsupportedChains})
			fp, fm, _ := strings.Cut(tt.first, "/")
			emuProvider := fp
			if fp == "gemcompat" {
				emuProvider = "gemini" // the same emulated account
			}
			if tt.refuses != nil {
				s.emu.AddModel(emuProvider, emulator.Model{ID: fm, Unsupported: tt.refuses})
			}
			id, route, err := s.askWith(tt.chain, tt.extra, false)
			if err != nil || route != tt.second {
				t.Fatalf("answered by %q (%v), want %s", route, err, tt.second)
			}
			var refused bool
			for _, a := range s.recs.forRequest(id) {
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
			s.noRests()
			// The route is not rested: the next plain request goes to it.
			before := s.emu.Calls(emuProvider, fm)
			if _, route, err := s.askWith(tt.chain, nil, false); err != nil || route != tt.first {
				t.Fatalf("plain request: answered by %q (%v), want %s", route, err, tt.first)
			}
			if n := s.emu.Calls(emuProvider, fm); n != before+1 {
				t.Errorf("%s got %d calls for the plain request, want 1", tt.first, n-before)
			}
		})
	}
}

// TestCallerParamNoRouteTakesIt: when every route refuses the caller's
// field, the caller gets a CallerError of class unsupported naming the
// parameter, with the provider's reason (not an ExhaustedError, so not a
// 503 or the fallback: the HTTP API's 400 unsupported_parameter is
// httpapi's TestServerOnlyEncodes), and nothing rests. The mixed chain is
// the issue's case: OpenAI's "Unsupported parameter" and Gemini's "Unknown
// name" used to rest both routes for 6 h.
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
				s := newStackWith(t, stackOptions{providers: gemCompatProviders, chains: unsupportedChains})
				for _, r := range tt.refuses {
					p, m, _ := strings.Cut(r, "/")
					s.emu.AddModel(p, emulator.Model{ID: m, Unsupported: []string{"logit_bias"}})
				}
				_, _, err := s.askWith(tt.chain, map[string]string{"logit_bias": `{"50256":-100}`}, stream)
				var ce *CallerError
				if !errors.As(err, &ce) {
					t.Fatalf("err %v, want a CallerError", err)
				}
				if ce.Class != failure.Unsupported || ce.Param != "logit_bias" {
					t.Errorf("error %+v, want class unsupported, param logit_bias", ce)
				}
				if !strings.Contains(ce.Message, tt.wantMsg) {
					t.Errorf("message %q does not give the provider's reason %q", ce.Message, tt.wantMsg)
				}
				for _, r := range tt.routes {
					p, m, _ := strings.Cut(r, "/")
					if n := s.emu.Calls(p, m); n != 1 {
						t.Errorf("%s called %d times, want 1", r, n)
					}
				}
				s.noRests()
				if _, _, err := s.askWith(tt.chain, nil, false); err != nil {
					t.Fatalf("plain request: %v", err)
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
	s := newStackWith(t, stackOptions{providers: ownFieldProviders, chains: unsupportedChains})
	s.emu.AddModel("cerebras", emulator.Model{ID: "gpt-oss-120b", Unsupported: []string{"clear_thinking"}})
	if _, route, err := s.askWith("cer", map[string]string{"temperature": "0.2"}, false); err != nil || route != "groq/llama-3.1-8b-instant" {
		t.Fatalf("answered by %q (%v), want groq/llama-3.1-8b-instant", route, err)
	}
	rest, ok := s.rest("cerebras/gpt-oss-120b")
	if !ok || rest.Class != "bad_config" || !rest.Until.Equal(t0.Add(6*time.Hour)) {
		t.Fatalf("rest = %+v (found %v), want bad_config until t0+6h", rest, ok)
	}
	before := s.emu.Calls("cerebras", "gpt-oss-120b")
	if _, route, err := s.askWith("cer", nil, false); err != nil || route != "groq/llama-3.1-8b-instant" {
		t.Fatalf("second request: answered by %q (%v)", route, err)
	}
	if n := s.emu.Calls("cerebras", "gpt-oss-120b"); n != before {
		t.Errorf("the resting route was called %d times", n-before)
	}
}
