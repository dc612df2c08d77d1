package failure

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Verdict is what one failure means: its class, what it rests, and what the
// provider said. The zero Verdict is OK.
type Verdict struct {
	Class Class
	Scope Scope
	// RetryAfter is the provider's wait, from, in order: the retry-after
	// header (seconds or HTTP date), Gemini's RetryInfo.retryDelay, a "try
	// again in 24.7s" / "Please retry in 36.43s" / "Please wait 5631
	// seconds" sentence, then the x-ratelimit-reset-* headers (Groq Go
	// durations, Cerebras float seconds, OpenRouter epoch ms, also in the
	// body's metadata.headers). 0 means unknown.
	RetryAfter time.Duration
	// ResetAt is an absolute reset time when one is known (OpenRouter's
	// epoch-ms X-RateLimit-Reset, a retry-after HTTP date), else zero.
	ResetAt time.Time
	// Code is the provider's error code ("rate_limit_exceeded",
	// "RESOURCE_EXHAUSTED"), redacted, or "".
	Code string
	// Message is the provider's reason, safe to show to the caller: keys,
	// bearer tokens, org_/user_ ids and emails removed, at most 300 bytes.
	// For OpenRouter's "Provider returned error" it is metadata.raw.
	Message string
	// Param is the request field an Unsupported verdict names, as the
	// provider wrote it ("logit_bias", "reasoningEffort",
	// "body.frequency_penalty", "generation_config.thinking_config.x"); a
	// refused thinking setting of Gemini's is "thinkingConfig". "" when the
	// provider names none. The router compares it with what the caller sent
	// and what the route itself sends (see Unsupported in doc.go).
	Param string
}

// LogText returns a short (at most 160 bytes) text for the call log: Code
// and Message, redacted again, with every quoted or backticked span longer
// than 40 characters elided, since a provider may echo part of the prompt.
func (v Verdict) LogText() string {
	s := v.Message
	switch {
	case v.Code != "" && s != "":
		s = v.Code + ": " + s
	case v.Code != "":
		s = v.Code
	case s == "":
		s = v.Class.String()
	}
	return clip(elideQuoted(Redact(s)), maxLog)
}

// Classify sorts err into a Verdict; now turns absolute reset times into
// waits. The rules, in order, are the table in doc.go.
func Classify(err error, now time.Time) Verdict {
	if err == nil {
		return Verdict{}
	}
	// A caller that went away (or a hedge that lost) is never a provider
	// failure, whatever else the error says.
	if errors.Is(err, context.Canceled) {
		return Verdict{Class: Cancelled, Scope: ScopeRequest, Message: "request cancelled"}
	}
	var ue *UpstreamError
	errors.As(err, &ue)
	if ue != nil && ue.Status != 0 && (ue.Status < 200 || ue.Status > 299) {
		return classifyHTTP(ue, parseBody(ue.Body), ue.Status, now)
	}
	if ue != nil && ue.Status != 0 && ue.Err == nil {
		// An error delivered inside a 200: OpenRouter's mid-stream error
		// event. Its code, when it is an HTTP status, decides; otherwise it
		// is the upstream failing (code "server_error").
		d := parseBody(ue.Body)
		status := d.httpCode
		if status < 400 {
			status = http.StatusBadGateway
		}
		return classifyHTTP(ue, d, status, now)
	}
	return classifyErr(err, ue)
}

