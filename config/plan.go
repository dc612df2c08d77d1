package config

import (
	"encoding/json"
	"regexp"
	"time"

	"github.com/tollfree/tollfree/secret"
)

// RestTimes says how long each kind of failure rests a route: the
// durations of the decision table (docs/DECISIONS.md), which package rest applies
// (rest.Policy). Every duration's zero value means its default (see
// DefaultRestTimes), so the zero RestTimes works; to make a class rest
// briefly, give it a small duration.
type RestTimes struct {
	// Empty rests a route that answered 2xx with nothing usable. Default 30s.
	Empty time.Duration
	// MinuteMin and MinuteMax clamp a per-minute rate limit's retry-after;
	// MinuteMin is also the rest when the wait is unknown, and MinuteMax the
	// shortest provider-named wait a per-day limit trusts. Defaults 20s and
	// 5m.
	MinuteMin, MinuteMax time.Duration
	// DayUnknown rests a per-day limit when neither the provider nor the
	// route's reset says when the day ends. Default 1h.
	DayUnknown time.Duration
	// Auth rests every route of a provider whose key is refused. Default 1h.
	Auth time.Duration
	// Gone rests a route whose model is not there. Default 6h.
	Gone time.Duration
	// BadConfig rests a route whose own settings the model refuses.
	// Default 6h.
	BadConfig time.Duration
	// Overloaded rests a route after a 5xx, a refused or reset connection
	// or a cut stream; a longer retry-after, up to MinuteMax, wins.
	// Default 30s.
	Overloaded time.Duration
	// Timeout rests a route that did not answer in time. Default 30s.
	Timeout time.Duration
	// Growth multiplies the Overloaded, Timeout and Empty rests by
	// Growth^(consecutive-1). Default (and any value below 1): 1, no growth.
	Growth float64
	// GrowthMax caps a grown rest (never below the class's base rest).
	// Default 10m.
	GrowthMax time.Duration
}

// DefaultRestTimes returns the decision table's defaults: Empty 30s,
// MinuteMin 20s, MinuteMax 5m, DayUnknown 1h, Auth 1h, Gone 6h, BadConfig
// 6h, Overloaded 30s, Timeout 30s, Growth 1, GrowthMax 10m.
func DefaultRestTimes() RestTimes {
	return RestTimes{
		Empty:      30 * time.Second,
		MinuteMin:  20 * time.Second,
		MinuteMax:  5 * time.Minute,
		DayUnknown: time.Hour,
		Auth:       time.Hour,
		Gone:       6 * time.Hour,
		BadConfig:  6 * time.Hour,
		Overloaded: 30 * time.Second,
		Timeout:    30 * time.Second,
		Growth:     1,
		GrowthMax:  10 * time.Minute,
	}
}

