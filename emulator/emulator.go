// Package emulator owns the free LLM providers as tollfree's tests, demo and
// day simulator see them: one HTTP server that speaks each provider's real
// wire format (docs/PROVIDERS.md), byte for byte — bodies, headers, status codes
// and streaming quirks — so nothing in tollfree ever needs the internet to
// be exercised.
//
// Each route (provider and model) can be scripted call by call (Script),
// given a standing behaviour (SetDefault), or a seeded random mix of
// behaviours (SetMix) for chaos runs. Independently of the gateway, the
// emulator enforces the free-tier limits it was given in its own windows and
// answers the flavor's real 429 when a call would pass one, so a test can
// show that a gateway causes no 429 at all. It charges what providers
// charge: a failed call (a 5xx, a hang the client gave up on) counts one
// request, and where the provider counts its refusals too
// (Provider.CountRefusals) a 429 counts one against the day. A model may refuse a prefill in
// its flavor's words, and answers a request to continue a partial answer
// exactly, with an overlap, or started over (continue.go), for a gateway
// that continues broken streams. A model may write its answer from the
// messages it was sent (Model.Reply), as the demo's assistant does. Every call is recorded (Records) without
// its text, with the response format it asked; a model answers or refuses
// a response format as its flavor does (format.go). Waits (latency, chunk
// delays, hangs) run on the injected clock and end when the request's
// context ends.
package emulator