// classifyErr sorts what is not an HTTP error status: the sentinels,
// timeouts and transport failures.
func classifyErr(err error, ue *UpstreamError) Verdict {
	var netErr net.Error
	switch {
	case errors.Is(err, ErrRefused):
		msg := ErrRefused.Error()
		if ue != nil {
			d := parseBody(ue.Body)
			if r := d.blockReason; r != "" {
				msg = "prompt blocked: " + r
			} else if r := d.finishReason; r != "" {
				msg = "answer stopped: " + r
			}
		}
		return Verdict{Class: Refused, Scope: ScopeRequest, Message: clip(Redact(msg), maxMessage)}
	case errors.Is(err, ErrCannotCarry):
		// A request the route cannot take as it is, like one it has no
		// room for: skipped here, nothing rests (issue 33).
		msg := ErrCannotCarry.Error()
		if ue != nil && ue.Err != nil {
			msg = ue.Err.Error()
		}
		return Verdict{Class: TooLarge, Scope: ScopeRequest, Message: clip(Redact(msg), maxMessage)}
	case errors.Is(err, ErrEmptyAnswer):
		return Verdict{Class: Empty, Scope: ScopeRoute, Message: ErrEmptyAnswer.Error()}
	case errors.Is(err, ErrMalformed):
		return Verdict{Class: Empty, Scope: ScopeRoute, Message: ErrMalformed.Error()}
	case errors.Is(err, ErrStreamCut):
		return Verdict{Class: Overloaded, Scope: ScopeRoute, Message: ErrStreamCut.Error()}
	case errors.Is(err, ErrStreamStalled):
		return Verdict{Class: Timeout, Scope: ScopeRoute, Message: ErrStreamStalled.Error()}
	case errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return Verdict{Class: Timeout, Scope: ScopeRoute, Message: "upstream timed out"}
	case errors.Is(err, syscall.ECONNREFUSED):
		return Verdict{Class: Overloaded, Scope: ScopeRoute, Message: "connection refused"}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return Verdict{Class: Overloaded, Scope: ScopeRoute, Message: "connection reset"}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return Verdict{Class: Overloaded, Scope: ScopeRoute, Message: "connection closed before the response"}
	}
	// Any other transport failure (DNS, TLS, an adapter's own error): the
	// route could not answer; a short rest is the safe choice.
	return Verdict{Class: Overloaded, Scope: ScopeRoute, Message: "upstream unreachable"}
}

// classifyHTTP sorts an HTTP error status with its parsed body.
func classifyHTTP(ue *UpstreamError, d detail, status int, now time.Time) Verdict {
	var v Verdict
	v.RetryAfter, v.ResetAt = retryAfter(ue.Header, &d, now)
	v.Code = d.code
	if v.Code == "" {
		v.Code = d.status
	}
	v.Code = clip(Redact(v.Code), 64)
	msg := d.reason()
	if strings.TrimSpace(msg) == "" {
		msg = http.StatusText(status)
	}
	v.Message = clip(Redact(msg), maxMessage)
	v.Class, v.Scope = decide(ue, &d, status, v.RetryAfter)
	if v.Class == Unsupported {
		v.Param = clip(Redact(namedParam(&d, msg)), 128)
	}
	return v
}

