// Package emutest owns the emulated free providers that the router's tests
// and the end-to-end tests run against: the emulator with Groq, Gemini,
// Cerebras and OpenRouter and every model the tests name, served over real
// HTTP by an httptest server; the config blocks that point a plan at it;
// the keys it expects; and the plan compiled from such a config. Time is
// the test's: the emulator waits on the clock it is given (a clock.Fake by
// default, at T0).
//
// It builds no router and no gateway, so that package route's own tests can
// use it; it is imported by tests only.
package emutest

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
)

// AnswerChain is the chains of many tests: four routes over three
// providers, and a Gemini-first one.
const AnswerChain = `
chains:
  answer:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant, gemini/gemini-2.5-flash-lite, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
  gem:
    routes: [gemini/gemini-2.5-flash, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
`

// T0 is the fake clocks' start: a weekday morning in UTC.
var T0 = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// LAMidnight is the first midnight in America/Los_Angeles after T0 (00:00
// PDT), when Gemini's daily quotas reset.
var LAMidnight = time.Date(2026, 6, 16, 7, 0, 0, 0, time.UTC)

// Keys are the keys the emulated providers expect, by environment variable.
var Keys = map[string]string{
	"GROQ_API_KEY":       "gsk_test_groq_key_0001",
	"GEMINI_API_KEY":     "AIzaTestGeminiKey0001",
	"CEREBRAS_API_KEY":   "csk-test-cerebras-0001",
	"OPENROUTER_API_KEY": "sk-or-v1-test-0001",
}

// Providers is the providers block of a config over the emulator; EMU
// stands for its URL.
const Providers = `
providers:
  groq:     {preset: groq,     base_url: EMU/groq/v1,       api_key: ${GROQ_API_KEY}}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`

// LimitedProviders is Providers with cerebras's gpt-oss-120b set never to
// continue a stream (continuation: off: a chain ending with it has no
// route after the first to continue a broken answer), and cerebras's llama
// given a small context (a safety-net route, seed 001). Every other route
// continues a broken stream by its preset's method, as by default: prefix
// on Groq, Gemini 2.5 and OpenRouter, instruct on Cerebras and Gemma.
const LimitedProviders = `
providers:
  groq:     {preset: groq,     base_url: EMU/groq/v1,       api_key: ${GROQ_API_KEY}}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras:
    preset: cerebras
    base_url: EMU/cerebras/v1
    api_key: ${CEREBRAS_API_KEY}
    models:
      gpt-oss-120b: {continuation: off}
      llama3.1-8b: {max_context: 1000}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`

// Models are the emulated models, by provider.
var Models = []struct{ Provider, ID string }{
	{"groq", "llama-3.3-70b-versatile"}, {"groq", "llama-3.1-8b-instant"}, {"groq", "openai/gpt-oss-120b"},
	{"gemini", "gemini-2.5-flash-lite"}, {"gemini", "gemini-2.5-flash"}, {"gemini", "gemma-3-27b-it"},
	{"cerebras", "gpt-oss-120b"}, {"cerebras", "llama3.1-8b"},
	{"openrouter", "openai/gpt-oss-120b:free"},
}

// Start starts the emulator with the four providers and every model of
// Models, on clk, each route answering after latency[route ID]; the server
// closes when tb ends. It returns the emulator and its URL.
func Start(tb testing.TB, clk clock.Clock, latency map[string]time.Duration) (*emulator.Emulator, string) {
	tb.Helper()
	emu := emulator.New(emulator.Options{Clock: clk})
	for _, name := range []string{"groq", "gemini", "cerebras", "openrouter"} {
		emu.AddProvider(emulator.Provider{Name: name, Flavor: name, Key: Keys[strings.ToUpper(name)+"_API_KEY"]})
	}
	for _, m := range Models {
		emu.AddModel(m.Provider, emulator.Model{ID: m.ID, Latency: latency[m.Provider+"/"+m.ID]})
	}
	srv := httptest.NewServer(emu)
	tb.Cleanup(srv.Close)
	return emu, srv.URL
}

// Plan compiles yaml, EMU replaced by emuURL; env is read before Keys.
func Plan(tb testing.TB, yaml, emuURL string, env map[string]string) *config.Plan {
	tb.Helper()
	plan, err := config.Parse("test.yaml", []byte(strings.ReplaceAll(yaml, "EMU", emuURL)), Env(env))
	if err != nil {
		tb.Fatalf("config: %v", err)
	}
	return plan
}

// Env looks a variable up in env, then in Keys.
func Env(env map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return Keys[k]
	}
}

// Question is the question the tests ask.
const Question = "What does tollfree do?"

// Answer is the emulator's answer for a route (provider/model).
func Answer(route string) string {
	return "Hello from the tollfree emulator: this answer comes from " + route + "."
}

// Tokens is the emulator's token estimate of a text.
func Tokens(s string) int { return (len(s) + 3) / 4 }

// Words splits an answer as the emulator streams it: one word with its
// following space per chunk.
func Words(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// SameAnswer gives the routes (provider/model) one answer text, so that a
// continuation on another route finishes exactly the answer the first one
// started.
func SameAnswer(emu *emulator.Emulator, text string, routes ...string) {
	for _, r := range routes {
		p, m, _ := strings.Cut(r, "/")
		emu.AddModel(p, emulator.Model{ID: m, Answer: text})
	}
}

// WaitCalls waits until the emulator has received n calls for a route.
func WaitCalls(tb testing.TB, emu *emulator.Emulator, provider, model string, n int) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for emu.Calls(provider, model) < n {
		if time.Now().After(deadline) {
			tb.Fatalf("%s/%s: got %d calls, want %d", provider, model, emu.Calls(provider, model), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// CallsReach is WaitCalls that reports false after 2 s, rather than failing
// the test, when the calls do not come: the caller can then let the request
// end before it fails (a request left waiting on the fake clock would hold
// the test's shutdown).
func CallsReach(emu *emulator.Emulator, provider, model string, n int) bool {
	deadline := time.Now().Add(2 * time.Second)
	for emu.Calls(provider, model) < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// Chunks is the exact chunk sequence of an answer streamed in pieces: the
// first piece with the role, each following piece, and the finish (on the
// last piece when lastFinish, as Gemini sends it, else on a chunk of its
// own, as the OpenAI dialect does).
func Chunks(pieces []string, lastFinish bool) []llm.Chunk {
	var out []llm.Chunk
	for i, p := range pieces {
		c := llm.Chunk{Content: p}
		if i == 0 {
			c.Role = "assistant"
		}
		if lastFinish && i == len(pieces)-1 {
			c.FinishReason = "stop"
		}
		out = append(out, c)
	}
	if !lastFinish {
		out = append(out, llm.Chunk{FinishReason: "stop"})
	}
	return out
}
