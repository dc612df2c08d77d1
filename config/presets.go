package config

import (
	"sort"
	"strings"
	"time"
)

// Preset is one free-tier provider's catalog entry: its wire facts, its
// published free limits and its models. A provider that names a preset
// starts from these values; its config overrides any of them.
//
// Every figure carries its source and the source's date, taken from the
// project's provider notes (docs/PROVIDERS.md: provider docs, SDK source and
// error bodies quoted in public issues; "cheahjs" is the README of
// https://github.com/cheahjs/free-llm-api-resources at commit e6765bc
// [2026-07-18]).
// Free limits change often: they are defaults, not truth.
type Preset struct {
	Name string
	// Flavor names the provider's quirks; see Provider.Flavor.
	Flavor  string
	Dialect Dialect
	// BaseURL may reference the environment (Cloudflare's account id).
	BaseURL string
	// KeyEnv is the variable the key is read from by default; "" when the
	// provider needs no key (Ollama).
	KeyEnv string
	// KeyOptional: the provider also answers without a key (Pollinations'
	// anonymous tier), so an unset KeyEnv leaves it enabled, keyless,
	// instead of disabled; a key set there is sent (a higher tier).
	KeyOptional bool
	// Limits are account-wide, shared by every model.
	Limits Limits
	// Reset is the daily reset rule, as written in a config file.
	Reset string
	// Timeout is the default attempt timeout of the preset's models; zero
	// leaves it to each chain.
	Timeout time.Duration
	// AnyModel accepts model ids the catalog does not list (Ollama runs
	// whatever was pulled); AnyModelSuffix accepts ids with that suffix
	// (OpenRouter's ":free" catalog changes weekly).
	AnyModel       bool
	AnyModelSuffix string
	// Schema is what the preset's models can do for a typed answer, unless
	// a model says otherwise: "enforce", "json" or "none" ("" is none).
	// See SchemaSupport; the sources are in schemaSources.
	Schema string
	// Prefix says that the provider honours a true prefix continuation for
	// every model: the partial answer sent as the start of the model's own
	// reply is continued, not answered (see ContinuePrefix). A route whose
	// preset (or model) does not say so continues by instruct. Each preset
	// that sets it cites where the provider says so.
	Prefix bool
	Models []PresetModel
	// Source says where the limits and facts come from, with dates.
	Source string
	// Checked is the catalog's last look at the provider's own page (issue
	// 35): the page's public URL, the date that page gives (YYYY-MM-DD),
	// and whether the free offer still stands. See catalog.go.
	Checked Checked
}

// PresetModel is one model of a preset.
type PresetModel struct {
	ID string
	// Limits are per model; zero fields are unknown or unlimited.
	Limits     Limits
	MaxContext int
	MaxOutput  int
	Reasoning  bool
	// Prefix: this model honours a prefix continuation, where its preset
	// does not say so of every model (Gemini's, model by model).
	Prefix bool
	// Canonical names the model across providers; "" takes the default.
	Canonical string
	// Schema overrides the preset's Schema for this model.
	Schema string
	// Tools, Vision and Audio say whether the model takes function tools,
	// images and audio (issue 33); CapsSource cites where the provider says
	// so, with a public URL and the date it was read (YYYY-MM-DD).
	Tools, Vision, Audio Capability
	CapsSource           string
	// Embedding marks an embedding model (POST /v1/embeddings), with its
	// default vector length.
	Embedding  bool
	Dimensions int
	// Source of the model's figures, with its date.
	Source string
	// Status is StatusActive ("") unless the provider retired the model or
	// stopped offering it free; Retired is then the date it did, Instead
	// the route to use, and StatusSource the page that says so. A config
	// naming it still loads, with a warning (catalog.go).
	Status       Status
	Retired      string
	Instead      string
	StatusSource string
}

// Sources shared by several entries.
const (
	srcGroq       = "console.groq.com/docs/rate-limits free plan table [late 2025 snapshot]; cheahjs [2026-07-18] agrees"
	srcGemini     = "cheahjs [2026-07-18], read from Google's Cloud Quotas API; TPM counts input tokens only"
	srcCerebras   = "inference-docs.cerebras.ai/support/rate-limits [undated; cheahjs 2026-07-18 agrees for gpt-oss-120b, llama3.1-8b]; TPM/TPH/TPD/RPM/RPH/RPD as published"
	srcCtxCard    = "context from the model card [not in docs/PROVIDERS.md, unverified]"
	srcGeminiCtx  = "context 1048576 from Gemini's 400 context-length body quoted in docs/PROVIDERS.md [2026]"
	srcGitHub     = "docs.github.com github-models prototyping doc, Copilot Free [2026-07]; tokens in/out per request"
	srcUnverified = "id from the provider's catalog [not in docs/PROVIDERS.md, unverified]; limits are the account's"
	srcSambaNova  = "docs.sambanova.ai/docs/en/models/rate-limits Free Tier table [2026-08-31, via cuihuan/awesome-ai-gateway free_tiers.json]"
	srcZai        = "docs.z.ai/guides/overview/pricing: free input and output [2026-08-31]; limits unpublished"
	srcGeminiFree = "https://ai.google.dev/gemini-api/docs/pricing free tier [2026-10-22, via apidog.com/jp/blog/gemini-api-free-tier]; context from https://ai.google.dev/gemini-api/docs/models [2026-12-04]; free limits unpublished"
)