// lazyRegexp compiles expr on first use. The message rules and wait
// sentences only run on a failed call, and compiling all of them when the
// package was initialised cost every process 15 ms and 300 KB of heap at
// start, most of it kept (issue 18 item 7); TestRulesCompile compiles
// each, so a typo still fails the tests rather than a late call.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Message rules. Each is matched against the lower-cased haystack of the
// body's text fields; each names the provider wording it is for (verbatim
// bodies in docs/PROVIDERS.md and testdata/). They run only after the status
// code has picked the family, so a "403" inside "retry in 18.403s" never
// decides anything (LiteLLM issue 34954).
var (
	// refusal: OpenAI/Azure content_filter, content_policy_violation;
	// OpenRouter 403 moderation ("flagged").
	refusalRe = lazyRegexp(`content_filter|content_policy|moderation|flagged`)
	// goneRe: Groq model_decommissioned / model_not_found (as 400),
	// Cloudflare 5007 "No such model", NVIDIA "Not found for account".
	goneRe = lazyRegexp(`model_decommissioned|model_not_found|has been decommissioned|no such model|not found for account`)
	// authRe: Gemini answers a bad key with 400 ("API key not valid",
	// API_KEY_INVALID, "API Key not found") and an unsupported region with
	// 400 FAILED_PRECONDITION; both hold for every model of the account.
	authRe = lazyRegexp(`api key not valid|api_key_invalid|api key not found|user location is not supported`)
	// tooLargeRe: OpenAI context_length_exceeded ("reduce the length"),
	// Gemini "input token count (N) exceeds the maximum", GitHub
	// tokens_limit_reached, Groq/Cloudflare "request too large".
	tooLargeRe = lazyRegexp(`context_length_exceeded|reduce the length|input token count.*exceeds the maximum|maximum context length|tokens_limit_reached|request (?:body )?(?:is )?too large|prompt is too long`)
	// thinkingRe: Gemini refusing a thinking setting ("Thinking level ...",
	// "thinking budget", "Budget 0 is invalid", "only set only one of
	// thinking budget and thinking level"): unsupported, Param
	// "thinkingConfig". It is the route's (config extra) or the caller's
	// (reasoning_effort, which the adapter turns into a thinkingConfig).
	thinkingRe = lazyRegexp(`thinking level|thinking budget|thinking_config|budget 0 is invalid`)
	// unfitRe: the route cannot serve this request's features (tools, JSON
	// mode, images): OpenRouter 404 "No endpoints found that support tool
	// use"; Groq's 400 "This model does not support response format
	// `json_schema`." (issue 15; quoted in public projects, e.g.
	// github.com/ItzCrazyKns/Vane/issues/980). Another route may, so it is
	// TooLarge (skip for this request), never a rest the caller could
	// inflict on everyone.
	unfitRe = lazyRegexp("no endpoints found that support|does not support (?:response format|json|tools?|tool use|function calling|images?|vision|audio)|(?:tools?|tool_choice|function calling|response_format|json mode|json_schema|images?|vision|audio)\\b[^.]{0,40}(?:not supported|unsupported|is not available)")
	// unsupportedRe: a request field this route does not take, in each
	// provider's words: OpenAI "Unsupported parameter: 'temperature' is not
	// supported with this model." (code unsupported_parameter; GitHub
	// Models the same sentence); Groq "property 'store' is unsupported, did
	// you mean 'stop'?" and "`reasoning_effort` is not supported with this
	// model"; Cerebras "property '...' is unsupported" (wrong_api_format);
	// Gemini (both endpoints) "Unknown name \"store\": Cannot find field."
	// and Gemma's "Developer instruction is not enabled for
	// models/gemma-3-27b-it"; NVIDIA "... is not supported for this model";
	// Mistral's 422 "Extra inputs are not permitted" (extra_forbidden); xAI
	// "does not support parameter reasoningEffort"; "Argument not
	// supported: logit_bias". A field the provider does not know at all
	// (issue 32): OpenAI "Unknown parameter: 'reasoning'." (code
	// unknown_parameter; GitHub's Copilot endpoint the same sentence) and
	// its older "Unrecognized request argument supplied: top_k"; Cohere
	// "unknown field: parameter 'strict' is not a valid field"; NVIDIA NIM
	// and vLLM servers Pydantic's "Extra inputs are not permitted". Sources
	// are cited in testdata/README.md.
	unsupportedRe = lazyRegexp(`unsupported parameter|unsupported_parameter|unknown parameter|unknown_parameter|unrecognized request argument|unknown field: parameter|is unsupported|is not supported (?:with|for|by) (?:this|the) model|unknown name .*cannot find field|is not enabled for models/|extra inputs are not permitted|extra_forbidden|does not support parameter|argument not supported`)
	// reasoningRe: Groq refusing a reasoning_format or reasoning_effort
	// value ("reasoning_format=raw is not supported with JSON mode or tool
	// calling", "`reasoning_effort` must be one of `none` or `default`"):
	// another route may take it.
	reasoningRe = lazyRegexp(`reasoning_format|reasoning_effort`)
	// day and minute windows named in 429 bodies: Groq "(RPD)"/"(TPD)",
	// Gemini quotaId "PerDay", metric "per_day", Cerebras "per day" and
	// "-day" header-style names, GitHub "UserByModelByDay" / "per 86400s",
	// Gemini "limit: 0" (no free quota at all), and "daily".
	dayRe    = lazyRegexp(`per[ _-]?day|\(rpd\)|\(tpd\)|86400s|byday|\blimit: 0\b|daily|-day\b`)
	minuteRe = lazyRegexp(`per[ _-]?min|\(rpm\)|\(tpm\)|per 60s|byminute|limit_rpm/`)
)

