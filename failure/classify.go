package failure

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
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
	return v
}

// Message rules. Each is matched against the lower-cased haystack of the
// body's text fields; each names the provider wording it is for (verbatim
// bodies in PROVIDERS.md §2 and testdata/). They run only after the status
// code has picked the family, so a "403" inside "retry in 18.403s" never
// decides anything (LiteLLM issue 34954).
var (
	// refusal: OpenAI/Azure content_filter, content_policy_violation;
	// OpenRouter 403 moderation ("flagged").
	refusalRe = regexp.MustCompile(`content_filter|content_policy|moderation|flagged`)
	// goneRe: Groq model_decommissioned / model_not_found (as 400),
	// Cloudflare 5007 "No such model", NVIDIA "Not found for account".
	goneRe = regexp.MustCompile(`model_decommissioned|model_not_found|has been decommissioned|no such model|not found for account`)
	// authRe: Gemini answers a bad key with 400 ("API key not valid",
	// API_KEY_INVALID, "API Key not found") and an unsupported region with
	// 400 FAILED_PRECONDITION; both hold for every model of the account.
	authRe = regexp.MustCompile(`api key not valid|api_key_invalid|api key not found|user location is not supported`)
	// tooLargeRe: OpenAI context_length_exceeded ("reduce the length"),
	// Gemini "input token count (N) exceeds the maximum", GitHub
	// tokens_limit_reached, Groq/Cloudflare "request too large".
	tooLargeRe = regexp.MustCompile(`context_length_exceeded|reduce the length|input token count.*exceeds the maximum|maximum context length|tokens_limit_reached|request (?:body )?(?:is )?too large|prompt is too long`)
	// configRe: the route's own settings. Gemini thinking errors ("Thinking
	// level ...", "thinking budget", "Budget 0 is invalid", "only set only
	// one of thinking budget and thinking level"); Gemini OpenAI-compat
	// strict fields ("Unknown name \"store\": Cannot find field"); Groq
	// reasoning_format / reasoning_effort refusals.
	configRe = regexp.MustCompile(`thinking level|thinking budget|thinking_config|budget 0 is invalid|unknown name .*cannot find field|reasoning_format|reasoning_effort`)
	// unfitRe: the route cannot serve this request's features (tools, JSON
	// mode, images): OpenRouter 404 "No endpoints found that support tool
	// use". Another route may, so it is TooLarge (skip for this request),
	// never a rest the caller could inflict on everyone.
	unfitRe = regexp.MustCompile(`no endpoints found that support|(?:tools?|tool_choice|function calling|response_format|json mode|json_schema|images?|vision|audio)\b[^.]{0,40}(?:not supported|unsupported|is not available)`)
	// notSupportedRe: any other "X is not supported for this model": a
	// parameter the route sends (config.Route.Extra) that the model refuses.
	notSupportedRe = regexp.MustCompile(`is not supported for this model|unsupported parameter`)
	// day and minute windows named in 429 bodies: Groq "(RPD)"/"(TPD)",
	// Gemini quotaId "PerDay", metric "per_day", Cerebras "per day" and
	// "-day" header-style names, GitHub "UserByModelByDay" / "per 86400s",
	// Gemini "limit: 0" (no free quota at all), and "daily".
	dayRe    = regexp.MustCompile(`per[ _-]?day|\(rpd\)|\(tpd\)|86400s|byday|\blimit: 0\b|daily|-day\b`)
	minuteRe = regexp.MustCompile(`per[ _-]?min|\(rpm\)|\(tpm\)|per 60s|byminute|limit_rpm/`)
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
		if refusalRe.MatchString(hay) {
			return Refused, ScopeRequest
		}
		// Cloudflare 5016 "User has not agreed to Llama3.2 model terms":
		// one model's licence, not the account's key.
		if strings.Contains(hay, "has not agreed to") {
			return BadConfig, ScopeRoute
		}
		return Auth, ScopeProvider
	case status == http.StatusNotFound || status == http.StatusGone:
		if unfitRe.MatchString(hay) {
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
	case refusalRe.MatchString(hay):
		return Refused, ScopeRequest
	case goneRe.MatchString(hay):
		return Gone, ScopeRoute
	case authRe.MatchString(hay):
		return Auth, ScopeProvider
	case tooLargeRe.MatchString(hay):
		return TooLarge, ScopeRequest
	case configRe.MatchString(hay):
		return BadConfig, ScopeRoute
	case unfitRe.MatchString(hay):
		return TooLarge, ScopeRequest
	case notSupportedRe.MatchString(hay):
		return BadConfig, ScopeRoute
	}
	return BadRequest, ScopeRequest
}

// longWait is the retry-after above which a 429 that names no window is
// taken as a daily limit (DESIGN.md: per minute is "retry-after ≤ 5 min").
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
	// OpenRouter per-model caps and shared upstream pools: this route only.
	case strings.Contains(hay, "limit_rpm/") || strings.Contains(hay, "upstream_provider_shared_pool") ||
		strings.Contains(hay, "openrouter_shared_capacity"):
		return RateMinute, ScopeRoute
	case dayRe.MatchString(hay), daySpent(ue):
		return RateDay, ScopeRoute
	case minuteRe.MatchString(hay):
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