import (
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

// The flavors: which provider's quirks a Provider speaks.
const (
	FlavorGroq       = "groq"
	FlavorGemini     = "gemini"
	FlavorCerebras   = "cerebras"
	FlavorOpenRouter = "openrouter"
	FlavorNVIDIA     = "nvidia"
	FlavorMistral    = "mistral"
	FlavorGitHub     = "github"
	FlavorOllama     = "ollama"
	// FlavorPollinations answers with or without a key (its anonymous
	// tier) and reports spent pollen, or a model above the tier, as 402.
	FlavorPollinations = "pollinations"
	// FlavorHuggingFace is Hugging Face's router: spent monthly credits
	// are a 402.
	FlavorHuggingFace = "huggingface"
	// FlavorCohere is Cohere's compatibility API: a trial key's month of
	// calls spent is a 429 that says so.
	FlavorCohere = "cohere"
	// FlavorZai is Z.ai's (Zhipu GLM) OpenAI-compatible API: a rate limit
	// and its concurrency throttle are both a 429 with code "1302".
	FlavorZai     = "zai"
	FlavorGeneric = "generic"
)

// Options configure an Emulator.
type Options struct {
	// Clock drives latencies, windows and hangs. Default clock.Real{}.
	Clock clock.Clock
}

// Provider is one emulated account.
type Provider struct {
	// Name is the first path segment of the provider's base URL.
	Name string
	// Flavor is one of the Flavor constants; "" means generic. It picks the
	// dialect (gemini is Google's native API, every other flavor the
	// OpenAI-compatible one), the error bodies and the rate-limit headers.
	Flavor string
	// Key is the API key calls must carry; "" accepts any (or none).
	Key string
	// EchoKey makes the auth error quote the key the call carried, as some
	// providers and proxies do; the default EchoNone keeps the flavor's
	// real body, which names no key. See Echo.
	EchoKey Echo
	// Limits are account-wide, shared by all the provider's models
	// (OpenRouter's 20 RPM / 50 RPD over every :free model).
	Limits Limits
	// Reset is when the account's day starts again; zero means the flavor's.
	Reset Reset
	// CountRefusals makes every 429 of the emulator's own limits count as
	// one request against the model's and the account's day (RPD), as a
	// failed call counts against the day's quota on the providers of seed
	// 000's field report (Gemini, Groq, NVIDIA: "a failed call still
	// counted against the day's quota"). It costs no tokens and stays out
	// of the minute windows. Other failures (a 5xx, a hang the client gave
	// up on, an empty answer) always count one request in every window,
	// with no tokens; FreeTier sets it for seed 000's providers.
	CountRefusals bool
}

// Model is one emulated model of a provider.
type Model struct {
	// ID is the model's id as callers send it.
	ID string
	// Limits are the model's own; the provider's apply on top.
	Limits Limits
	// Reset is when the model's day starts again; zero means the flavor's.
	Reset Reset
	// Latency is the wait before an answer or a stream's first token.
	Latency time.Duration
	// ChunkDelay is the wait between streamed chunks.
	ChunkDelay time.Duration
	// Answer is the text the model answers; default a fixed sentence naming
	// the route.
	Answer string
	// Reply, when set and Answer is not, writes the answer from the call's
	// messages (Turns, the system's first), so that a model can answer
	// from what it was given: the demo's assistant quotes the content in
	// its prompt (issue 14). A step's Text still wins. It runs under the
	// emulator's lock: it must not call the Emulator.
	Reply func(turns []Turn) string
	// Gone makes every call answer the flavor's 404 (Groq: 400
	// model_decommissioned) whatever is scripted.
	Gone bool
	// Unsupported are request fields the model refuses, as the dialect
	// spells them: top-level body fields ("logit_bias", "reasoning_format")
	// for OpenAI flavors; top-level or generationConfig fields
	// ("thinkingConfig", snake_case accepted) for gemini. A call carrying
	// one gets the flavor's 400 naming it (see unsupportedFailure), before
	// any script or limit, and does not count against the limits.
	Unsupported []string
	// NoJSONSchema makes the model refuse a JSON schema response format
	// (OpenAI's response_format json_schema) in its flavor's words, as
	// Groq's llama-3.3-70b-versatile does; JSON mode is still taken. See
	// format.go.
	NoJSONSchema bool
	// NoJSONMode makes the model refuse every JSON response format (JSON
	// mode too; Gemini: responseMimeType application/json), as Gemma does
	// on Gemini's API.
	NoJSONMode bool
	// RefusePrefill makes the model refuse a conversation that ends with
	// an assistant message (a Gemini model turn), a prefix continuation,
	// with its flavor's 400 (prefillFailure), before any script or limit,
	// and without counting against the limits. A Mistral model refuses one
	// without "prefix": true whatever this says, as Mistral does; Groq and
	// Cerebras refuse any message carrying a "prefix" field, as they refuse
	// every message field they do not know.
	RefusePrefill bool
	// Continue is how the model answers a continuation, a prefill or an
	// instruct continuation (continue.go): exactly (the default), with an
	// overlap, or started over.
	Continue Continuation
	// Follows makes the model answer what a request asks as a capable
	// model would (follow.go, issue 33): a call of one of its function
	// tools (the one tool_choice names, else the first) with arguments
	// made from the tool's parameters, then, once given the tool's result,
	// a sentence quoting it; an instance of a JSON schema; a sentence
	// naming the image or audio it was shown. A step's Text or ToolCalls
	// still wins. Default off: the model answers its Answer.
	Follows bool
	// NoTools, NoVision and NoAudio make the model refuse a request with
	// function tools, an image or audio, in its flavor's words (media.go),
	// before any script or limit.
	NoTools, NoVision, NoAudio bool
	// Embedding makes the model an embedding model (embed.go): it answers
	// /embeddings (OpenAI flavors and Gemini's OpenAI-compatible endpoint)
	// and embedContent / batchEmbedContents (Gemini), with deterministic
	// unit vectors of Dimensions numbers (default 768), and refuses chat.
	Embedding  bool
	Dimensions int
	// Unlisted leaves the model out of the provider's model list (GET
	// /models, Gemini's models.list) while it still answers: a model the
	// provider is retiring (issue 35). With Gone too, calls fail as well.
	// See models.go.
	Unlisted bool
	// Price is what OpenRouter's list says the model costs, in dollars per
	// token; zero is free.
	Price Price
	// ContextLength is the context OpenRouter's list gives; 0 leaves it out.
	ContextLength int
}

// Turn is one message of a call as the model reads it: Role is "system",
// "user" or "assistant" (a Gemini systemInstruction is "system", a model
// turn "assistant"), Text its text parts joined.
type Turn struct {
	Role, Text string
}

// Record is one call received, without any of its text.
type Record struct {
	Time     time.Time
	Provider string
	// Model is "" when the request named none or did not parse.
	Model string
	// Status is the HTTP status sent, 0 while the call is still running or
	// when it never got one (a hang).
	Status int
	// Behaviour is the Kind that answered, or what stopped the call before
	// its behaviour ran ("auth", "invalid", "unknown_model", "limit_..."):
	// see Emulator.Records.
	Behaviour string
	Stream    bool
	// Format is the response format the call asked for: FormatJSONObject
	// (OpenAI's JSON mode; Gemini's responseMimeType application/json),
	// FormatJSONSchema (a schema: OpenAI's json_schema; Gemini's
	// responseJsonSchema or responseSchema), or "" for none.
	Format           string
	PromptTokens     int
	CompletionTokens int
}

// Emulator is an http.Handler that plays the free providers. It is safe for
// concurrent use; configure it with AddProvider and AddModel before or while
// serving.
type Emulator struct {
	clock clock.Clock
	la    *time.Location

	mu        sync.Mutex // guards everything below
	providers map[string]*provider
	records   []Record
	seq       int
	onBody    func(provider, model string, body []byte)
}

type provider struct {
	cfg    Provider
	reset  Reset // resolved
	models map[string]*model
	win    window
}

type model struct {
	cfg    Model
	reset  Reset // resolved
	script []Step
	def    Step
	mix    *mixer // SetMix; drawn from when no step is queued
	calls  int
	win    window
}

// New returns an Emulator with no providers.
func New(opts Options) *Emulator {
	c := opts.Clock
	if c == nil {
		c = clock.Real{}
	}
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		la = time.FixedZone("PST", -8*3600) // unreachable: time/tzdata is linked in
	}
	return &Emulator{clock: c, la: la, providers: map[string]*provider{}}
}