// decide picks the class and scope of an HTTP failure.
func decide(ue *UpstreamError, d *detail, status int, wait time.Duration) (Class, Scope) {
	hay := d.haystack()
	switch {
	case status == http.StatusTooManyRequests:
		return rate(ue, d, hay, wait)
	case status == http.StatusPaymentRequired:
		// Pollinations "tier not high enough" is one model out of reach,
		// not the account out of credit.
		if strings.Contains(hay, "tier not high enough") {
			return Gone, ScopeRoute
		}
		return RateDay, ScopeProvider
	case status == http.StatusUnauthorized:
		return Auth, ScopeProvider
	case status == http.StatusForbidden:
		if refusalRe().MatchString(hay) {
			return Refused, ScopeRequest
		}
		// Cloudflare 5016 "User has not agreed to Llama3.2 model terms":
		// one model's licence, not the account's key.
		if strings.Contains(hay, "has not agreed to") {
			return BadConfig, ScopeRoute
		}
		return Auth, ScopeProvider
	case status == http.StatusNotFound || status == http.StatusGone:
		if unfitRe().MatchString(hay) {
			return TooLarge, ScopeRequest
		}
		return Gone, ScopeRoute
	case status == http.StatusRequestEntityTooLarge:
		return TooLarge, ScopeRequest
	case status == http.StatusRequestTimeout:
		return Overloaded, ScopeRoute
	case status == http.StatusGatewayTimeout:
		return Timeout, ScopeRoute
	case status >= 500:
		return Overloaded, ScopeRoute
	case status >= 400:
		return clientError(hay)
	}
	// 1xx or an unfollowed 3xx: the base URL is wrong.
	return BadConfig, ScopeRoute
}

// clientError sorts a 400, 422 or other 4xx: who caused it.
func clientError(hay string) (Class, Scope) {
	switch {
	case refusalRe().MatchString(hay):
		return Refused, ScopeRequest
	case goneRe().MatchString(hay):
		return Gone, ScopeRoute
	case authRe().MatchString(hay):
		return Auth, ScopeProvider
	case tooLargeRe().MatchString(hay):
		return TooLarge, ScopeRequest
	case thinkingRe().MatchString(hay):
		return Unsupported, ScopeRequest
	case unfitRe().MatchString(hay):
		return TooLarge, ScopeRequest
	case unsupportedRe().MatchString(hay), reasoningRe().MatchString(hay):
		// Whose parameter it is decides between "unsupported here" (the
		// caller's: skip the route for this request) and bad_config (the
		// route's own: rest it); only the router knows, so the verdict
		// names the parameter and stays with the request until then.
		return Unsupported, ScopeRequest
	}
	return BadRequest, ScopeRequest
}

// Parameter names in refusals, in the provider's own spelling. Each
// captures the name; they are tried in order on the original message.
var paramRes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		// OpenAI, GitHub Models: Unsupported parameter: 'max_tokens' is ...
		regexp.MustCompile("(?i)unsupported parameter:?\\s*['\"`]([^'\"`\\s]+)"),
		// Groq, Cerebras: property 'store' is unsupported (a did-you-mean
		// that follows names another field, not this one).
		regexp.MustCompile(`(?i)property\s+'([^'\s]+)'\s+is\s+unsupported`),
		// Google: Unknown name "thinking_level" at 'generation_config.thinking_config'
		regexp.MustCompile(`(?i)unknown name\s+"([^"\s]+)"(?:\s+at\s+'([^'\s]+)')?`),
		// Mistral (see validationText): Extra inputs are not permitted: body.n
		regexp.MustCompile(`(?i)extra inputs are not permitted:\s*([\w.\[\]-]+)`),
		// xAI and OCI: does not support parameter reasoningEffort; Argument not supported: logit_bias
		regexp.MustCompile("(?i)(?:does not support parameter|argument not supported:)\\s*['\"`]?([\\w.\\[\\]-]+)"),
		// OpenAI: Unknown parameter: 'reasoning'. / Unrecognized request argument supplied: top_k
		regexp.MustCompile("(?i)(?:unknown parameter:?|unrecognized request arguments? supplied:)\\s*['\"`]?([\\w.\\[\\]-]+)"),
		// Cohere: unknown field: parameter 'strict' is not a valid field
		regexp.MustCompile("(?i)unknown field:\\s*parameter\\s+['\"`]?([\\w.\\[\\]-]+)"),
		// NVIDIA NIM: body -> frequency_penalty\n  Extra inputs are not permitted (type=extra_forbidden)
		regexp.MustCompile(`(?i)->\s*([\w\[\]-]+)\s+extra inputs are not permitted`),
		// vLLM: [{'type': 'extra_forbidden', 'loc': ('body', 'max_completion_tokens'), 'msg': 'Extra inputs are not permitted', ...}]
		regexp.MustCompile(`(?i)'loc':\s*\((?:'[^']*',\s*)*'([^']+)'\),\s*'msg':\s*'extra inputs are not permitted'`),
	}
})

