package e2e_test

import (
	"testing"

	"github.com/tollfree/tollfree/emulator"
)

// The stack the real clients of issue 33 talk to: every chat chain has a
// Gemini-native route first (Gemini's own API, its function calls and
// inline images translated by the gateway) and an OpenAI-compatible one
// second; the embeddings chain is gemini-embedding-001 on Gemini's native
// API, then the same model on Gemini's OpenAI-compatible endpoint (a
// chain of embeddings is one model: vectors of two models do not compare).
// The emulated models follow what a request asks (emulator.Model.Follows):
// a tool call, then a sentence quoting the tool's result; an instance of
// the schema; a sentence naming the image.

const clientsProviders = `
providers:
  gemini:
    preset: gemini
    base_url: EMU/gemini/v1beta
    api_key: ${GEMINI_API_KEY}
    models:
      # More than the free tier's 5 a minute, so that the many requests of
      # one test stay on the first route unless a test makes it fail.
      gemini-2.5-flash: {rpm: 1000, rpd: 10000}
  groq:   {preset: groq,   base_url: EMU/groq/v1,       api_key: ${GROQ_API_KEY}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1, api_key: ${CEREBRAS_API_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
  gemini-compat:
    dialect: openai
    base_url: EMU/gemini/v1beta/openai
    api_key: ${GEMINI_API_KEY}
    models:
      gemini-embedding-001: {embedding: true, dimensions: 3072}
`

const clientsChains = `
chains:
  agent:
    routes: [gemini/gemini-2.5-flash, groq/meta-llama/llama-4-scout-17b-16e-instruct]
  vectors:
    routes: [gemini/gemini-embedding-001, gemini-compat/gemini-embedding-001]
  textonly:
    routes: [groq/llama-3.3-70b-versatile]
  lookers:
    routes: [groq/llama-3.3-70b-versatile, gemini/gemini-2.5-flash]
`

// clientsStack starts the gateway and the emulator for the client tests.
func clientsStack(t *testing.T) *stack {
	t.Helper()
	s := startStackWith(t, stackOptions{providers: clientsProviders, config: clientsChains})
	s.emu.AddModel("gemini", emulator.Model{ID: "gemini-2.5-flash", Follows: true})
	s.emu.AddModel("groq", emulator.Model{ID: "meta-llama/llama-4-scout-17b-16e-instruct", Follows: true})
	s.emu.AddModel("groq", emulator.Model{ID: "llama-3.3-70b-versatile", Follows: true, NoVision: true})
	s.emu.AddModel("gemini", emulator.Model{ID: "gemini-embedding-001", Embedding: true, Dimensions: 3072})
	return s
}