// Where each provider says what its models take besides text (issue 33:
// PresetModel.Tools, Vision, Audio). Each names a public page and the date
// it was read. A model a page does not list as taking something is
// marked as not taking it only where the page lists the models that do;
// elsewhere it is left unknown (tried, and a refusal learned).
const (
	capGroq       = "tools: https://console.groq.com/docs/tool-use; images: https://console.groq.com/docs/vision (Llama 4 Scout only); no audio input in chat [2026-12-04]"
	capGroqNone   = "not in https://console.groq.com/docs/tool-use nor https://console.groq.com/docs/vision [2026-12-04]"
	capGemini     = "https://ai.google.dev/gemini-api/docs/models: text, image, video, audio and PDF input, function calling supported [2026-12-04]"
	capGemma      = "https://ai.google.dev/gemma/docs/core/gemma_on_gemini_api: text and image input, no native function calling (\"Function calling is not enabled for models/gemma-3-27b-it\") [2026-12-04]"
	capGemma1B    = "https://ai.google.dev/gemma/docs/core: Gemma 3 1B takes text only; no native function calling on the Gemini API [2026-12-04]"
	capCerebras   = "https://inference-docs.cerebras.ai/capabilities/tool-use: tool calling; text-only models [2026-12-04]"
	capMistral    = "https://docs.mistral.ai/capabilities/function_calling (every chat model); images: https://docs.mistral.ai/capabilities/vision [2026-12-04]"
	capGitHub     = "https://github.com/marketplace/models model cards: tools and image input for the OpenAI models [2026-12-04]"
	capCohere     = "https://docs.cohere.com/docs/compatibility-api: tool use through the compatibility API; Command A Vision is a separate model [2026-12-04]"
	capSambaNova  = "https://docs.sambanova.ai/docs/en/features/function-calling [2026-12-04]; text-only models"
	capZai        = "https://docs.z.ai/guides/capabilities/function-calling [2026-12-04]; the V models take images, these do not"
	capOVH        = "https://endpoints.ai.cloud.ovh.net catalog: function calling on these models [2026-12-04]; text-only"
	capHF         = "https://huggingface.co/docs/inference-providers/guides/function-calling [2026-12-04]; gpt-oss is text-only"
	capNVIDIA     = "https://docs.api.nvidia.com/nim/reference (model cards on build.nvidia.com): tool calling [2026-12-04]; text-only models"
	capOpenRouter = "https://openrouter.ai/qwen/qwen3-coder:free: supported parameters include tools; text input [2026-12-04]"
	capCloudflare = "https://developers.cloudflare.com/workers-ai/features/function-calling/ lists the models with function calling, not this one; text-only [2026-12-04]"
	capPolli      = "https://github.com/pollinations/pollinations APIDOCS.md and the text model list's tools/vision flags [2026-12-04]"
)