// notSupportedName finds "X is not supported ..." / "X is unsupported":
// Groq "`logprobs` is not supported with this model", NVIDIA
// "chat_template_kwargs.enable_thinking is not supported for this model".
var notSupportedName = lazyRegexp("(?i)(?:^|[\\s:(])['\"`]?([A-Za-z_][\\w.\\[\\]-]*)['\"`]?\\s+(?:is|are)\\s+(?:not supported|unsupported)")

// namedParam is the parameter an Unsupported refusal names (see
// Verdict.Param), or "".
func namedParam(d *detail, msg string) string {
	return strings.TrimRight(findParam(d, msg), ".")
}

func findParam(d *detail, msg string) string {
	for _, re := range paramRes() {
		if m := re.FindStringSubmatch(msg); m != nil {
			if len(m) > 2 && m[2] != "" {
				return m[2] + "." + m[1]
			}
			return m[1]
		}
	}
	lower := strings.ToLower(msg)
	switch {
	case thinkingRe().MatchString(lower):
		return "thinkingConfig"
	case strings.Contains(lower, "developer instruction is not enabled"):
		// Gemma takes no system instruction: the caller's system message.
		return "systemInstruction"
	}
	if m := reasoningRe().FindString(lower); m != "" {
		return m
	}
	if m := notSupportedName().FindStringSubmatch(msg); m != nil {
		switch strings.ToLower(m[1]) {
		case "parameter", "field", "argument", "value", "feature", "request", "model", "this", "it":
			// "This parameter is not supported ...": no name given.
		default:
			return m[1]
		}
	}
	// OpenAI-style bodies name it in "param" too; Cerebras puts other
	// words there ("validation_error"), so only a param the message
	// mentions is trusted.
	if d.param != "" && strings.Contains(lower, strings.ToLower(d.param)) {
		return d.param
	}
	return ""
}

// longWait is the retry-after above which a 429 that names no window is
// taken as a daily limit (docs/DECISIONS.md: no window named, a wait over
// 5 min is per day).
const longWait = 5 * time.Minute

// rate tells a per-day 429 from a per-minute one, and what it rests.
// Signals that name a day win over those naming a minute: one Gemini 429
// can list both quotas, and then the day is what is spent.
func rate(ue *UpstreamError, d *detail, hay string, wait time.Duration) (Class, Scope) {
	switch {
	// OpenRouter's free caps are account-wide, over every :free model.
	case strings.Contains(hay, "free-models-per-day") || d.limitSource == "openrouter_free_tier_daily":
		return RateDay, ScopeProvider
	case strings.Contains(hay, "free-models-per-min"):
		return RateMinute, ScopeProvider
	// Cloudflare's 10,000 neurons a day are account-wide.
	case strings.Contains(hay, "daily free allocation"):
		return RateDay, ScopeProvider
	// Cohere's trial keys: 1,000 calls a month over every model; resting
	// the account as a spent day, the quota book's rpmo holds it until
	// the month turns.
	case strings.Contains(hay, "api calls / month"):
		return RateDay, ScopeProvider
	// OpenRouter per-model caps and shared upstream pools: this route only.
	case strings.Contains(hay, "limit_rpm/") || strings.Contains(hay, "upstream_provider_shared_pool") ||
		strings.Contains(hay, "openrouter_shared_capacity"):
		return RateMinute, ScopeRoute
	case dayRe().MatchString(hay), daySpent(ue):
		return RateDay, ScopeRoute
	case minuteRe().MatchString(hay):
		return RateMinute, ScopeRoute
	case wait > longWait:
		return RateDay, ScopeRoute
	}
	// Mistral, NVIDIA and bare Gemini 429s name no window.
	return RateMinute, ScopeRoute
}

// daySpent reports whether the headers say the daily budget is spent:
// Groq's x-ratelimit-remaining-requests always counts requests per day;
// Cerebras names its day headers.
func daySpent(ue *UpstreamError) bool {
	h := ue.Header
	if h == nil {
		return false
	}
	if ue.Flavor == "groq" && headerValue(h, "x-ratelimit-remaining-requests") == "0" {
		return true
	}
	return headerValue(h, "x-ratelimit-remaining-requests-day") == "0" ||
		headerValue(h, "x-ratelimit-remaining-tokens-day") == "0"
}
