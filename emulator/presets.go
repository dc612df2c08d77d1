package emulator

import (
	"strings"
	"time"
)

// Preset is one free-tier provider with its usual models, ready for
// AddPreset.
type Preset struct {
	Provider Provider
	Models   []Model
}

// AddPreset adds the preset's provider and models.
func (e *Emulator) AddPreset(p Preset) {
	e.AddProvider(p.Provider)
	for _, m := range p.Models {
		e.AddModel(p.Provider.Name, m)
	}
}

// FreeTier returns the free tiers as docs/PROVIDERS.md gives them (numbers of
// late 2025 to mid 2026), each provider named after its flavor, with any key
// accepted and made-up but plausible latencies, for the demo and the day
// simulator. Gemini, Groq and NVIDIA count their refusals against the day
// (Provider.CountRefusals), as seed 000 saw: "a failed call still counted
// against the day's quota". Every chat model follows what a request asks
// (Model.Follows: tool calls, schema instances, a sentence naming an
// image), and refuses tools, images and audio where its provider says the
// model takes none (issue 33); the embedding models answer embeddings. It
// returns new values on every call; callers may change them.
func FreeTier() []Preset {
	ps := freeTier()
	for i := range ps {
		for j := range ps[i].Models {
			m := &ps[i].Models[j]
			if m.Embedding {
				continue
			}
			m.Follows = true
			vision, tools, audio := freeTakes(ps[i].Provider.Name + "/" + m.ID)
			m.NoVision, m.NoTools, m.NoAudio = !vision, !tools, !audio
		}
	}
	return ps
}

// freeTakes says which of images, tools and audio a free chat model takes,
// as the config's presets do (config/presets.go cites the providers'
// pages): Gemini's Flash models all three, Gemma images, Llama 4 Scout and
// GitHub's OpenAI models images and tools, DeepSeek-R1 neither, every
// other model tools only.
func freeTakes(route string) (vision, tools, audio bool) {
	switch {
	case strings.HasPrefix(route, "gemini/gemini-"):
		return true, true, true
	case strings.HasPrefix(route, "gemini/gemma-"):
		return true, false, false
	case route == "groq/meta-llama/llama-4-scout-17b-16e-instruct", strings.HasPrefix(route, "github/openai/"),
		strings.HasPrefix(route, "mistral/mistral-"):
		return true, true, false
	case route == "github/deepseek/DeepSeek-R1":
		return false, false, false
	}
	return false, true, false
}

func freeTier() []Preset {
	ms := time.Millisecond
	groq := func(id string, rpm, rpd, tpm, tpd int) Model {
		return Model{ID: id, Limits: Limits{RPM: rpm, RPD: rpd, TPM: tpm, TPD: tpd}, Latency: 250 * ms, ChunkDelay: 5 * ms}
	}
	gemini := func(id string, rpm, rpd, tpm int) Model {
		return Model{ID: id, Limits: Limits{RPM: rpm, RPD: rpd, TPM: tpm}, Latency: 900 * ms, ChunkDelay: 40 * ms}
	}
	cerebras := func(id string, rpm, rpd, tpm, tpd int) Model {
		return Model{ID: id, Limits: Limits{RPM: rpm, RPD: rpd, TPM: tpm, TPD: tpd}, Latency: 200 * ms, ChunkDelay: 2 * ms}
	}
	plain := func(id string, latency time.Duration, l Limits) Model {
		return Model{ID: id, Limits: l, Latency: latency, ChunkDelay: 30 * ms}
	}
	return []Preset{
		{Provider: Provider{Name: "groq", Flavor: FlavorGroq, CountRefusals: true}, Models: []Model{
			groq("llama-3.1-8b-instant", 30, 14400, 6000, 500000),
			groq("llama-3.3-70b-versatile", 30, 1000, 12000, 100000),
			groq("openai/gpt-oss-120b", 30, 1000, 8000, 200000),
			groq("openai/gpt-oss-20b", 30, 1000, 8000, 200000),
			groq("qwen/qwen3-32b", 60, 1000, 6000, 500000),
			groq("meta-llama/llama-4-scout-17b-16e-instruct", 30, 1000, 30000, 500000),
			groq("moonshotai/kimi-k2-instruct-0905", 60, 1000, 10000, 300000),
		}},
		{Provider: Provider{Name: "gemini", Flavor: FlavorGemini, CountRefusals: true}, Models: []Model{
			gemini("gemini-3-flash", 5, 20, 250000),
			gemini("gemini-3.1-flash-lite", 15, 500, 250000),
			gemini("gemini-2.5-flash", 5, 20, 250000),
			gemini("gemini-2.5-flash-lite", 10, 20, 250000),
			gemini("gemma-3-27b-it", 30, 14400, 15000),
			// 3072 dimensions; free: 100 RPM, 1,000 RPD, 30,000 TPM.
			{ID: "gemini-embedding-001", Embedding: true, Dimensions: 3072, Limits: Limits{RPM: 100, RPD: 1000, TPM: 30000}, Latency: 150 * ms},
		}},
		{Provider: Provider{Name: "cerebras", Flavor: FlavorCerebras}, Models: []Model{
			cerebras("gpt-oss-120b", 30, 14400, 60000, 1000000),
			cerebras("llama3.1-8b", 30, 14400, 60000, 1000000),
			cerebras("llama-3.3-70b", 30, 14400, 60000, 1000000),
			cerebras("qwen-3-32b", 30, 14400, 60000, 1000000),
			cerebras("qwen-3-coder-480b", 10, 100, 150000, 1000000),
		}},
		{Provider: Provider{Name: "openrouter", Flavor: FlavorOpenRouter, Limits: Limits{RPM: 20, RPD: 50}}, Models: []Model{
			plain("meta-llama/llama-3.3-70b-instruct:free", 1500*ms, Limits{}),
			plain("openai/gpt-oss-120b:free", 1500*ms, Limits{}),
			plain("qwen/qwen3-coder:free", 2000*ms, Limits{RPM: 8}),
		}},
		{Provider: Provider{Name: "nvidia", Flavor: FlavorNVIDIA, Limits: Limits{RPM: 40}, CountRefusals: true}, Models: []Model{
			plain("meta/llama-3.3-70b-instruct", 800*ms, Limits{}),
			plain("openai/gpt-oss-120b", 800*ms, Limits{}),
			plain("moonshotai/kimi-k2-instruct", 1200*ms, Limits{RPM: 10}),
		}},
		{Provider: Provider{Name: "mistral", Flavor: FlavorMistral, Limits: Limits{RPM: 60, TPM: 500000}}, Models: []Model{
			plain("mistral-small-latest", 600*ms, Limits{}),
			plain("mistral-large-latest", 900*ms, Limits{}),
			{ID: "mistral-embed", Embedding: true, Dimensions: 1024, Latency: 200 * ms},
		}},
		{Provider: Provider{Name: "github", Flavor: FlavorGitHub}, Models: []Model{
			plain("openai/gpt-4o-mini", 700*ms, Limits{RPM: 15, RPD: 150}),
			plain("openai/gpt-4o", 900*ms, Limits{RPM: 10, RPD: 50}),
			plain("deepseek/DeepSeek-R1", 3000*ms, Limits{RPM: 1, RPD: 8}),
		}},
		{Provider: Provider{Name: "ollama", Flavor: FlavorOllama}, Models: []Model{
			plain("llama3.2", 400*ms, Limits{}),
		}},
	}
}