// Plan is a compiled configuration: immutable runtime values, with every
// default applied and every reference resolved. Nothing in it changes after
// Compile returns; the router and the server read it without locks.
type Plan struct {
	// Listen is the HTTP listen address. Default 127.0.0.1:8080.
	Listen string
	// DataDir is where local state, the call log and the cache live.
	// Default ./.tollfree.
	DataDir string
	// Providers by name, and in config order.
	Providers     map[string]*Provider
	ProviderOrder []string
	// Routes by ID ("groq/llama-3.3-70b-versatile"), and in first-use order.
	Routes     map[string]*Route
	RouteOrder []string
	// Chains by name, and in config order. A client names a chain as its
	// request's model.
	Chains     map[string]*Chain
	ChainOrder []string
	// RouteChains holds, by route ID, the chain of one that serves a
	// request naming the route as its model (routechain.go; see Model).
	// A route of a chain that hides its routes has none.
	RouteChains map[string]*Chain
	// Server holds the HTTP server's limits.
	Server Server
	// Rest holds how long each kind of failure rests a route; package rest
	// applies it (rest.NewPolicy).
	Rest RestTimes
	// CallLog is the path of the JSONL call log; "" means DataDir/calls.jsonl,
	// "-" means standard output, "off" disables it.
	CallLog string
	// AdminToken protects the admin actions, and its bearer is the owner;
	// "" turns them off.
	AdminToken string
	// AdminTokenSource says where the admin token came from ("env
	// TOLLFREE_ADMIN_TOKEN"), for `check`.
	AdminTokenSource string
	// GatewayKeys, when not empty, are the bearer tokens a caller must send:
	// the values of Keys, in the same order.
	GatewayKeys []string
	// Keys are the gateway keys with their names, chains and limits.
	Keys []GatewayKey
	// ClientAddress says where a visitor's address comes from.
	ClientAddress ClientAddress
	// VisitorIDs are the signed visitor ids' settings; off when its Secret
	// is empty.
	VisitorIDs VisitorIDs
	// StatusPrivate puts /status, /status.json and /metrics behind a bearer
	// token: a gateway key or the admin token. Default: true when there are
	// gateway keys.
	StatusPrivate bool
	// Redis is the address (redis://...) of a shared state store; "" keeps
	// state local.
	Redis string
	// Callers limits what each caller may ask; zero fields: no limit.
	Callers Callers
	// Media says which hosts a request's media URLs may be fetched from
	// (for routes that take media only inline); by default none.
	Media Media
	// Secrets holds every secret value above (SecretValues), compiled for
	// scrubbing from logs, pages, errors and state (issue 10). Compile sets
	// it; nil on a Plan built by hand means "work it out from the fields".
	Secrets *secret.Set
}

// Callers limits each caller and the whole site. PerHour, PerDay,
// TokensDay, Concurrent and Burst limit each visitor, and each key that
// sets no limits of its own; SiteDay caps every caller together, Reserve of
// it kept for the owner. The owner (a key marked so, or the admin token)
// skips the per-caller limits and may use the reserve. Zero: no limit.
type Callers struct {
	PerHour int
	PerDay  int
	SiteDay int
	Reserve int
	// TokensDay, Concurrent and Burst: see CallerLimits.
	TokensDay  int
	Concurrent int
	Burst      Burst
}

// Each returns the limits of each caller.
func (c Callers) Each() CallerLimits {
	return CallerLimits{PerHour: c.PerHour, PerDay: c.PerDay, TokensDay: c.TokensDay, Concurrent: c.Concurrent, Burst: c.Burst}
}

// Server holds the HTTP server's limits. Zero values mean the defaults.
type Server struct {
	// MaxBodyBytes caps a request body. Default 4 MiB.
	MaxBodyBytes int64
	// ReadHeaderTimeout default 10s; ReadTimeout (whole body) default 30s;
	// IdleTimeout default 120s; ShutdownGrace default 30s.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration
	ShutdownGrace     time.Duration
	// WriteTimeout caps each write to a client; a client that stops reading
	// is dropped after it. Default 30s.
	WriteTimeout time.Duration
	// MaxConnections caps the client connections served at once. Default 256.
	MaxConnections int
	// MaxMessages caps the messages of one request. Default 2048.
	MaxMessages int
	// MaxContentBytes caps the text of one request's messages, all
	// together. Default 2 MiB.
	MaxContentBytes int64
	// MaxRequests caps the requests worked on at once; QueueLength more
	// wait up to QueueWait for a turn. Defaults 64, 64 and 2s.
	MaxRequests int
	QueueLength int
	QueueWait   time.Duration
	// StreamKeepAlive is how often a stream silent that long gets an SSE
	// keep-alive comment; zero sends none. The config's default is 10s.
	StreamKeepAlive time.Duration
}

// Dialect is the wire format a provider speaks.
type Dialect string

// The dialects.
const (
	DialectOpenAI Dialect = "openai"
	DialectGemini Dialect = "gemini"
)