// AddProvider adds p, or replaces the settings of a provider of that name
// (keeping its models).
func (e *Emulator) AddProvider(p Provider) {
	if p.Flavor == "" {
		p.Flavor = FlavorGeneric
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.providers[p.Name]
	np := &provider{cfg: p, reset: p.Reset.resolve(p.Flavor, e.la), models: map[string]*model{}}
	if old != nil {
		np.models, np.win = old.models, old.win
		for _, m := range np.models {
			m.reset = m.cfg.Reset.resolve(p.Flavor, e.la)
		}
	}
	e.providers[p.Name] = np
}

// AddModel adds m to the named provider, or replaces its settings (keeping
// its script, default, counts and usage). It panics if the provider was not
// added: that is a mistake in the calling code.
func (e *Emulator) AddModel(providerName string, m Model) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.mustProvider(providerName)
	if old := p.models[m.ID]; old != nil {
		old.cfg = m
		old.reset = m.Reset.resolve(p.cfg.Flavor, e.la)
		return
	}
	p.models[m.ID] = &model{cfg: m, reset: m.Reset.resolve(p.cfg.Flavor, e.la), def: Step{Kind: Answer}}
}

func (e *Emulator) mustProvider(name string) *provider {
	p := e.providers[name]
	if p == nil {
		panic("emulator: unknown provider " + name)
	}
	return p
}

// OnBody sets a function that gets the body of every chat call as it was
// received, before it is answered: for tests that check what a gateway
// sent (a schema put in the prompt, JSON mode asked). It is called on the
// call's goroutine, never under the emulator's lock; nil removes it.
func (e *Emulator) OnBody(f func(provider, model string, body []byte)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onBody = f
}

// sawBody hands a chat call's body to the OnBody function, if any.
func (e *Emulator) sawBody(provider, model string, body []byte) {
	e.mu.Lock()
	f := e.onBody
	e.mu.Unlock()
	if f != nil {
		f(provider, model, body)
	}
}

// modelOf returns the settings of a provider's model.
func (e *Emulator) modelOf(providerName, modelID string) (Model, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.providers[providerName]; p != nil {
		if m := p.models[modelID]; m != nil {
			return m.cfg, true
		}
	}
	return Model{}, false
}

// refusedField returns the first (sorted) of fields that the model refuses
// (Model.Unsupported), compared in camelCase so that either spelling works.
func (e *Emulator) refusedField(providerName, modelID string, fields []string) (string, bool) {
	e.mu.Lock()
	var refused []string
	if p := e.providers[providerName]; p != nil {
		if m := p.models[modelID]; m != nil {
			refused = m.cfg.Unsupported
		}
	}
	e.mu.Unlock()
	sort.Strings(fields)
	for _, f := range fields {
		for _, r := range refused {
			if camel(f) == camel(r) {
				return f, true
			}
		}
	}
	return "", false
}

