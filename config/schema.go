package config

// File is the configuration file's schema: plain structs decoded from YAML,
// before defaults. Each field's doc gives its unit, its default and what zero
// means. Every string value may use ${ENV} and ${ENV:-default}.
type File struct {
	// Listen is the HTTP listen address, host:port. Default 127.0.0.1:8080.
	Listen string `yaml:"listen"`
	// DataDir holds local state, the call log and the cache. Default ./.tollfree.
	DataDir string `yaml:"data_dir"`
	// Redis is a redis:// (or rediss://, unix://) address of shared state;
	// empty keeps state local.
	Redis string `yaml:"redis"`
	// CallLog is the call log's path: "" for DataDir/calls.jsonl, "-" for
	// standard output, "off" for none.
	CallLog string `yaml:"call_log"`
	// AdminToken protects the admin actions and makes its bearer the owner
	// (see Callers). Written as ${NAME}, it must be set, at least 20 bytes
	// (see MinKeyLength); ${NAME:-} lets it be unset, which turns the admin
	// actions off, as does leaving the field out.
	AdminToken Secret `yaml:"admin_token"`
	// GatewayKeys are the bearer keys callers must send: a key reference
	// (${TEAM_KEY}) or a mapping naming the key, the chains it may use and
	// its limits (GatewayKeyConfig). No keys means no key is asked for: the
	// gateway is open to visitors, each counted by address (see
	// TrustedProxies) or signed visitor id (VisitorIDs).
	GatewayKeys []GatewayKeyConfig `yaml:"gateway_keys"`
	// TrustedProxies are the addresses (CIDRs, or single addresses) of the
	// reverse proxies in front of the gateway. Only a connection from one
	// of them has its ForwardedHeader read for the visitor's address; from
	// anyone else that header is ignored. Default none: the connection's
	// address is the visitor's.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// ForwardedHeader is the header the trusted proxies write the client's
	// address to: X-Forwarded-For (the default) or Forwarded (RFC 7239).
	// Only one is read, because a proxy passes the other on as the client
	// wrote it.
	ForwardedHeader string `yaml:"forwarded_header"`
	// VisitorIDs turns on visitor ids signed by the gateway; default off.
	VisitorIDs *VisitorIDsConfig `yaml:"visitor_ids"`
	// Status says who may read /status, /status.json and /metrics:
	// "private" needs a gateway key or the admin token as a bearer token,
	// "public" is open to anyone. Default private when gateway keys are set
	// (the gateway is not open), public when they are not.
	Status string `yaml:"status"`
	// Server holds the HTTP server's limits.
	Server ServerConfig `yaml:"server"`
	// Rest says how long each kind of failure rests a route.
	Rest RestConfig `yaml:"rest"`
	// Providers by name. A provider named after a preset (groq, gemini...)
	// uses that preset unless it names another, even when it sets base_url
	// or dialect: the fields it sets override the preset's, the rest
	// (models, limits, dialect, reset) are kept.
	Providers map[string]*ProviderConfig `yaml:"providers"`
	// Chains by name; a client names a chain as its request's model.
	Chains map[string]*ChainConfig `yaml:"chains"`
	// Roles are environment variables that each define a chain
	// (PLANNER_MODEL defines "planner"). Default PLANNER_MODEL,
	// EXTRACTOR_MODEL, JUDGE_MODEL; an empty list turns roles off. A variable
	// that is unset defines nothing.
	Roles []string `yaml:"roles"`
	// Callers limits what each caller may ask (seed 000: 15 questions an
	// hour and 40 a day per visitor, 3,000 a day for the whole site).
	Callers CallersConfig `yaml:"callers"`
	// Media says which hosts an image or audio URL of a request may be
	// fetched from, for a route that takes media only inline (Gemini's
	// native API). Default: none; such a request skips those routes.
	Media MediaConfig `yaml:"media"`
}

// MediaConfig lets the gateway fetch media a request gives by URL (issue
// 33). Nothing is fetched unless fetch_hosts names the host.
type MediaConfig struct {
	// FetchHosts are the hosts whose https URLs may be fetched: exact
	// names ("images.example.com"), or ".example.com" for every subdomain.
	// Default none.
	FetchHosts []string `yaml:"fetch_hosts"`
	// MaxBytes caps one fetched file ("5MiB"). Default 5MiB.
	MaxBytes Size `yaml:"max_bytes"`
	// Timeout caps one fetch. Default 5s.
	Timeout *Duration `yaml:"timeout"`
}