// Provider is one account at one API.
type Provider struct {
	// Name is the config key ("groq").
	Name string
	// Preset is the catalog entry it started from, "" for none.
	Preset string
	// Flavor names the provider's quirks (groq, gemini, cerebras,
	// openrouter, nvidia, mistral, github, ollama, cloudflare, generic): which
	// error bodies and rate-limit headers to expect. It comes from the preset;
	// default generic.
	Flavor  string
	Dialect Dialect
	// BaseURL, without a trailing slash ("https://api.groq.com/openai/v1").
	BaseURL string
	// APIKey is the key, read from the environment or a file; never logged.
	APIKey string
	// KeySource says where the key came from ("env GROQ_API_KEY",
	// "file /run/secrets/groq"), for `check` and the status page.
	KeySource string
	// Headers are extra HTTP headers sent on every call.
	Headers map[string]string
	// Limits are account-wide: shared by all this provider's routes
	// (OpenRouter's 20 RPM over every :free model). Zero fields: no limit.
	Limits Limits
	// Reset is when this provider's daily counts start again.
	Reset Reset
	// Disabled is true when the provider cannot be called (no key); the
	// reason says why. Its routes are listed but skipped.
	Disabled       bool
	DisabledReason string
}

// Limits are the counts a route or a provider may spend. Zero means no limit.
type Limits struct {
	RPM int // requests per minute (sliding minute)
	RPD int // requests per day (per Reset)
	TPM int // tokens per minute (sliding minute)
	TPD int // tokens per day (per Reset)
	RPH int // requests per hour (sliding hour)
	TPH int // tokens per hour (sliding hour)
	// TPMo is tokens per calendar month, reset on the 1st at 00:00 in
	// Reset's zone (UTC for a rolling day). "mo", not "m": m is the minute.
	TPMo int
	// RPMo is requests per calendar month, reset like TPMo (Cohere's
	// trial keys: 1,000 calls a month).
	RPMo int
}

// ResetKind is how a daily window starts again.
type ResetKind int

// The reset kinds.
const (
	// ResetMidnight: counts start again at 00:00 in Reset.Location.
	ResetMidnight ResetKind = iota
	// ResetRolling: the day is the last 24 hours, refilling continuously.
	ResetRolling
)

// Reset is a daily reset rule.
type Reset struct {
	Kind ResetKind
	// Location is the zone of a midnight reset (America/Los_Angeles for
	// Gemini, UTC for OpenRouter). Never nil after Compile.
	Location *time.Location
}

// String names the reset as `check` shows it: "rolling", or "midnight"
// and the zone ("midnight America/Los_Angeles"; "midnight UTC" without one).
func (r Reset) String() string {
	if r.Kind == ResetRolling {
		return "rolling"
	}
	if r.Location == nil {
		return "midnight UTC"
	}
	return "midnight " + r.Location.String()
}

// Route is one model at one provider.
type Route struct {
	// ID is "provider/model", the name used everywhere: logs, status, the
	// response's model field.
	ID       string
	Provider *Provider
	// Model is the provider's id for the model.
	Model string
	// Canonical is the model's provider-independent name (gpt-oss-120b), used
	// by same-model chains. Default: Model without its publisher prefix and
	// :free suffix.
	Canonical string
	// Limits are this route's own; the provider's account-wide limits apply
	// on top.
	Limits Limits
	// Reset defaults to the provider's.
	Reset Reset
	// Timeout caps one attempt, and for a stream the wait for the first
	// token, in place of the chain's attempt and first-token timeouts.
	// Zero means the chain's.
	Timeout time.Duration
	// MaxContext is the model's context window in tokens; 0 means unknown.
	MaxContext int
	// MaxOutput caps max_tokens sent to this route; 0 means no cap.
	MaxOutput int
	// Extra are extra request body fields (a thinking level...).
	Extra map[string]json.RawMessage
	// Plentiful marks a route that may be hedged onto whatever its remaining
	// daily budget; Scarce marks one that never is (a 20-a-day model). By
	// default a route is hedged onto when its daily remainder is above the
	// chain's hedge threshold.
	Plentiful bool
	Scarce    bool
	// Reasoning marks a model that thinks before answering: a longer
	// first-token timeout applies.
	Reasoning bool
	// Continuation is how the route continues a stream another route broke
	// off (route.RoutedStream). The zero value is ContinueInstruct.
	Continuation Continuation
	// Schema says what the route can do for a typed answer: enforce a
	// JSON schema, JSON mode only, or neither (the zero value; see
	// SchemaSupport).
	Schema SchemaSupport
	// Caps says whether the model takes function tools, images and audio
	// (issue 33): a request that needs what a route does not take skips it.
	Caps Capabilities
	// Embedding marks an embedding model: it serves POST /v1/embeddings
	// only. Dimensions is its vector length when none is asked; 0 unknown.
	Embedding  bool
	Dimensions int
	// Disabled routes are listed but never called; DisabledReason says why.
	Disabled       bool
	DisabledReason string
}

