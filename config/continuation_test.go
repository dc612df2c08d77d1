package config

import (
	"strings"
	"testing"
)

// TestContinuationMethods (issue 13): every route continues a broken
// stream by default, by the best method its preset documents: prefix where
// the provider honours one (Groq, OpenRouter, Mistral, Ollama, Gemini's
// 2.x-3.5 Flash models), instruct elsewhere (Cerebras, NVIDIA, GitHub,
// Cloudflare, Gemma, an unlisted model, a provider without a preset). A
// route's continuation overrides it.
func TestContinuationMethods(t *testing.T) {
	const src = `
providers:
  groq: {}
  cerebras: {}
  gemini: {}
  openrouter: {}
  mistral: {}
  nvidia: {}
  ollama: {}
  lab:
    base_url: http://127.0.0.1:8000/v1
    models:
      m1: {}
      m2: {continuation: prefix}
  own:
    preset: groq
    models:
      llama-3.1-8b-instant: {continuation: instruct}
      llama-3.3-70b-versatile: {continuation: off}
      openai/gpt-oss-20b: {continuation: auto}
chains:
  a:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b, gemini/gemini-2.5-flash, gemini/gemma-3-27b-it,
      openrouter/qwen/qwen3-coder:free, mistral/mistral-small-latest, nvidia/meta/llama-3.3-70b-instruct,
      ollama/qwen3:8b, lab/m1, lab/m2,
      own/llama-3.1-8b-instant, own/llama-3.3-70b-versatile, own/openai/gpt-oss-20b]
`
	p, err := Parse("t.yaml", []byte(src), testEnv(nil))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	want := map[string]Continuation{
		"groq/llama-3.3-70b-versatile":       ContinuePrefix,
		"cerebras/gpt-oss-120b":              ContinueInstruct,
		"gemini/gemini-2.5-flash":            ContinuePrefix,
		"gemini/gemma-3-27b-it":              ContinueInstruct,
		"openrouter/qwen/qwen3-coder:free":   ContinuePrefix,
		"mistral/mistral-small-latest":       ContinuePrefix,
		"nvidia/meta/llama-3.3-70b-instruct": ContinueInstruct,
		"ollama/qwen3:8b":                    ContinuePrefix,
		"lab/m1":                             ContinueInstruct,
		"lab/m2":                             ContinuePrefix,
		"own/llama-3.1-8b-instant":           ContinueInstruct,
		"own/llama-3.3-70b-versatile":        ContinueOff,
		"own/openai/gpt-oss-20b":             ContinuePrefix,
	}
	for id, w := range want {
		rt := p.Routes[id]
		if rt == nil {
			t.Errorf("%s: no route", id)
			continue
		}
		if rt.Continuation != w {
			t.Errorf("%s: continuation %s, want %s", id, rt.Continuation, w)
		}
	}
}

// TestContinuationRefused: a method that does not exist is named, and the
// old opt-in can_continue is refused with the field that replaced it.
func TestContinuationRefused(t *testing.T) {
	tests := []struct{ model, want string }{
		{"{continuation: always}", `providers.groq.models["llama-3.1-8b-instant"].continuation: "always" is not auto, prefix, instruct or off`},
		{"{can_continue: true}", `providers.groq.models["llama-3.1-8b-instant"].can_continue: replaced by continuation, which is on by default`},
		{"{can_continue: false}", "continuation: off"},
	}
	for _, tt := range tests {
		src := "providers:\n  groq:\n    models:\n      llama-3.1-8b-instant: " + tt.model + "\nchains:\n  a: {routes: [groq/llama-3.1-8b-instant]}\n"
		_, err := Parse("t.yaml", []byte(src), testEnv(nil))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to say %q", tt.model, err, tt.want)
		}
	}
}