// CallersConfig limits each caller and the whole site. The per-caller
// fields apply to every visitor, and to every key that sets no limits of
// its own. Zero means no limit.
type CallersConfig struct {
	PerHour int `yaml:"per_hour"` // questions per caller per sliding hour
	PerDay  int `yaml:"per_day"`  // questions per caller per rolling day
	// TokensDay caps a caller's tokens (prompt and answer) per rolling day.
	TokensDay int `yaml:"tokens_day"`
	// Concurrent caps a caller's requests in flight at once.
	Concurrent int `yaml:"concurrent"`
	// Burst mutes a caller that asks too fast (seed 004).
	Burst   *BurstConfig `yaml:"burst"`
	SiteDay int          `yaml:"site_day"` // questions for all callers per rolling day
	Reserve int          `yaml:"reserve"`  // of site_day, kept for the owner (seed 004)
}

// ServerConfig holds the HTTP server's limits.
type ServerConfig struct {
	// MaxBody caps a request body ("4MiB", "512KiB", or bytes). Default 4MiB.
	MaxBody Size `yaml:"max_body"`
	// ReadHeaderTimeout default 10s.
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	// ReadTimeout caps reading a whole request. Default 30s.
	ReadTimeout Duration `yaml:"read_timeout"`
	// IdleTimeout caps an idle keep-alive connection. Default 120s.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// ShutdownGrace is how long in-flight requests get at shutdown; then
	// a stream still running ends with an error event, a request not yet
	// answered gets a 503. Default 30s.
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// WriteTimeout caps each write to a client (one chunk of a stream, a
	// whole answer): a client that stops reading is dropped after it and
	// its upstream call cancelled. Default 30s.
	WriteTimeout Duration `yaml:"write_timeout"`
	// MaxConnections caps the client connections `tollfree serve` holds at
	// once, idle keep-alive ones included; a connection over it is answered
	// 503 (GET /healthz is still answered). Default 256.
	MaxConnections int `yaml:"max_connections"`
	// MaxMessages caps the messages of one request. Default 2048, OpenAI's
	// own cap.
	MaxMessages int `yaml:"max_messages"`
	// MaxContent caps the text of one request's messages, all together
	// ("2MiB", "512KiB", or bytes). Default 2MiB.
	MaxContent Size `yaml:"max_content"`
	// MaxRequests caps the requests the gateway works on at once, every
	// caller and chain together, so that a burst does not pile onto the
	// providers. Default 64.
	MaxRequests int `yaml:"max_requests"`
	// QueueLength is how many requests past MaxRequests wait for a turn;
	// one more is refused at once (503). Default 64.
	QueueLength int `yaml:"queue_length"`
	// QueueWait is the longest a request waits in that queue before it is
	// refused (503). Default 2s.
	QueueWait Duration `yaml:"queue_wait"`
	// StreamKeepAlive is how often a stream that has sent nothing for that
	// long (waiting for its first token, or for a continuation) gets an SSE
	// comment, so that proxies and clients do not cut it as idle. The
	// first one commits the status (200): what follows, an error too, comes
	// as events. Default 10s; 0s sends none.
	StreamKeepAlive *Duration `yaml:"stream_keepalive"`
}

// RestConfig says how long each kind of failure rests a route (the
// decision table, docs/DECISIONS.md). Zero fields take the defaults.
type RestConfig struct {
	// Empty: a 2xx with no answer. Default 30s.
	Empty Duration `yaml:"empty"`
	// MinuteMin and MinuteMax clamp the retry-after of a per-minute limit.
	// Defaults 20s and 5m.
	MinuteMin Duration `yaml:"minute_min"`
	MinuteMax Duration `yaml:"minute_max"`
	// DayUnknown rests a per-day limit whose reset is unknown. Default 1h.
	DayUnknown Duration `yaml:"day_unknown"`
	// Auth rests every route of a provider that refused its key. Default 1h.
	Auth Duration `yaml:"auth"`
	// Gone rests a route whose model is not found. Default 6h.
	Gone Duration `yaml:"gone"`
	// BadConfig rests a route whose own settings are refused. Default 6h.
	BadConfig Duration `yaml:"bad_config"`
	// Overloaded rests a route after a 5xx or a refused connection. Default 30s.
	Overloaded Duration `yaml:"overloaded"`
	// Timeout rests a route that did not answer in time. Default 30s.
	Timeout Duration `yaml:"timeout"`
	// Growth multiplies the overloaded and timeout rests for each failure in
	// a row; 1 (the default) keeps them flat. At least 1.
	Growth *float64 `yaml:"growth"`
	// GrowthMax caps a grown rest. Default 10m.
	GrowthMax Duration `yaml:"growth_max"`
}