// Continuation is how a route continues a partial answer: the methods of
// docs/DECISIONS.md's "by the best method it supports" (A stream that
// breaks).
type Continuation uint8

// The continuation methods.
const (
	// ContinueInstruct hands the partial answer back as an assistant
	// message followed by a user message asking to continue it exactly
	// where it stops. Any chat model can follow it.
	ContinueInstruct Continuation = iota
	// ContinuePrefix sends the partial answer as the start of the model's
	// own reply, which it continues: a true prefix continuation, for a
	// provider that honours one (Mistral's "prefix": true, an assistant
	// prefill, Gemini's final model turn). A route that refuses it is
	// learned as one that does not (route.RoutedStream), and is asked by
	// ContinueInstruct instead.
	ContinuePrefix
	// ContinueOff: the route never continues a stream.
	ContinueOff
)

// String returns the method's config name: instruct, prefix or off.
func (c Continuation) String() string {
	switch c {
	case ContinuePrefix:
		return "prefix"
	case ContinueOff:
		return "off"
	}
	return "instruct"
}

// FallbackKind is what answers when every route of a chain failed.
type FallbackKind int

// The fallback kinds.
const (
	// FallbackError answers with an error and Retry-After (the default).
	FallbackError FallbackKind = iota
	// FallbackMessage answers 200 with a fixed message.
	FallbackMessage
	// FallbackSearch answers with a keyword search over the content.
	FallbackSearch
)

// Fallback is a chain's last answer.
type Fallback struct {
	Kind FallbackKind
	// Message is the fixed answer; for FallbackSearch, the answer when the
	// search finds nothing ("" then falls to an error).
	Message string
	// Content is the folder or file searched by FallbackSearch.
	Content string
	// Implied marks the built-in defaults' message (Default), which no
	// file asked for: it answers while some route of the chain is enabled
	// (every route resting), never for a chain with none enabled, which
	// gets a NoRouteEnabledError naming the keys to set instead (issue 34:
	// an SDK shows a 200 "resting" as the model's answer).
	Implied bool
}