func (e *Emulator) mustModel(providerName, id string) *model {
	m := e.mustProvider(providerName).models[id]
	if m == nil {
		panic("emulator: unknown model " + providerName + "/" + id)
	}
	return m
}

// Script queues steps for a route; each call that reaches the model takes
// the next one before the route's default applies. A call answered by the
// emulator's own limits (a 429) does not take a step. It panics for a route
// that was not added.
func (e *Emulator) Script(providerName, modelID string, steps ...Step) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.mustModel(providerName, modelID)
	m.script = append(m.script, steps...)
}

// SetDefault sets the behaviour of a route when no step is queued (at
// first, Answer). It panics for a route that was not added.
func (e *Emulator) SetDefault(providerName, modelID string, s Step) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mustModel(providerName, modelID).def = s
}

// Calls returns how many calls the route received, failed ones included:
// those refused for a bad key or an invalid body, and those answered by the
// emulator's limits, count too.
func (e *Emulator) Calls(providerName, modelID string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.providers[providerName]; p != nil {
		if m := p.models[modelID]; m != nil {
			return m.calls
		}
	}
	return 0
}

// Records returns a copy of every call's record, in arrival order. Calls
// stopped before the route's behaviour ran carry Behaviour "auth" (bad key),
// "invalid" (the request did not parse or validate), "unsupported" (it
// carried a field of Model.Unsupported, or a message field the flavor does
// not take), "prefill_refused" (it ended with an assistant message the
// model refuses: Model.RefusePrefill) or "unknown_model";
// calls answered by the emulator's limits carry "limit_" plus the Kind they
// got (limit_rate_minute, limit_rate_day, limit_too_large).
func (e *Emulator) Records() []Record {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Record(nil), e.records...)
}

// Reset clears every route's script, call count and usage, and the records.
// Providers, models and defaults stay.
func (e *Emulator) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.records = nil
	for _, p := range e.providers {
		p.win = window{}
		for _, m := range p.models {
			m.script, m.calls, m.win = nil, 0, window{}
		}
	}
}

// BaseURL returns where an OpenAI-flavored provider lives on an emulator
// served at serverURL: serverURL/name/v1. The emulator also serves a gemini
// provider under that base, but its real base ends /v1beta: see
// Emulator.BaseURL.
func BaseURL(serverURL, providerName string) string {
	return strings.TrimSuffix(serverURL, "/") + "/" + providerName + "/v1"
}

// BaseURL returns the base URL of the named provider, as its real API
// spells it: serverURL/name/v1 for OpenAI flavors, serverURL/name/v1beta for
// gemini.
func (e *Emulator) BaseURL(serverURL, providerName string) string {
	e.mu.Lock()
	p := e.providers[providerName]
	e.mu.Unlock()
	base := BaseURL(serverURL, providerName)
	if p != nil && p.cfg.Flavor == FlavorGemini {
		base += "beta"
	}
	return base
}

// Models returns the ids of the provider's models, sorted.
func (e *Emulator) Models(providerName string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.providers[providerName]
	if p == nil {
		return nil
	}
	ids := make([]string, 0, len(p.models))
	for id := range p.models {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// ServeHTTP serves /{provider}/v1/... (OpenAI flavors: POST
// /chat/completions, GET /models) and /{provider}/v1beta/... (gemini: POST
// /models/{model}:generateContent and :streamGenerateContent, GET /models).
// Either version prefix is accepted for every flavor.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	e.mu.Lock()
	p := e.providers[name]
	var cfg Provider
	if p != nil {
		cfg = p.cfg
	}
	e.mu.Unlock()
	if p == nil {
		http.NotFound(w, r)
		return
	}
	rest = "/" + rest
	for _, v := range []string{"/v1beta/", "/v1/"} {
		if strings.HasPrefix(rest, v) {
			rest = rest[len(v)-1:]
			break
		}
	}
	if cfg.Flavor == FlavorGemini {
		e.serveGemini(w, r, cfg, rest)
		return
	}
	e.serveOpenAI(w, r, cfg, rest)
}