// ProviderConfig is one account at one API. Fields left out come from the
// preset.
type ProviderConfig struct {
	// Preset names a catalog entry (groq, gemini, cerebras, openrouter,
	// nvidia, mistral, github, ollama, cloudflare). Default: the provider's
	// name when it is a preset's name, whatever else the provider sets.
	Preset string `yaml:"preset"`
	// Dialect is openai or gemini. Default the preset's, else openai.
	Dialect string `yaml:"dialect"`
	// BaseURL is the API's base ("https://api.groq.com/openai/v1"). Default
	// the preset's; required without one.
	BaseURL string `yaml:"base_url"`
	// APIKey must be a reference, ${GROQ_API_KEY}: a key written in the file
	// is refused. Default: the preset's variable.
	APIKey Secret `yaml:"api_key"`
	// APIKeyFile is a file holding the key (a container secret).
	APIKeyFile string `yaml:"api_key_file"`
	// Headers are extra HTTP headers sent on every call.
	Headers map[string]string `yaml:"headers"`
	// Limits are account-wide, shared by all the provider's models.
	Limits LimitsConfig `yaml:"limits"`
	// Reset is when daily counts start again: "midnight <zone>" ("midnight
	// America/Los_Angeles", "midnight UTC") or "rolling". Default the
	// preset's, else midnight UTC.
	Reset string `yaml:"reset"`
	// Timeout is the default attempt timeout of this provider's models; zero
	// leaves it to each chain.
	Timeout *Duration `yaml:"timeout"`
	// Models by the provider's model id. A preset's models are defaults;
	// every field may be overridden, and new models added.
	Models map[string]*ModelConfig `yaml:"models"`
}

// LimitsConfig are counts that may be spent. Unset fields keep the preset's;
// 0 means no limit.
type LimitsConfig struct {
	RPM *int `yaml:"rpm"` // requests per minute
	RPD *int `yaml:"rpd"` // requests per day
	TPM *int `yaml:"tpm"` // tokens per minute
	TPD *int `yaml:"tpd"` // tokens per day
	RPH *int `yaml:"rph"` // requests per hour
	TPH *int `yaml:"tph"` // tokens per hour
	// TPMo is tokens per calendar month ("tpmo": "m" already means the
	// minute in rpm and tpm).
	TPMo *int `yaml:"tpmo"`
	RPMo *int `yaml:"rpmo"` // requests per calendar month
}

// ModelConfig is one model at one provider. Unset fields keep the preset's.
type ModelConfig struct {
	// RPM, RPD, TPM, TPD, RPH, TPH, TPMo, RPMo are the model's own limits
	// (requests or tokens per minute, day, hour or calendar month); 0 means
	// none. The provider's limits apply on top.
	RPM  *int `yaml:"rpm"`
	RPD  *int `yaml:"rpd"`
	TPM  *int `yaml:"tpm"`
	TPD  *int `yaml:"tpd"`
	RPH  *int `yaml:"rph"`
	TPH  *int `yaml:"tph"`
	TPMo *int `yaml:"tpmo"`
	RPMo *int `yaml:"rpmo"`
	// Reset defaults to the provider's.
	Reset string `yaml:"reset"`
	// Timeout caps one attempt, and a stream's wait for its first token,
	// in place of the chain's attempt_timeout and first_token_timeout;
	// zero leaves both to the chain.
	Timeout *Duration `yaml:"timeout"`
	// MaxContext is the context window in tokens; 0 unknown.
	MaxContext *int `yaml:"max_context"`
	// MaxOutput caps max_tokens; 0 no cap.
	MaxOutput *int `yaml:"max_output"`
	// Extra are request body fields sent on every call (a thinking level);
	// any YAML that has a JSON form.
	Extra map[string]JSON `yaml:"extra"`
	// Plentiful, Scarce: see Route. Default: scarce when the daily request
	// limit (the model's or the provider's) is 50 or less.
	Plentiful *bool `yaml:"plentiful"`
	Scarce    *bool `yaml:"scarce"`
	// Reasoning marks a thinking model.
	Reasoning *bool `yaml:"reasoning"`
	// Continuation is how this route continues a stream that another route
	// broke off after text had reached the caller (issue 13): auto (the
	// default: prefix where the preset says the provider honours one, else
	// instruct), prefix (the partial answer sent as the start of the
	// model's own reply, which it continues; a route that refuses it is
	// learned and asked by instruct instead), instruct (the partial answer
	// handed back with a request to continue it: any chat model), or off
	// (this route never continues a stream).
	Continuation string `yaml:"continuation"`
	// CanContinue is refused: continuation replaced it, and is on by
	// default (see Continuation).
	CanContinue *bool `yaml:"can_continue"`
	// Schema says what the model can do for a typed answer (response_format
	// json_schema or json_object): "enforce" a JSON schema (structured
	// outputs), "json" mode only, or "none". Default the preset's (from the
	// provider's docs), else none. See SchemaSupport.
	Schema string `yaml:"schema"`
	// Canonical is the provider-independent name. Default: the id without
	// its publisher prefix and :free suffix.
	Canonical string `yaml:"canonical"`
	// Tools, Vision and Audio say whether the model takes function tools,
	// images and audio in a request (issue 33). Default the preset's (from
	// the provider's docs); unset for a model no preset knows: it is tried,
	// and a refusal is learned. A request that needs what a route does not
	// take skips that route.
	Tools  *bool `yaml:"tools"`
	Vision *bool `yaml:"vision"`
	Audio  *bool `yaml:"audio"`
	// Embedding marks an embedding model, served by POST /v1/embeddings and
	// never by chat. Default the preset's, else false.
	Embedding *bool `yaml:"embedding"`
	// Dimensions is an embedding model's vector length when no dimensions
	// is asked. Default the preset's; 0 unknown.
	Dimensions *int `yaml:"dimensions"`
}

