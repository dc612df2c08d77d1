package config

// defaultYAML is the configuration Default compiles: every preset still
// offered free, and an "answer" chain over their good free models: the
// fast and dependable first (Gemini Flash-Lite, Groq's gpt-oss, NVIDIA,
// Mistral), then the better but scarcer Gemini Flash models, then the
// bulk reserve (Gemma, the smaller gpt-oss, Cloudflare). Models and
// presets retired or turned paid (issue 35: GitHub Models, Cerebras, Groq's
// Llamas, Gemini 2.5 Flash; see catalog.go) are left out. OpenRouter's
// :free catalog changes too often to name a model here; Ollama is local
// and not assumed to run.
const defaultYAML = `
admin_token: ${TOLLFREE_ADMIN_TOKEN:-}
gateway_keys: [${TOLLFREE_KEY:-}]
redis: ${REDIS_URL}
providers:
  gemini: {}
  groq: {}
  nvidia: {}
  mistral: {}
  openrouter: {}
  cloudflare: {}
chains:
  answer:
    routes:
      - gemini/gemini-3.1-flash-lite
      - groq/openai/gpt-oss-120b
      - nvidia/meta/llama-3.3-70b-instruct
      - mistral/mistral-small-latest
      - gemini/gemini-3.5-flash-lite
      - gemini/gemini-3.6-flash
      - groq/openai/gpt-oss-20b
      - gemini/gemma-3-27b-it
      - cloudflare/@cf/zai-org/glm-4.7-flash
    attempt_timeout: 15s
    deadline: 45s
    hedge_delay: 3s
    fallback: {message: "The assistant is resting. Please try again in a minute."}
`

// DefaultName is the name Default's problems carry.
const DefaultName = "built-in defaults"

// Default builds a plan with no config file: every preset provider, keyed
// from env where its key variable is set (GROQ_API_KEY, GEMINI_API_KEY...)
// and listed as disabled where it is not; an "answer" chain over their good
// free models with a fixed fallback message (Implied: with no key set at
// all, a request gets a NoRouteEnabledError naming the keys instead); and the role chains of
// PLANNER_MODEL, EXTRACTOR_MODEL and JUDGE_MODEL when set. It also reads
// TOLLFREE_ADMIN_TOKEN, TOLLFREE_KEY and REDIS_URL, each optional: without
// TOLLFREE_KEY the gateway asks callers for no key (it listens on loopback
// by default). It fails when a role variable is malformed, or when
// TOLLFREE_ADMIN_TOKEN or TOLLFREE_KEY is set but too short (MinKeyLength).
func Default(env func(string) string) (*Plan, error) {
	p, err := Parse(DefaultName, []byte(defaultYAML), env)
	if err != nil {
		return nil, err
	}
	// No file asked for the answer chain's message: it is for a chain
	// whose routes rest, not for one whose keys are all unset.
	if c := p.Chains["answer"]; c != nil && c.Fallback.Kind == FallbackMessage {
		c.Fallback.Implied = true
	}
	return p, nil
}