// Presets returns the catalog, sorted by name. Each call builds it afresh.
func Presets() []Preset {
	m := presetCatalog()
	out := make([]Preset, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupPreset returns the preset called name.
func LookupPreset(name string) (Preset, bool) {
	p, ok := presetCatalog()[name]
	return p, ok
}

// Model returns the preset's entry for model id.
func (p Preset) Model(id string) (PresetModel, bool) {
	for _, m := range p.Models {
		if m.ID == id {
			return m, true
		}
	}
	return PresetModel{}, false
}

// schemaOf returns what the model id can do for a typed answer: its own
// Schema, else the preset's.
func (p Preset) schemaOf(id string) string {
	if m, ok := p.Model(id); ok && m.Schema != "" {
		return m.Schema
	}
	return p.Schema
}

// What each provider can do for a typed answer (Preset.Schema,
// PresetModel.Schema), from the providers' docs (issue 15):
//
//   - Groq: JSON mode on its chat models; strict structured outputs only
//     on openai/gpt-oss-20b and -120b (console.groq.com/docs/structured-outputs);
//     llama-3.3-70b-versatile answers json_schema with 400 "This model does
//     not support response format `json_schema`." (quoted in public
//     projects, e.g. github.com/ItzCrazyKns/Vane/issues/980); the compound
//     systems do not take JSON mode (github.com/mem0ai/mem0/issues/4054).
//   - Gemini: generationConfig.responseJsonSchema with responseMimeType
//     application/json on the gemini models (ai.google.dev/api/generate-content
//     GenerationConfig); Gemma answers "JSON mode is not enabled for
//     models/gemma-3-27b-it" (quoted in many public projects).
//   - Cerebras: structured outputs with json_schema
//     (inference-docs.cerebras.ai/capabilities/structured-outputs).
//   - Mistral: custom structured outputs for all models
//     (docs.mistral.ai release note 2025-01-28).
//   - GitHub Models: the OpenAI models take json_schema (OpenAI's
//     structured outputs); the others are not documented: none.
//   - Ollama: response_format json_schema is turned into a grammar
//     (github.com/ollama/ollama openai/openai.go).
//   - OpenRouter, NVIDIA, Cloudflare: depends on the model behind the id,
//     not documented per free model: none (ask in words; raise it per
//     model in the config where the model is known to take more).
const (
	schemaSrcGroq = "console.groq.com/docs/structured-outputs"
)

// acceptsAny reports whether the preset accepts an unlisted model id.
func (p Preset) acceptsAny(id string) bool {
	return p.AnyModel || p.AnyModelSuffix != "" && strings.HasSuffix(id, p.AnyModelSuffix)
}

func presetCatalog() map[string]Preset {
	list := []Preset{
		{
			Name: "groq", Flavor: "groq", Dialect: DialectOpenAI,
			BaseURL: "https://api.groq.com/openai/v1", KeyEnv: "GROQ_API_KEY",
			// Groq publishes no daily reset time; one measurement saw the RPD
			// countdown refill continuously (docs/PROVIDERS.md, uncertain).
			Reset:  "rolling",
			Source: srcGroq,
			Schema: schemaJSONWord,
			// "Assistant Message Prefilling": a trailing assistant message
			// is the start of the answer, for "any text-to-text model"
			// (https://console.groq.com/docs/prompting). Groq refuses
			// message fields it does not know ("property 'timestamp' is
			// unsupported", github.com/ServiceStack/llms/issues/17), so the
			// prefill is a plain assistant message, without Mistral's flag.
			Prefix: true,
			Models: []PresetModel{
				{ID: "llama-3.1-8b-instant", Limits: Limits{RPM: 30, RPD: 14400, TPM: 6000, TPD: 500000}, MaxContext: 131072, Canonical: "llama-3.1-8b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capGroq, Source: srcGroq + "; " + srcCtxCard},
				{ID: "llama-3.3-70b-versatile", Limits: Limits{RPM: 30, RPD: 1000, TPM: 12000, TPD: 100000}, MaxContext: 131072, Canonical: "llama-3.3-70b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capGroq, Source: srcGroq + "; " + srcCtxCard},
				{ID: "openai/gpt-oss-120b", Limits: Limits{RPM: 30, RPD: 1000, TPM: 8000, TPD: 200000}, MaxContext: 131072, Reasoning: true, Canonical: "gpt-oss-120b", Schema: schemaEnforceWord, Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capGroq, Source: srcGroq + "; " + srcCtxCard + "; strict schema: " + schemaSrcGroq},
				{ID: "openai/gpt-oss-20b", Limits: Limits{RPM: 30, RPD: 1000, TPM: 8000, TPD: 200000}, MaxContext: 131072, Reasoning: true, Canonical: "gpt-oss-20b", Schema: schemaEnforceWord, Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capGroq, Source: srcGroq + "; " + srcCtxCard + "; strict schema: " + schemaSrcGroq},
				{ID: "qwen/qwen3-32b", Limits: Limits{RPM: 60, RPD: 1000, TPM: 6000, TPD: 500000}, MaxContext: 131072, Reasoning: true, Canonical: "qwen3-32b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capGroq, Source: srcGroq + "; " + srcCtxCard},
				{ID: "meta-llama/llama-4-scout-17b-16e-instruct", Limits: Limits{RPM: 30, RPD: 1000, TPM: 30000, TPD: 500000}, MaxContext: 131072, Tools: CapYes, Vision: CapYes, Audio: CapNo, CapsSource: capGroq, Source: srcGroq + "; " + srcCtxCard},
				{ID: "moonshotai/kimi-k2-instruct-0905", Limits: Limits{RPM: 60, RPD: 1000, TPM: 10000, TPD: 300000}, MaxContext: 262144, Canonical: "kimi-k2-instruct-0905", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capGroq, Source: srcGroq + "; " + srcCtxCard},
				{ID: "groq/compound", Limits: Limits{RPM: 30, RPD: 250, TPM: 70000}, Schema: schemaNoneWord, Tools: CapNo, Vision: CapNo, Audio: CapNo, CapsSource: capGroqNone, Source: srcGroq + "; no TPD published"},
				{ID: "groq/compound-mini", Limits: Limits{RPM: 30, RPD: 250, TPM: 70000}, Schema: schemaNoneWord, Tools: CapNo, Vision: CapNo, Audio: CapNo, CapsSource: capGroqNone, Source: srcGroq + "; no TPD published"},
				{ID: "allam-2-7b", Limits: Limits{RPM: 30, RPD: 7000, TPM: 6000, TPD: 500000}, MaxContext: 4096, Tools: CapNo, Vision: CapNo, Audio: CapNo, CapsSource: capGroqNone, Source: srcGroq + "; " + srcCtxCard},
				{ID: "qwen/qwen3.6-27b", Limits: Limits{RPD: 1000, TPM: 8000}, Canonical: "qwen3.6-27b", Tools: CapUnknown, Vision: CapNo, Audio: CapNo, CapsSource: "not yet in https://console.groq.com/docs/tool-use [2026-12-04]; text input", Source: "cheahjs [2026-07-18]; RPM and TPD not listed"},
			},
		},
		{
			Name: "gemini", Flavor: "gemini", Dialect: DialectGemini,
			BaseURL: "https://generativelanguage.googleapis.com/v1beta", KeyEnv: "GEMINI_API_KEY",
			// "Requests per day (RPD) quotas reset at midnight Pacific time."
			// (ai.google.dev/gemini-api/docs/rate-limits). Pro models have no
			// free quota in 2026 (429 "limit: 0"), so none is listed.
			Reset:  "midnight America/Los_Angeles",
			Source: srcGemini + "; reset: ai.google.dev/gemini-api/docs/rate-limits; limits are per project",
			Schema: schemaEnforceWord,
			Models: []PresetModel{
				// A final "model" turn is continued as the start of the reply
				// by the 2.x to 3.5 Flash models (verified for 2.5 and 3.5
				// Flash, github.com/LibreChat-AI/agents/pull/323; gemini-2.,
				// gemini-3-, gemini-3.1- in github.com/pipecat-ai/pipecat/pull/5821).
				// From Gemini 3.6 Flash and 3.5 Flash-Lite on, "Prefilling
				// model turns is no longer supported" (400 "Requests ending
				// with a model turn are not supported.",
				// https://ai.google.dev/gemini-api/docs/latest-model as quoted
				// in github.com/cline/cline/issues/12521): newer models are
				// left to instruct. Gemma through this API: not confirmed.
				// Free since 2026 (https://ai.google.dev/gemini-api/docs/pricing
				// free-tier column, read 2026-10-22 by
				// apidog.com/jp/blog/gemini-api-free-tier); Google publishes no
				// per-model free limits any more: none set, learned from 429s.
				{ID: "gemini-3.8-flash", MaxContext: 1048576, Reasoning: true, Tools: CapYes, Vision: CapYes, Audio: CapYes, CapsSource: capGemini, Source: srcGeminiFree},
				{ID: "gemini-3.6-flash", MaxContext: 1048576, Reasoning: true, Tools: CapYes, Vision: CapYes, Audio: CapYes, CapsSource: capGemini, Source: srcGeminiFree},
				{ID: "gemini-3.5-flash-lite", MaxContext: 1048576, Tools: CapYes, Vision: CapYes, Audio: CapYes, CapsSource: capGemini, Source: srcGeminiFree},
				{ID: "gemini-3.5-flash", Limits: Limits{RPM: 5, RPD: 20, TPM: 250000}, MaxContext: 1048576, Reasoning: true, Prefix: true, Tools: CapYes, Vision: CapYes, Audio: CapYes, CapsSource: capGemini, Source: srcGemini + "; " + srcGeminiCtx + "; id from the model's name"},
				{ID: "gemini-3-flash", Limits: Limits{RPM: 5, RPD: 20, TPM: 250000}, MaxContext: 1048576, Reasoning: true, Prefix: true, Tools: CapYes, Vision: CapYes, Audio: CapYes, CapsSource: capGemini, Source: srcGemini + "; " + srcGeminiCtx + "; id from the model's name"},
				{ID: "gemini-3.1-flash-lite", Limits: Limits{RPM: 15, RPD: 500, TPM: 250000}, MaxContext: 1048576, Prefix: true, Tools: CapYes, Vision: CapYes, Audio: CapYes, CapsSource: capGemini, Source: srcGemini + "; " + srcGeminiCtx + "; id from the model's name"},
				{ID: "gemini-2.5-flash", Limits: Limits{RPM: 5, RPD: 20, TPM: 250000}, MaxContext: 1048576, Reasoning: true, Prefix: true, Tools: CapYes, Vision: CapYes, Audio: CapYes, CapsSource: capGemini, Source: srcGemini + "; " + srcGeminiCtx},
				// Flash-Lite thinks only when given a budget (512..24576).
				{ID: "gemini-2.5-flash-lite", Limits: Limits{RPM: 10, RPD: 20, TPM: 250000}, MaxContext: 1048576, Prefix: true, Tools: CapYes, Vision: CapYes, Audio: CapYes, CapsSource: capGemini, Source: srcGemini + "; " + srcGeminiCtx},
				{ID: "gemma-3-27b-it", Schema: schemaNoneWord, Limits: Limits{RPM: 30, RPD: 14400, TPM: 15000}, MaxContext: 131072, Tools: CapNo, Vision: CapYes, Audio: CapNo, CapsSource: capGemma, Source: srcGemini + "; " + srcCtxCard},
				{ID: "gemma-3-12b-it", Schema: schemaNoneWord, Limits: Limits{RPM: 30, RPD: 14400, TPM: 15000}, MaxContext: 131072, Tools: CapNo, Vision: CapYes, Audio: CapNo, CapsSource: capGemma, Source: srcGemini + "; " + srcCtxCard},
				{ID: "gemma-3-4b-it", Schema: schemaNoneWord, Limits: Limits{RPM: 30, RPD: 14400, TPM: 15000}, MaxContext: 131072, Tools: CapNo, Vision: CapYes, Audio: CapNo, CapsSource: capGemma, Source: srcGemini + "; " + srcCtxCard},
				{ID: "gemma-3-1b-it", Schema: schemaNoneWord, Limits: Limits{RPM: 30, RPD: 14400, TPM: 15000}, MaxContext: 32768, Tools: CapNo, Vision: CapNo, Audio: CapNo, CapsSource: capGemma1B, Source: srcGemini + "; " + srcCtxCard},
				// Embeddings (issue 33): 3072 dimensions by default, 768 and 1536
				// on request (outputDimensionality), 2,048 input tokens;
				// free: 100 RPM, 30,000 TPM, 1,000 RPD.
				{ID: "gemini-embedding-001", Embedding: true, Dimensions: 3072, MaxContext: 2048, Limits: Limits{RPM: 100, RPD: 1000, TPM: 30000}, Source: "https://ai.google.dev/gemini-api/docs/embeddings and https://developers.googleblog.com/en/gemini-embedding-available-gemini-api/ [2025-07-14]; free tier https://ai.google.dev/gemini-api/docs/rate-limits [2026-12-04]"},
			},
		},
		{
			Name: "cerebras", Flavor: "cerebras", Dialect: DialectOpenAI,
			BaseURL: "https://api.cerebras.ai/v1", KeyEnv: "CEREBRAS_API_KEY",
			// A token bucket that refills continuously (same docs page). A
			// 2026-06 free key reported 5 RPM / 2400 RPD instead
			// (github.com/elizaOS/eliza/issues/8434): accounts differ.
			Reset:  "rolling",
			Source: srcCerebras,
			Schema: schemaEnforceWord,
			// Prefill: not documented (inference-docs.cerebras.ai); instruct.
			Models: []PresetModel{
				{ID: "gpt-oss-120b", Limits: Limits{RPM: 30, RPD: 14400, TPM: 60000, TPD: 1000000, RPH: 900, TPH: 1000000}, Reasoning: true, Canonical: "gpt-oss-120b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capCerebras, Source: srcCerebras},
				{ID: "llama3.1-8b", Limits: Limits{RPM: 30, RPD: 14400, TPM: 60000, TPD: 1000000, RPH: 900, TPH: 1000000}, Canonical: "llama-3.1-8b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capCerebras, Source: srcCerebras},
				{ID: "llama-3.3-70b", Limits: Limits{RPM: 30, RPD: 14400, TPM: 60000, TPD: 1000000, RPH: 900, TPH: 1000000}, Canonical: "llama-3.3-70b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capCerebras, Source: srcCerebras},
				{ID: "qwen-3-32b", Limits: Limits{RPM: 30, RPD: 14400, TPM: 60000, TPD: 1000000, RPH: 900, TPH: 1000000}, Reasoning: true, Canonical: "qwen3-32b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capCerebras, Source: srcCerebras},
				{ID: "qwen-3-235b-a22b-instruct-2507", Limits: Limits{RPM: 30, RPD: 14400, TPM: 60000, TPD: 1000000, RPH: 900, TPH: 1000000}, Canonical: "qwen3-235b-a22b-instruct-2507", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capCerebras, Source: srcCerebras},
				{ID: "qwen-3-235b-a22b-thinking-2507", Limits: Limits{RPM: 30, RPD: 14400, TPM: 60000, TPD: 1000000, RPH: 900, TPH: 1000000}, Reasoning: true, Canonical: "qwen3-235b-a22b-thinking-2507", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capCerebras, Source: srcCerebras},
				{ID: "qwen-3-coder-480b", Limits: Limits{RPM: 10, RPD: 100, TPM: 150000, TPD: 1000000, RPH: 100, TPH: 1000000}, Canonical: "qwen3-coder-480b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capCerebras, Source: srcCerebras},
			},
		},
		{
			Name: "openrouter", Flavor: "openrouter", Dialect: DialectOpenAI,
			BaseURL: "https://openrouter.ai/api/v1", KeyEnv: "OPENROUTER_API_KEY",
			// Account-wide over every :free model: 20 RPM, 50 RPD (1000 RPD
			// once 10 credits were ever bought); the day resets at 00:00 UTC
			// (openrouter.ai/docs/guides/routing/model-variants/free.md,
			// docs/PROVIDERS.md [2026]). Busy models get lower caps on the fly.
			Limits:         Limits{RPM: 20, RPD: 50},
			Reset:          "midnight UTC",
			AnyModelSuffix: ":free",
			Source:         "openrouter.ai/docs/guides/routing/model-variants/free.md [2026]; account-wide over :free models",
			// "Assistant Prefill: OpenRouter supports asking models to
			// complete a partial response ... include a message with role:
			// "assistant" at the end of your messages array"
			// (https://openrouter.ai/docs/api-reference/overview). A model
			// behind it that refuses is learned as such.
			Prefix: true,
			Models: []PresetModel{
				// The 8 RPM is the model's own cap in its 429 ("High demand
				// for qwen/qwen3-coder:free on OpenRouter - limited to 8
				// requests per minute"), on top of the account's 20.
				{ID: "qwen/qwen3-coder:free", MaxContext: 262144, Limits: Limits{RPM: 8}, Canonical: "qwen3-coder", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capOpenRouter + "; context 262,144: the same page", Source: "429 body quoted in docs/PROVIDERS.md [2026]: capped at 8 RPM when busy"},
			},
		},
		{
			Name: "nvidia", Flavor: "nvidia", Dialect: DialectOpenAI,
			BaseURL: "https://integrate.api.nvidia.com/v1", KeyEnv: "NVIDIA_API_KEY",
			// 40 RPM per account, no daily cap published (cheahjs
			// [2026-07-18]); some popular models are throttled far lower.
			Limits: Limits{RPM: 40},
			Reset:  "rolling",
			Source: "cheahjs [2026-07-18]: 40 RPM account-wide, no daily cap",
			// NIM serves vLLM, which continues a final assistant message
			// only when asked (continue_final_message), undocumented for the
			// hosted API (https://docs.nvidia.com/nim/large-language-models/latest/system-example.html
			// lists assistant messages as previous replies): instruct.
			Models: []PresetModel{
				{ID: "nvidia/nemotron-3-nano-30b-a3b", Reasoning: true, Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capNVIDIA, Source: "github.com/NVIDIA-NeMo/Guardrails/pull/2316; thinks with chat_template_kwargs.enable_thinking"},
				{ID: "meta/llama-3.3-70b-instruct", Canonical: "llama-3.3-70b", MaxContext: 131072, Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capNVIDIA, Source: srcUnverified + "; " + srcCtxCard},
				{ID: "openai/gpt-oss-120b", Reasoning: true, Canonical: "gpt-oss-120b", MaxContext: 131072, Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capNVIDIA, Source: srcUnverified + "; " + srcCtxCard},
			},
		},
		{
			Name: "mistral", Flavor: "mistral", Dialect: DialectOpenAI,
			BaseURL: "https://api.mistral.ai/v1", KeyEnv: "MISTRAL_API_KEY",
			// Experiment plan: "1 request per second, 500,000 tokens per
			// minute, 1 billion tokens per month", organization-wide
			// (help.mistral.ai/en/articles/225174). The month is taken as
			// the calendar month in UTC (Mistral names no reset hour).
			Limits: Limits{RPM: 60, TPM: 500000, TPMo: 1000000000},
			Reset:  "rolling",
			Source: "help.mistral.ai/en/articles/225174 [2026]; cheahjs [2026-07-18] says per model",
			Schema: schemaEnforceWord,
			// An assistant message with "prefix": true "force[s] the model to
			// start its answer by the content of the message"
			// (github.com/mistralai/client-python docs/models/assistantmessage.md);
			// without the flag a trailing assistant message is a 400 "Expected
			// last role User or Tool (or Assistant with prefix True) for
			// serving but got assistant" (github.com/QuantumNous/new-api/issues/2858).
			Prefix: true,
			Models: []PresetModel{
				{ID: "mistral-small-latest", MaxContext: 131072, Canonical: "mistral-small", Tools: CapYes, Vision: CapYes, Audio: CapNo, CapsSource: capMistral + "; context 128k: https://docs.mistral.ai/getting-started/models/ [2026-12-04]", Source: srcUnverified},
				{ID: "mistral-medium-latest", MaxContext: 131072, Canonical: "mistral-medium", Tools: CapYes, Vision: CapYes, Audio: CapNo, CapsSource: capMistral + "; context 128k: https://docs.mistral.ai/getting-started/models/ [2026-12-04]", Source: srcUnverified},
				{ID: "mistral-large-latest", Canonical: "mistral-large", Tools: CapYes, Vision: CapYes, Audio: CapNo, CapsSource: capMistral, Source: srcUnverified},
				{ID: "open-mistral-nemo", MaxContext: 131072, Canonical: "mistral-nemo", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capMistral + "; context 128k: https://docs.mistral.ai/getting-started/models/ [2026-12-04]", Source: srcUnverified},
				// mistral-embed: 1024 dimensions, 8,192 input tokens, on the
				// Experiment plan like every model.
				{ID: "mistral-embed", Embedding: true, Dimensions: 1024, MaxContext: 8192, Canonical: "mistral-embed", Source: "https://docs.mistral.ai/capabilities/embeddings/ [2026-12-04]"},
			},
		},
		{
			Name: "github", Flavor: "github", Dialect: DialectOpenAI,
			BaseURL: "https://models.github.ai/inference", KeyEnv: "GITHUB_TOKEN",
			// Per user per model over a 86400 s window with no fixed reset
			// hour (429 bodies quote waits like 5631 s): rolling.
			Reset:  "rolling",
			Source: srcGitHub,
			// Prefill: not documented for GitHub Models; instruct.
			Models: []PresetModel{
				{ID: "openai/gpt-4o-mini", Schema: schemaEnforceWord, Limits: Limits{RPM: 15, RPD: 150}, MaxContext: 8000, MaxOutput: 4000, Tools: CapYes, Vision: CapYes, Audio: CapNo, CapsSource: capGitHub, Source: srcGitHub + "; Low tier"},
				{ID: "openai/gpt-4o", Schema: schemaEnforceWord, Limits: Limits{RPM: 10, RPD: 50}, MaxContext: 8000, MaxOutput: 4000, Tools: CapYes, Vision: CapYes, Audio: CapNo, CapsSource: capGitHub, Source: srcGitHub + "; High tier (413 body names gpt-4o's 8000)"},
				{ID: "deepseek/DeepSeek-R1", Limits: Limits{RPM: 1, RPD: 8}, MaxContext: 4000, MaxOutput: 4000, Reasoning: true, Canonical: "deepseek-r1", Tools: CapNo, Vision: CapNo, Audio: CapNo, CapsSource: capGitHub + "; DeepSeek-R1 takes text and no tools", Source: srcGitHub},
				{ID: "xai/grok-3", Limits: Limits{RPM: 1, RPD: 15}, Canonical: "grok-3", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capGitHub + "; Grok 3 takes text", Source: srcGitHub + "; tokens per request not listed"},
				// The Embedding tier: 15 RPM, 150 RPD, 64,000 tokens a request.
				{ID: "openai/text-embedding-3-small", Embedding: true, Dimensions: 1536, Limits: Limits{RPM: 15, RPD: 150}, MaxContext: 8191, Canonical: "text-embedding-3-small", Source: srcGitHub + "; Embedding tier; 1536 dimensions: https://platform.openai.com/docs/guides/embeddings [2026-12-04]"},
			},
		},
		{
			Name: "cloudflare", Flavor: "cloudflare", Dialect: DialectOpenAI,
			BaseURL: "https://api.cloudflare.com/client/v4/accounts/${CLOUDFLARE_ACCOUNT_ID}/ai/v1", KeyEnv: "CLOUDFLARE_API_TOKEN",
			// 10,000 Neurons a day account-wide, "All limits reset daily at
			// 00:00 UTC" (cloudflare-docs workers-ai/platform/pricing.mdx
			// [2026]); neurons are not requests or tokens, so not modelled.
			Reset:  "midnight UTC",
			Source: "developers.cloudflare.com/workers-ai (pricing.mdx, open-ai-compatibility) [2026]",
			// Prefill: not documented for Workers AI; instruct.
			Models: []PresetModel{
				{ID: "@cf/meta/llama-3.1-8b-instruct", Canonical: "llama-3.1-8b", Tools: CapUnknown, Vision: CapNo, Audio: CapNo, CapsSource: capCloudflare, Source: "developers.cloudflare.com/workers-ai/get-started/rest-api [2026]"},
				// The replacement Cloudflare names for the models it deprecated
				// on 2026-05-30: tools, multi-turn tool calling.
				{ID: "@cf/zai-org/glm-4.7-flash", Canonical: "glm-4.7-flash", Reasoning: true, Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: "https://developers.cloudflare.com/workers-ai/models/glm-4.7-flash/: multi-turn tool calling; text [2026-05-08]", Source: "https://developers.cloudflare.com/changelog/post/2026-05-08-planned-model-deprecations/ [2026-05-08]"},
				// /ai/v1/embeddings (open-ai-compatibility): 768 dimensions, 512
				// input tokens.
				{ID: "@cf/baai/bge-base-en-v1.5", Embedding: true, Dimensions: 768, MaxContext: 512, Canonical: "bge-base-en-v1.5", Source: "https://developers.cloudflare.com/workers-ai/models/bge-base-en-v1.5/ and open-ai-compatibility [2026-12-04]"},
			},
		},
		{
			Name: "pollinations", Flavor: "pollinations", Dialect: DialectOpenAI,
			BaseURL: "https://gen.pollinations.ai/v1", KeyEnv: "POLLINATIONS_API_KEY", KeyOptional: true,
			// OpenAI-compatible POST /v1/chat/completions; keys (sk_ secret,
			// pk_ publishable) are optional: "Anonymous Access - No
			// authentication required for free models" (github.com/pollinations/pollinations APIDOCS.md
			// and auth guide [2026]). Usage is paid in "pollen"
			// refilled hourly by tier (github.com/pollinations/pollinations/issues/10871
			// [2026]); anonymous callers were held to "1 concurrent request / 3
			// sec interval" per IP (the 2025 github.com/pollinations/pollinations APIDOCS.md, docs/PROVIDERS.md): 20 RPM.
			// Spent pollen is a 402 (taken as the day spent), a model above
			// the tier a 402 "tier not high enough" (that route only).
			Limits:   Limits{RPM: 20},
			Reset:    "rolling",
			AnyModel: true,
			Source:   "github.com/pollinations/pollinations APIDOCS.md [2026]; 20 RPM from the 2025 anonymous 3 s interval [uncertain for gen.pollinations.ai]",
			// Prefill: not documented; instruct.
			Models: []PresetModel{
				{ID: "openai", Tools: CapYes, Vision: CapYes, Audio: CapNo, CapsSource: capPolli, Source: "github.com/pollinations/pollinations APIDOCS.md text model list [2026]; the model behind the alias changes"},
				{ID: "openai-fast", Tools: CapYes, Vision: CapYes, Audio: CapNo, CapsSource: capPolli, Source: "github.com/pollinations/pollinations APIDOCS.md text model list [2026]"},
				{ID: "mistral", Tools: CapYes, Vision: CapUnknown, Audio: CapNo, CapsSource: capPolli, Source: "github.com/pollinations/pollinations APIDOCS.md text model list [2026]"},
			},
		},
		{
			Name: "cohere", Flavor: "cohere", Dialect: DialectOpenAI,
			BaseURL: "https://api.cohere.com/compatibility/v1", KeyEnv: "COHERE_API_KEY",
			// Trial keys: "limited to 1,000 API calls a month" over every
			// endpoint, and 20 req / min per chat model
			// (docs.cohere.com/docs/rate-limits [2026]). The month is taken
			// as the calendar month in UTC (no reset hour published; client
			// code parks a spent key until the next UTC month).
			Limits: Limits{RPMo: 1000},
			Reset:  "rolling",
			Source: "docs.cohere.com/docs/rate-limits [2026]: trial keys 1,000 calls a month, 20 req/min per chat model",
			// Prefill: not documented for the compatibility API; instruct.
			Models: []PresetModel{
				{ID: "command-a-03-2025", MaxContext: 256000, Limits: Limits{RPM: 20}, Canonical: "command-a", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capCohere + "; context 256k: https://docs.cohere.com/docs/command-a [2026-12-04]", Source: "docs.cohere.com/docs/rate-limits [2026]: Command A 20 req/min trial"},
				{ID: "command-r-plus-08-2024", MaxContext: 128000, Limits: Limits{RPM: 20}, Canonical: "command-r-plus", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capCohere + "; context 128k: https://docs.cohere.com/docs/command-r-plus [2026-12-04]", Source: "docs.cohere.com/docs/rate-limits [2026]: Command R+ 20 req/min trial"},
				{ID: "command-r7b-12-2024", MaxContext: 128000, Limits: Limits{RPM: 20}, Canonical: "command-r7b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capCohere + "; context 128k: https://docs.cohere.com/docs/command-r7b [2026-12-04]", Source: "docs.cohere.com/docs/rate-limits [2026]: Command R7B 20 req/min trial"},
				// The compatibility API's /embeddings; 1536 dimensions by default.
				{ID: "embed-v4.0", Embedding: true, Dimensions: 1536, Canonical: "embed-v4.0", Source: "https://docs.cohere.com/docs/compatibility-api (embeddings) and https://docs.cohere.com/docs/cohere-embed [2026-12-04]"},
			},
		},
		{
			Name: "sambanova", Flavor: "sambanova", Dialect: DialectOpenAI,
			BaseURL: "https://api.sambanova.ai/v1", KeyEnv: "SAMBANOVA_API_KEY",
			// SambaCloud's Free Tier applies while no payment method is
			// linked: 20 RPM, 20 requests a day and 200K tokens a day, the
			// same for every free model (docs.sambanova.ai/docs/en/models/rate-limits,
			// as re-read by cuihuan/awesome-ai-gateway data/free_tiers.json
			// [2026-08-31]). No reset hour published: rolling. Errors follow
			// OpenAI's shape plus a request_id (docs.sambanova.ai api-error-codes
			// [2026]); its 429 body was not captured: the emulator's generic flavor.
			Reset:  "rolling",
			Source: "docs.sambanova.ai/docs/en/models/rate-limits [2026-08-31]: Free Tier 20 RPM / 20 RPD / 200K TPD per model",
			// Prefill: not documented; instruct.
			Models: []PresetModel{
				{ID: "DeepSeek-V3.1", Limits: Limits{RPM: 20, RPD: 20, TPD: 200000}, Canonical: "deepseek-v3.1", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capSambaNova, Source: srcSambaNova},
				{ID: "Meta-Llama-3.3-70B-Instruct", Limits: Limits{RPM: 20, RPD: 20, TPD: 200000}, Canonical: "llama-3.3-70b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capSambaNova, Source: srcSambaNova},
				{ID: "gpt-oss-120b", Limits: Limits{RPM: 20, RPD: 20, TPD: 200000}, Reasoning: true, Canonical: "gpt-oss-120b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capSambaNova, Source: srcSambaNova},
			},
		},
		{
			Name: "zai", Flavor: "zai", Dialect: DialectOpenAI,
			BaseURL: "https://api.z.ai/api/paas/v4", KeyEnv: "ZAI_API_KEY",
			// Z.ai (Zhipu GLM, international): the Flash models are priced
			// free for input, cached input and output
			// (docs.z.ai/guides/overview/pricing, as re-read by
			// cuihuan/awesome-ai-gateway [2026-08-31]). Their rate limits are
			// not published (shown per key after login, concurrency
			// "dynamically adjusted"): no limits set, 0 = unknown. A limit
			// hit is a 429 with a numeric code 1302 (see the zai flavor).
			Reset:  "rolling",
			Source: "docs.z.ai/guides/overview/pricing [2026-08-31]: GLM Flash models free; rate limits unpublished (unknown)",
			// Prefill: not documented; instruct.
			Models: []PresetModel{
				{ID: "glm-4.7-flash", Reasoning: true, Canonical: "glm-4.7-flash", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capZai, Source: srcZai},
				{ID: "glm-4.5-flash", Reasoning: true, Canonical: "glm-4.5-flash", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capZai, Source: srcZai},
			},
		},
		{
			Name: "ovhcloud", Flavor: "ovhcloud", Dialect: DialectOpenAI,
			BaseURL: "https://oai.endpoints.kepler.ai.cloud.ovh.net/v1", KeyEnv: "OVH_AI_ENDPOINTS_ACCESS_TOKEN", KeyOptional: true,
			// AI Endpoints answers without a key at 2 requests a minute per
			// IP and per model (with a key, which needs a Public Cloud
			// project and a payment method, 400 a minute): public client
			// catalogs that probed it keyless [2026-06, 2026-08] citing
			// OVHcloud's documented anonymous limit; no daily cap published.
			// Error bodies not captured: the emulator's generic flavor.
			Reset:  "rolling",
			Source: "ovhcloud.com/en/public-cloud/ai-endpoints [2026-06, via client catalogs that probed it keyless]; 2 RPM per model anonymous",
			// Prefill: not documented; instruct.
			Models: []PresetModel{
				{ID: "gpt-oss-120b", Limits: Limits{RPM: 2}, Reasoning: true, Canonical: "gpt-oss-120b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capOVH, Source: "ovhcloud.com ai-endpoints catalog gpt-oss-120b [2026]; 2 RPM anonymous"},
				{ID: "Meta-Llama-3_3-70B-Instruct", Limits: Limits{RPM: 2}, Canonical: "llama-3.3-70b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capOVH, Source: "probed keyless by a public client catalog [2026-06]; 2 RPM anonymous"},
			},
		},
		{
			Name: "huggingface", Flavor: "huggingface", Dialect: DialectOpenAI,
			BaseURL: "https://router.huggingface.co/v1", KeyEnv: "HF_TOKEN",
			// Inference Providers through the Hub's router, OpenAI-compatible;
			// free users get monthly credits, "subject to change, less than
			// $0.10" (huggingface/hub-docs pricing.md, PR #1636 [2025]; PR
			// #2240 [2026-02] adds pay-as-you-go after them). Credits are
			// money, not requests or tokens: not modelled; when spent the
			// router answers 402 "You have exceeded your monthly included
			// credits for Inference Providers. ..." (github.com/huggingface/agents-course/issues/386),
			// taken as the day spent. Model ids are Hub repos, any of them.
			Reset:    "midnight UTC",
			AnyModel: true,
			Source:   "huggingface.co/docs/inference-providers (hub-docs pricing.md) [2026-02]; monthly credits, no request limits published",
			// Prefill: not documented across its providers; instruct.
			Models: []PresetModel{
				{ID: "openai/gpt-oss-120b", Reasoning: true, Canonical: "gpt-oss-120b", Tools: CapYes, Vision: CapNo, Audio: CapNo, CapsSource: capHF, Source: "huggingface.co/docs/inference-providers gpt-oss guide [2026]"},
				{ID: "meta-llama/Llama-3.1-8B-Instruct", Canonical: "llama-3.1-8b", Tools: CapUnknown, Vision: CapNo, Audio: CapNo, CapsSource: capHF + "; Llama 3.1 8B depends on the provider behind the router", Source: srcUnverified},
			},
		},
		{
			Name: "ollama", Flavor: "ollama", Dialect: DialectOpenAI,
			BaseURL: "http://localhost:11434/v1",
			// Local: no key, no limits, whatever models were pulled; a CPU
			// may take long for a first token (tollfree's default).
			Reset:    "rolling",
			Timeout:  2 * time.Minute,
			AnyModel: true,
			Schema:   schemaEnforceWord,
			// A trailing assistant message is continued: "this can be done
			// today" with one (a maintainer, github.com/ollama/ollama/issues/6778);
			// /v1 translates to the same chat request.
			Prefix: true,
			Source: "github.com/ollama/ollama openai/openai.go, middleware/openai.go",
		},
	}
	applyChecks(list)
	m := make(map[string]Preset, len(list))
	for _, p := range list {
		m[p.Name] = p
	}
	return m
}

// presetNames lists the catalog's names, sorted.
func presetNames(cat map[string]Preset) []string {
	names := make([]string, 0, len(cat))
	for n := range cat {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