// ChainConfig is an ordered list of routes serving one use case. Each field
// matches the Chain field of the same name; unset fields take the defaults
// below.
type ChainConfig struct {
	// Routes are "provider/model" strings or {route: provider/model, rank: n}.
	Routes []RouteRef `yaml:"routes"`
	// AttemptTimeout caps one attempt of a route without its own timeout.
	// Default 20s.
	AttemptTimeout *Duration `yaml:"attempt_timeout"`
	// FirstTokenTimeout caps a stream's wait for its first token (a
	// reasoning delta counts) on a route without its own timeout; three
	// times that for a thinking route; at most attempt_timeout. A slower
	// route fails over as a timeout. Default 10s, or attempt_timeout when
	// that is shorter.
	FirstTokenTimeout *Duration `yaml:"first_token_timeout"`
	// Deadline caps the whole request, a whole stream included (a stream
	// still running at it ends with an error event). Default 60s; for a
	// chain that is not interactive, at least wait_cap + attempt_timeout.
	Deadline *Duration `yaml:"deadline"`
	// HedgeDelay starts the next route when the running one is silent that
	// long; shorter than attempt_timeout. Default 0: no hedging.
	HedgeDelay *Duration `yaml:"hedge_delay"`
	// MaxInFlight caps attempts racing at once. Default 2.
	MaxInFlight *int `yaml:"max_in_flight"`
	// HedgeMinDaily is the daily remainder (requests) a route needs to be
	// hedged onto. Default 100.
	HedgeMinDaily *int `yaml:"hedge_min_daily"`
	// Margin is the budget safety margin, in [0, 0.5). Default 0.05.
	Margin *float64 `yaml:"margin"`
	// Pace spreads the chain's day-capped routes over their day when the
	// forecast says their caps will run out (docs/PACING.md): "on" (the
	// default) or "off", which keeps the chain's order at every hour.
	Pace *string `yaml:"pace"`
	// LatencyAware prefers the faster of routes of equal rank.
	LatencyAware bool `yaml:"latency_aware"`
	// SameModel refuses routes whose canonical models differ.
	SameModel bool `yaml:"same_model"`
	// WaitCap is the longest wait for a limited route; only for chains that
	// are not interactive. Default 2m for those, 0 otherwise.
	WaitCap *Duration `yaml:"wait_cap"`
	// Interactive chains never wait for a rest to end. Default true.
	Interactive *bool `yaml:"interactive"`
	// HideRoute answers with the chain's name as the model and names no
	// route, model or provider in any header or error message.
	HideRoute bool `yaml:"hide_route"`
	// FailoverOnRefusal lets a refused request try the next route.
	FailoverOnRefusal bool `yaml:"failover_on_refusal"`
	// RetryBlips calls a route once more, before failing over, after a
	// blip: a bare 500/502, or a per-minute 429 asking a wait of at most
	// blip_wait that ends before the deadline. Default true.
	RetryBlips *bool `yaml:"retry_blips"`
	// BlipWait is the longest wait a 429 may ask and still be retried on
	// the same route; at most half the deadline. Default 5s (half the
	// deadline when that is shorter); 0 retries only 500/502s.
	BlipWait *Duration `yaml:"blip_wait"`
	// KeepExchanges sends only the last N exchanges; 0 sends all.
	KeepExchanges int `yaml:"keep_exchanges"`
	// TrimSystem lets the system prompt be cut to fit a smaller route.
	TrimSystem bool `yaml:"trim_system"`
	// RequireSchema skips, for a request with response_format json_schema,
	// every route that cannot enforce that schema (a model's schema: json or
	// none, or a schema keyword its dialect cannot take), and for one with
	// json_object, every route without JSON mode (schema: none); the skip
	// says why. Default false: such routes are asked in the prompt, and
	// every answer is validated.
	RequireSchema bool `yaml:"require_schema"`
	// SchemaRepairs is how many times a route whose answer broke the
	// request's schema is asked again, shown the violations, before the
	// next route is tried. Default 1; 0 goes straight to the next route; at
	// most 5.
	SchemaRepairs *int `yaml:"schema_repairs"`
	// CacheTTL is how long answers are cached. Default 0: no cache.
	CacheTTL *Duration `yaml:"cache_ttl"`
	// ContentVersion is mixed into cache keys, beside the live version of
	// the chain's search content (which already retires the cached answers
	// when the content changes): change it to retire them by hand. Default "".
	ContentVersion string `yaml:"content_version"`
	// Reasoning is pass or drop. Default drop.
	Reasoning string `yaml:"reasoning"`
	// IdleTimeout is how long a stream may go silent after its first token.
	// Default 30s.
	IdleTimeout *Duration `yaml:"idle_timeout"`
	// Fallback answers when every route failed. Default {error: true}.
	Fallback *FallbackConfig `yaml:"fallback"`
	// Callers limits each caller's requests to this chain, on top of the
	// caller's own limits. Default none.
	Callers *CallerLimitsConfig `yaml:"callers"`
	// Vectors, on a chain of embedding models, says which routes it may
	// list: same_model (the default: every route is one model, whose vectors
	// compare across requests) or per_request (routes of different models
	// with the same dimensions; each request's vectors come from one route
	// and compare only among themselves, and the answer's model names it).
	Vectors string `yaml:"vectors"`
	// Assistant makes the chain a site assistant answering from a folder of
	// content (issue 14): POST /v1/ask, and assistant mode on chat
	// completions. Default none. An assistant chain's cache_ttl defaults
	// to 168h.
	Assistant *AssistantConfig `yaml:"assistant"`
}