// Chain is an ordered list of routes serving one use case.
type Chain struct {
	Name   string
	Routes []*Route
	// AttemptTimeout caps one attempt of a route without its own timeout.
	// Default 20s.
	AttemptTimeout time.Duration
	// FirstTokenTimeout caps a stream's wait for its first token on a route
	// without its own timeout (three times it for a thinking route, never
	// more than the route's attempt timeout); a continuation's wait for its
	// first chunk too. Default 10s (at most AttemptTimeout); zero means the
	// attempt timeout.
	FirstTokenTimeout time.Duration
	// Deadline caps the whole request, every attempt and wait included,
	// and a stream to its last chunk. Default 60s.
	Deadline time.Duration
	// HedgeDelay starts the next eligible route when the running attempt has
	// not answered after it. Zero: no hedging.
	HedgeDelay time.Duration
	// MaxInFlight caps attempts racing at once. Default 2.
	MaxInFlight int
	// HedgeMinDaily is the daily remainder (requests) a route needs to be
	// hedged onto. Default 100.
	HedgeMinDaily int
	// Margin is the safety margin on budgets: a route is skipped when the
	// request would take it past (1-Margin) of a limit. Default 0.05.
	Margin float64
	// Pace holds a day-capped route back to its pace when the forecast
	// says the chain's day caps will run out before their resets, while
	// other routes have room (package pace). Default true; false (and a
	// Chain built in code) keeps the chain's order at every hour.
	Pace bool
	// LatencyAware prefers, among routes of the same Rank, the faster one.
	LatencyAware bool
	// Ranks gives each route's rank (same index as Routes); routes of equal
	// rank may be reordered by latency. Default: each its own rank.
	Ranks []int
	// SameModel refuses routes of different canonical models and lets the
	// chain wait for a limited route (up to WaitCap) instead of failing.
	SameModel bool
	WaitCap   time.Duration
	// Interactive chains never wait for a rest to end. Default true.
	Interactive bool
	// HideRoute hides which route answered: the response's model is the
	// chain's name, and no header or error message names a route, model or
	// provider of the chain.
	HideRoute bool
	// FailoverOnRefusal lets a refused request try the next route.
	FailoverOnRefusal bool
	// RetryBlips calls a route once more after a blip instead of failing
	// over at once (docs/DECISIONS.md's blip, issue 13): a bare 500 or 502 at
	// once, a per-minute 429 after the wait it asked for, when that wait is
	// at most BlipWait and ends before the deadline. Default true; false
	// (and a Chain built in code) fails over at once.
	RetryBlips bool
	// BlipWait is the longest wait a 429 may ask and still be retried on
	// the same route. Default 5s, or half the deadline when that is
	// shorter; zero retries only 500s and 502s.
	BlipWait time.Duration
	// KeepExchanges sends only the last N user/assistant exchanges (plus the
	// system prompt); 0 sends all.
	KeepExchanges int
	// TrimSystem lets the system prompt be cut to fit a smaller route.
	TrimSystem bool
	// RequireSchema skips, for a typed request, the routes that cannot
	// enforce what it asks: a JSON schema, or JSON mode.
	RequireSchema bool
	// SchemaRepairs is how many times a route whose answer broke the
	// request's schema is asked again before the next route; 0 none.
	// Default 1 from a config file.
	SchemaRepairs int
	// CacheTTL is how long answers are cached; 0 disables the cache.
	CacheTTL time.Duration
	// ContentVersion is mixed into cache keys, beside the live version of
	// the chain's search content; change it to retire every cached answer.
	ContentVersion string
	// Reasoning says what to do with reasoning text: "pass" (as
	// reasoning_content) or "drop". Default drop.
	Reasoning string
	// IdleTimeout is how long a stream may go silent after its first token
	// before it counts as broken. Default 30s.
	IdleTimeout time.Duration
	Fallback    Fallback
	// Callers limits each caller's requests to this chain, on top of its
	// own limits. Zero: none.
	Callers CallerLimits
	// Assistant, when set, makes the chain a site assistant (issue 14).
	Assistant *Assistant
	// Embeddings marks a chain of embedding routes: it serves POST
	// /v1/embeddings, and chat requests naming it are refused.
	Embeddings bool
	// PerRequestVectors: the chain's embedding routes may be different
	// models of one dimension (vectors: per_request); each request's
	// vectors come from one route. False: every route is one model.
	PerRequestVectors bool
}

// Assistant is a chain's site assistant: what it answers from and how
// (package assistant builds the requests from it).
type Assistant struct {
	// Content is the folder or file of pages answered from.
	Content string
	// BaseURL turns page paths into links; "" none.
	BaseURL string
	// Contact is the contact page's link (a path joined to BaseURL); ""
	// none.
	Contact string
	// Origins are the browser origins allowed to call /v1/ask.
	Origins []string
	// Prompt is the system prompt; "" means the default.
	Prompt string
	// History is how many exchanges go with a question. Default 2.
	History int
	// Rules answer without a model, first match wins.
	Rules []AssistantRule
	// Resting is the sentence above a search answer, by language
	// (lower-case primary tag: en, fr...), defaults merged in.
	Resting map[string]string
}

// AssistantRule is an answer given without a model: to a question equal
// (normalized) to one of Match, or matching Pattern.
type AssistantRule struct {
	Match   []string // as written; compared normalized (assistant.Normalize)
	Pattern *regexp.Regexp
	Answer  string
}