// AssistantConfig is a chain's site assistant (issue 14).
type AssistantConfig struct {
	// Content is the folder (or file) of .md, .html and .txt pages the
	// assistant answers from. Required.
	Content string `yaml:"content"`
	// BaseURL turns page paths into links (https://example.com/). Default
	// "": no links.
	BaseURL string `yaml:"base_url"`
	// Contact is where an answer the content lacks points: a path (joined
	// to base_url) or a URL. Default "": none named.
	Contact string `yaml:"contact"`
	// Origins may call /v1/ask from a browser (CORS). Default: base_url's
	// origin; none without base_url.
	Origins []string `yaml:"origins"`
	// Prompt replaces the default system prompt. Default "": the built-in
	// one (package assistant).
	Prompt string `yaml:"prompt"`
	// History is how many exchanges of the history go with a question.
	// Default 2; 0 sends none.
	History *int `yaml:"history"`
	// Rules answer without a model, in order; the first match wins.
	Rules []AssistantRuleConfig `yaml:"rules"`
	// Resting is the sentence above a search answer, by language (en, fr,
	// de, es have defaults).
	Resting map[string]string `yaml:"resting"`
}

// AssistantRuleConfig answers a question without a model: match lists
// whole questions (compared normalized: case, punctuation and spaces
// folded), pattern is a Go regexp; exactly one of them, and an answer.
type AssistantRuleConfig struct {
	Match   []string `yaml:"match"`
	Pattern string   `yaml:"pattern"`
	Answer  string   `yaml:"answer"`
}

// FallbackConfig is what answers when every route failed: exactly one of
// message, error: true, or search. Default error.
type FallbackConfig struct {
	// Message answers 200 with this fixed text.
	Message string `yaml:"message"`
	// Error answers with an error and Retry-After.
	Error bool `yaml:"error"`
	// Search answers with a keyword search over this folder or file,
	// watched for changes (package content). A folder that cannot be read
	// degrades the search to nothing; it does not stop the gateway.
	Search string `yaml:"search"`
}
