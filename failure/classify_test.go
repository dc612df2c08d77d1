package failure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testNow is the fixed time of the table; OpenRouter's reset
// 1779321600000 (00:00 UTC) is 90 minutes later.
var testNow = time.UnixMilli(1779321600000).Add(-90 * time.Minute)

func readBody(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name + ".json")
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return b
}

type bodyCase struct {
	file   string // under testdata/, without .json
	status int
	flavor string
	header http.Header
	now    time.Time // zero: testNow

	class   Class
	scope   Scope
	retry   time.Duration
	resetAt time.Time
	code    string
	msgHas  []string
	msgNot  []string
	param   string // Verdict.Param of an Unsupported verdict
}

// TestClassifyBodies runs every verbatim body of docs/PROVIDERS.md (testdata/,
// byte for byte) and the bodies built from its verbatim messages
// (testdata/built/).
func TestClassifyBodies(t *testing.T) {
	orDay := time.UnixMilli(1779321600000)
	cases := []bodyCase{
		// Groq.
		{file: "groq_429_rpm", status: 429, flavor: "groq", class: RateMinute, scope: ScopeRoute, retry: 2 * time.Second,
			code: "rate_limit_exceeded", msgHas: []string{"requests per minute (RPM)", "[id]"}, msgNot: []string{"org_01k9v83k2bf1zr2nc2pzp9y3ad"}},
		{file: "groq_413_tpm", status: 413, flavor: "groq", class: TooLarge, scope: ScopeRequest,
			code: "rate_limit_exceeded", msgHas: []string{"Request too large"}, msgNot: []string{"org_01hw8f0aa0ekmrn70ffm2zkdv1"}},
		{file: "groq_400_decommissioned", status: 400, flavor: "groq", class: Gone, scope: ScopeRoute,
			code: "model_decommissioned", msgHas: []string{"decommissioned"}},
		{file: "groq_404_model_not_found", status: 404, flavor: "groq", class: Gone, scope: ScopeRoute, code: "model_not_found"},
		{file: "groq_401", status: 401, flavor: "groq", class: Auth, scope: ScopeProvider, code: "invalid_api_key", msgHas: []string{"Invalid API Key"}},
		{file: "groq_400_context", status: 400, flavor: "groq", class: TooLarge, scope: ScopeRequest, code: "context_length_exceeded"},
		{file: "built/groq_429_tpm", status: 429, flavor: "groq", class: RateMinute, scope: ScopeRoute, retry: 4770 * time.Millisecond, code: "rate_limit_exceeded"},
		{file: "built/groq_429_tpd", status: 429, flavor: "groq", class: RateDay, scope: ScopeRoute, retry: 9*time.Minute + 38016*time.Millisecond},
		{file: "built/groq_429_rpd", status: 429, flavor: "groq", class: RateDay, scope: ScopeRoute, retry: time.Minute + 363142857},
		{file: "built/groq_429_2024", status: 429, flavor: "groq", class: RateMinute, scope: ScopeRoute, retry: 6780999999,
			msgHas: []string{"Requested ~12903"}, msgNot: []string{"org_01hw8f0aa0ekmrn70ffm2zkdv1"}},
		{file: "built/groq_400_reasoning_format", status: 400, flavor: "groq", class: Unsupported, scope: ScopeRequest, param: "reasoning_format"},
		{file: "built/groq_400_property_unsupported", status: 400, flavor: "groq", class: Unsupported, scope: ScopeRequest, param: "store",
			msgHas: []string{"property 'store' is unsupported"}},
		{file: "built/groq_400_not_supported", status: 400, flavor: "groq", class: Unsupported, scope: ScopeRequest, param: "logprobs"},

		// Gemini native.
		{file: "gemini_429_minute", status: 429, flavor: "gemini", class: RateMinute, scope: ScopeRoute, retry: 26 * time.Second,
			code: "RESOURCE_EXHAUSTED", msgHas: []string{"You exceeded your current quota"}},
		{file: "gemini_429_bare", status: 429, flavor: "gemini", class: RateMinute, scope: ScopeRoute, code: "RESOURCE_EXHAUSTED"},
		{file: "built/gemini_429_day", status: 429, flavor: "gemini", class: RateDay, scope: ScopeRoute, retry: 36 * time.Second,
			msgHas: []string{"You exceeded your current quota"}},
		{file: "built/gemini_429_minute_and_day", status: 429, flavor: "gemini", class: RateDay, scope: ScopeRoute, retry: 45837906927},
		{file: "built/gemini_429_limit0", status: 429, flavor: "gemini", class: RateDay, scope: ScopeRoute, retry: 36 * time.Second},
		{file: "gemini_400_bad_key", status: 400, flavor: "gemini", class: Auth, scope: ScopeProvider, code: "INVALID_ARGUMENT",
			msgHas: []string{"API key not valid"}},
		{file: "built/gemini_400_key_not_found", status: 400, flavor: "gemini", class: Auth, scope: ScopeProvider},
		{file: "built/gemini_403_leaked", status: 403, flavor: "gemini", class: Auth, scope: ScopeProvider, code: "PERMISSION_DENIED"},
		{file: "built/gemini_400_location", status: 400, flavor: "gemini", class: Auth, scope: ScopeProvider, code: "FAILED_PRECONDITION"},
		{file: "built/gemini_404", status: 404, flavor: "gemini", class: Gone, scope: ScopeRoute, code: "NOT_FOUND"},
		{file: "built/gemini_503_overloaded", status: 503, flavor: "gemini", class: Overloaded, scope: ScopeRoute, code: "UNAVAILABLE"},
		{file: "built/gemini_503_high_demand", status: 503, flavor: "gemini", class: Overloaded, scope: ScopeRoute, msgHas: []string{"high demand"}},
		{file: "built/gemini_400_thinking_level", status: 400, flavor: "gemini", class: Unsupported, scope: ScopeRequest, param: "thinkingConfig"},
		{file: "built/gemini_400_thinking_medium", status: 400, flavor: "gemini", class: Unsupported, scope: ScopeRequest, param: "thinkingConfig"},
		{file: "built/gemini_400_thinking_both", status: 400, flavor: "gemini", class: Unsupported, scope: ScopeRequest, param: "thinkingConfig"},
		{file: "built/gemini_400_budget0", status: 400, flavor: "gemini", class: Unsupported, scope: ScopeRequest, param: "thinkingConfig"},
		{file: "built/gemini_400_budget_invalid", status: 400, flavor: "gemini", class: Unsupported, scope: ScopeRequest, param: "thinkingConfig"},
		{file: "built/gemini_400_developer_instruction", status: 400, flavor: "gemini", class: Unsupported, scope: ScopeRequest, param: "systemInstruction",
			code: "INVALID_ARGUMENT"},
		{file: "built/gemini_400_context", status: 400, flavor: "gemini", class: TooLarge, scope: ScopeRequest},

		// Gemini OpenAI-compatible: the JSON array.
		{file: "gemini_openai_429", status: 429, flavor: "gemini", class: RateMinute, scope: ScopeRoute, code: "RESOURCE_EXHAUSTED",
			msgHas: []string{"Resource has been exhausted"}},
		{file: "built/gemini_openai_400_unknown_field", status: 400, flavor: "gemini", class: Unsupported, scope: ScopeRequest,
			msgHas: []string{`Unknown name "store"`}, param: "store"},

		// Cerebras.
		{file: "cerebras_429_rpm", status: 429, flavor: "cerebras", class: RateMinute, scope: ScopeRoute, code: "request_quota_exceeded",
			msgHas: []string{"Requests per minute limit exceeded"}},
		{file: "built/cerebras_429_tpm", status: 429, flavor: "cerebras", class: RateMinute, scope: ScopeRoute},
		{file: "built/cerebras_400_property_unsupported", status: 400, flavor: "cerebras", class: Unsupported, scope: ScopeRequest,
			code: "wrong_api_format", param: "messages.1.assistant.reasoning_content"},

		// OpenRouter.
		{file: "openrouter_429_day", status: 429, flavor: "openrouter", class: RateDay, scope: ScopeProvider, retry: 90 * time.Minute, resetAt: orDay,
			msgHas: []string{"free-models-per-day"}, msgNot: []string{"user_3DwvHydeNrDpCeQHaaFQqY8fBNH"}},
		{file: "built/openrouter_429_day_limit_source", status: 429, flavor: "openrouter", class: RateDay, scope: ScopeProvider, retry: 90 * time.Minute, resetAt: orDay},
		{file: "built/openrouter_429_min", status: 429, flavor: "openrouter", class: RateMinute, scope: ScopeProvider,
			now: time.UnixMilli(1779321060000 - 40000), retry: 40 * time.Second, resetAt: time.UnixMilli(1779321060000)},
		{file: "openrouter_429_busy", status: 429, flavor: "openrouter", class: RateMinute, scope: ScopeRoute,
			now: time.UnixMilli(1783519380000 - 25000), retry: 25 * time.Second, resetAt: time.UnixMilli(1783519380000)},
		{file: "openrouter_429_upstream", status: 429, flavor: "openrouter", class: RateMinute, scope: ScopeRoute,
			msgHas: []string{"temporarily rate-limited upstream"}, msgNot: []string{"Provider returned error"}},
		{file: "openrouter_401", status: 401, flavor: "openrouter", class: Auth, scope: ScopeProvider, msgHas: []string{"No auth credentials found"}},
		{file: "built/openrouter_402", status: 402, flavor: "openrouter", class: RateDay, scope: ScopeProvider},
		{file: "built/openrouter_403_moderation", status: 403, flavor: "openrouter", class: Refused, scope: ScopeRequest},
		{file: "built/openrouter_404_no_endpoints", status: 404, flavor: "openrouter", class: Gone, scope: ScopeRoute},
		{file: "built/openrouter_404_tools", status: 404, flavor: "openrouter", class: TooLarge, scope: ScopeRequest},

		// NVIDIA.
		{file: "nvidia_429", status: 429, flavor: "nvidia", class: RateMinute, scope: ScopeRoute, msgHas: []string{"Too Many Requests"}},
		{file: "nvidia_404", status: 404, flavor: "nvidia", class: Gone, scope: ScopeRoute,
			msgHas: []string{"Not found for account"}, msgNot: []string{"Qawmu2vUw3rdcREnubcAVqe1c55nUTb1hCogKQx4BCA"}},
		{file: "nvidia_403", status: 403, flavor: "nvidia", class: Auth, scope: ScopeProvider, msgHas: []string{"Forbidden: Authorization failed"}},

		// Mistral.
		{file: "mistral_429_2026", status: 429, flavor: "mistral", class: RateMinute, scope: ScopeRoute, code: "1300", msgHas: []string{"Rate limit exceeded"}},
		{file: "mistral_429_2025", status: 429, flavor: "mistral", class: RateMinute, scope: ScopeRoute, msgHas: []string{"Requests rate limit exceeded"}},
		{file: "built/mistral_422_extra_forbidden", status: 422, flavor: "mistral", class: Unsupported, scope: ScopeRequest, param: "body.n",
			msgHas: []string{"Extra inputs are not permitted: body.n"}},
		{file: "built/mistral_422_extra_forbidden_string", status: 422, flavor: "mistral", class: Unsupported, scope: ScopeRequest,
			param: "body.frequency_penalty", msgNot: []string{"0.0", "pydantic"}},

		// GitHub Models.
		{file: "github_429_day", status: 429, flavor: "github", class: RateDay, scope: ScopeRoute, retry: 5631 * time.Second, code: "RateLimitReached"},
		{file: "built/github_429_minute", status: 429, flavor: "github", class: RateMinute, scope: ScopeRoute, retry: 42 * time.Second},
		{file: "github_413", status: 413, flavor: "github", class: TooLarge, scope: ScopeRequest, code: "tokens_limit_reached"},
		{file: "built/github_400_unsupported_parameter", status: 400, flavor: "github", class: Unsupported, scope: ScopeRequest, param: "top_p"},

		// Cloudflare.
		{file: "cloudflare_429_day", status: 429, flavor: "cloudflare", class: RateDay, scope: ScopeProvider, code: "4006",
			msgHas: []string{"daily free allocation"}},
		{file: "built/cloudflare_429_capacity", status: 429, flavor: "cloudflare", class: RateMinute, scope: ScopeRoute, code: "3040"},
		{file: "built/cloudflare_400_no_model", status: 400, flavor: "cloudflare", class: Gone, scope: ScopeRoute, code: "5007"},
		{file: "built/cloudflare_403_terms", status: 403, flavor: "cloudflare", class: BadConfig, scope: ScopeRoute},

		// Cohere (a trial key's month spent).
		{file: "built/cohere_429_month", status: 429, flavor: "cohere", class: RateDay, scope: ScopeProvider, msgHas: []string{"1000 API calls / month"}},

		// Pollinations.
		{file: "pollinations_402_balance", status: 402, flavor: "pollinations", class: RateDay, scope: ScopeProvider, code: "PAYMENT_REQUIRED",
			msgHas: []string{"Insufficient balance"}},
		{file: "pollinations_402_budget", status: 402, flavor: "pollinations", class: RateDay, scope: ScopeProvider, code: "PAYMENT_REQUIRED"},
		{file: "pollinations_402_tier", status: 402, flavor: "pollinations", class: Gone, scope: ScopeRoute, msgHas: []string{"tier not high enough"}},

		// Ollama, OpenAI-style generic.
		{file: "ollama_404", status: 404, flavor: "ollama", class: Gone, scope: ScopeRoute, msgHas: []string{`model "gemma3:12b" not found`}},
		{file: "built/openai_400_content_filter", status: 400, flavor: "generic", class: Refused, scope: ScopeRequest, code: "content_filter"},
		{file: "built/openai_400_bad_param", status: 400, flavor: "generic", class: BadRequest, scope: ScopeRequest,
			msgHas: []string{"must contain at least one message"}},
		{file: "built/openai_400_unsupported_parameter", status: 400, flavor: "generic", class: Unsupported, scope: ScopeRequest,
			code: "unsupported_parameter", param: "temperature"},
		{file: "built/openai_400_max_tokens", status: 400, flavor: "generic", class: Unsupported, scope: ScopeRequest,
			code: "unsupported_parameter", param: "max_tokens"},
		{file: "built/xai_400_reasoning_effort", status: 400, flavor: "generic", class: Unsupported, scope: ScopeRequest, param: "reasoningEffort"},

		// A field the provider does not know, in every wording of the
		// presets (issue 32: the first three were the caller's 400).
		{file: "built/openai_400_unknown_parameter", status: 400, flavor: "generic", class: Unsupported, scope: ScopeRequest,
			code: "unknown_parameter", param: "reasoning"},
		{file: "built/openai_400_unknown_parameter_compact", status: 400, flavor: "generic", class: Unsupported, scope: ScopeRequest,
			code: "unknown_parameter", param: "reasoning_effort"},
		{file: "built/openai_400_unrecognized_argument", status: 400, flavor: "generic", class: Unsupported, scope: ScopeRequest, param: "top_k"},
		{file: "built/github_400_unknown_parameter", status: 400, flavor: "github", class: Unsupported, scope: ScopeRequest,
			param: "input[0].internal_chat_message_metadata_passthrough"},
		{file: "built/cohere_422_unknown_field", status: 422, flavor: "cohere", class: Unsupported, scope: ScopeRequest, param: "strict"},
		{file: "built/cohere_422_unknown_field_bare", status: 422, flavor: "cohere", class: Unsupported, scope: ScopeRequest, param: "tool_content"},
		{file: "built/openrouter_422_raw_unknown_field", status: 422, flavor: "openrouter", class: Unsupported, scope: ScopeRequest, param: "strict"},
		{file: "built/nvidia_422_extra_forbidden", status: 422, flavor: "nvidia", class: Unsupported, scope: ScopeRequest, param: "frequency_penalty"},
		{file: "built/vllm_400_extra_forbidden", status: 400, flavor: "generic", class: Unsupported, scope: ScopeRequest, param: "max_completion_tokens"},
		{file: "built/gemini_400_unknown_name", status: 400, flavor: "gemini", class: Unsupported, scope: ScopeRequest,
			code: "INVALID_ARGUMENT", param: "request.generation_config.effortLevel"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			now := tc.now
			if now.IsZero() {
				now = testNow
			}
			err := &UpstreamError{Provider: "p", Flavor: tc.flavor, Model: "m", Status: tc.status, Header: tc.header, Body: readBody(t, tc.file)}
			v := Classify(fmt.Errorf("attempt: %w", err), now)
			checkVerdict(t, v, tc)
		})
	}
}

func checkVerdict(t *testing.T, v Verdict, tc bodyCase) {
	t.Helper()
	if v.Class != tc.class || v.Scope != tc.scope {
		t.Errorf("got %v/%v, want %v/%v (message %q)", v.Class, v.Scope, tc.class, tc.scope, v.Message)
	}
	if v.RetryAfter != tc.retry {
		t.Errorf("RetryAfter: got %v, want %v", v.RetryAfter, tc.retry)
	}
	if !v.ResetAt.Equal(tc.resetAt) {
		t.Errorf("ResetAt: got %v, want %v", v.ResetAt, tc.resetAt)
	}
	if tc.code != "" && v.Code != tc.code {
		t.Errorf("Code: got %q, want %q", v.Code, tc.code)
	}
	if v.Message == "" || len(v.Message) > maxMessage {
		t.Errorf("Message: got %d bytes, want 1..%d", len(v.Message), maxMessage)
	}
	for _, s := range tc.msgHas {
		if !strings.Contains(v.Message, s) {
			t.Errorf("Message %q: want it to contain %q", v.Message, s)
		}
	}
	for _, s := range tc.msgNot {
		if strings.Contains(v.Message, s) || strings.Contains(v.LogText(), s) {
			t.Errorf("Message %q or LogText: must not contain %q", v.Message, s)
		}
	}
	if v.Param != tc.param {
		t.Errorf("Param: got %q, want %q", v.Param, tc.param)
	}
	if n := len(v.LogText()); n > maxLog {
		t.Errorf("LogText: got %d bytes, want <= %d", n, maxLog)
	}
}

// TestClassifyHeaders covers the windows and waits that only headers tell.
func TestClassifyHeaders(t *testing.T) {
	groqRPM := "groq_429_rpm"
	cases := []struct {
		name string
		bodyCase
	}{
		{"groq day spent by header", bodyCase{file: groqRPM, status: 429, flavor: "groq",
			header: http.Header{"X-Ratelimit-Remaining-Requests": {"0"}}, class: RateDay, scope: ScopeRoute, retry: 2 * time.Second}},
		{"remaining-requests 0 is not the day outside groq", bodyCase{file: "nvidia_429", status: 429, flavor: "nvidia",
			header: http.Header{"X-Ratelimit-Remaining-Requests": {"0"}}, class: RateMinute, scope: ScopeRoute}},
		{"cerebras day spent", bodyCase{file: "cerebras_429_rpm", status: 429, flavor: "cerebras",
			header: http.Header{"X-Ratelimit-Remaining-Requests-Day": {"0"}, "X-Ratelimit-Reset-Requests-Day": {"33011.382867097855"},
				"X-Ratelimit-Remaining-Tokens-Minute": {"999998298"}, "X-Ratelimit-Reset-Tokens-Minute": {"11.382867097854614"}},
			class: RateDay, scope: ScopeRoute, retry: 33011382867097}},
		{"long retry-after and no window is a day", bodyCase{file: "nvidia_429", status: 429, flavor: "nvidia",
			header: http.Header{"Retry-After": {"600"}}, class: RateDay, scope: ScopeRoute, retry: 10 * time.Minute}},
		{"short retry-after and no window is a minute", bodyCase{file: "mistral_429_2026", status: 429, flavor: "mistral",
			header: http.Header{"Retry-After": {"300"}}, class: RateMinute, scope: ScopeRoute, retry: 5 * time.Minute}},
		{"named minute wins over a long wait", bodyCase{file: "built/github_429_minute", status: 429, flavor: "github",
			header: http.Header{"Retry-After": {"3600"}}, class: RateMinute, scope: ScopeRoute, retry: time.Hour}},
		{"503 retry-after", bodyCase{file: "built/gemini_503_overloaded", status: 503, flavor: "gemini",
			header: http.Header{"Retry-After": {"120"}}, class: Overloaded, scope: ScopeRoute, retry: 2 * time.Minute}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := &UpstreamError{Provider: "p", Flavor: tc.flavor, Model: "m", Status: tc.status, Header: tc.header, Body: readBody(t, tc.file)}
			checkVerdict(t, Classify(err, testNow), tc.bodyCase)
		})
	}
}

// TestRetryAfterOrder checks the order of the wait's sources: retry-after,
// RetryInfo.retryDelay, a sentence, x-ratelimit-reset-*.
func TestRetryAfterOrder(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	gemini := `{"error":{"code":429,"message":"Please retry in 36.43s.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"26s"}]}}`
	groq := `{"error":{"message":"on tokens per minute (TPM): Limit 6000. Please try again in 2s.","code":"rate_limit_exceeded"}}`
	bare := `{"error":{"message":"Rate limit exceeded","code":"rate_limit_exceeded"}}`
	cases := []struct {
		name   string
		body   string
		header http.Header
		want   time.Duration
		at     time.Time
	}{
		{"header beats retryDelay", gemini, http.Header{"Retry-After": {"7"}}, 7 * time.Second, time.Time{}},
		{"header HTTP date", bare, http.Header{"Retry-After": {now.Add(2 * time.Minute).Format(http.TimeFormat)}}, 2 * time.Minute, now.Add(2 * time.Minute)},
		{"header in the past is ignored", bare, http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0, time.Time{}},
		{"retry-after-ms", bare, http.Header{"Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond, time.Time{}},
		{"garbage header falls through", gemini, http.Header{"Retry-After": {"soon"}}, 26 * time.Second, time.Time{}},
		{"retryDelay beats sentence", gemini, nil, 26 * time.Second, time.Time{}},
		{"sentence beats reset headers", groq, http.Header{"X-Ratelimit-Reset-Tokens": {"7.66s"}}, 2 * time.Second, time.Time{}},
		{"groq reset of the spent budget", bare, http.Header{
			"X-Ratelimit-Reset-Tokens": {"7.66s"}, "X-Ratelimit-Remaining-Tokens": {"17997"},
			"X-Ratelimit-Reset-Requests": {"2m59.56s"}, "X-Ratelimit-Remaining-Requests": {"0"}}, 2*time.Minute + 59560*time.Millisecond, time.Time{}},
		{"soonest reset when none is spent", bare, http.Header{
			"X-Ratelimit-Reset-Tokens": {"520ms"}, "X-Ratelimit-Remaining-Tokens": {"5"},
			"X-Ratelimit-Reset-Requests": {"2m59.56s"}, "X-Ratelimit-Remaining-Requests": {"14370"}}, 520 * time.Millisecond, time.Time{}},
		{"cerebras float seconds", bare, http.Header{"X-Ratelimit-Reset-Tokens-Minute": {"11.5"}}, 11500 * time.Millisecond, time.Time{}},
		{"openrouter epoch ms header", bare, http.Header{"X-Ratelimit-Reset": {fmt.Sprint(now.Add(30 * time.Second).UnixMilli())}, "X-Ratelimit-Remaining": {"0"}},
			30 * time.Second, now.Add(30 * time.Second)},
		{"epoch seconds", bare, http.Header{"X-Ratelimit-Reset": {fmt.Sprint(now.Add(time.Minute).Unix())}}, time.Minute, now.Add(time.Minute)},
		{"epoch in the past is ignored", bare, http.Header{"X-Ratelimit-Reset": {fmt.Sprint(now.Add(-time.Minute).UnixMilli())}}, 0, time.Time{}},
		{"huge value is capped", bare, http.Header{"Retry-After": {"1e300"}}, maxWait, time.Time{}},
		{"negative and NaN are unknown", bare, http.Header{"Retry-After": {"-5"}, "X-Ratelimit-Reset": {"NaN"}}, 0, time.Time{}},
		{"github wait seconds", `{"error":{"code":"RateLimitReached","message":"Please wait 5631 seconds before retrying."}}`, nil, 5631 * time.Second, time.Time{}},
		{"groq long fraction", `{"error":{"message":"Please try again in 1m0.363142857s."}}`, nil, time.Minute + 363142857, time.Time{}},
		{"groq minutes", `{"error":{"message":"Please try again in 23m58.56s."}}`, nil, 23*time.Minute + 58560*time.Millisecond, time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Classify(&UpstreamError{Provider: "p", Status: 429, Header: tc.header, Body: []byte(tc.body)}, now)
			if v.RetryAfter != tc.want || !v.ResetAt.Equal(tc.at) {
				t.Errorf("got %v at %v, want %v at %v", v.RetryAfter, v.ResetAt, tc.want, tc.at)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

func TestClassifyErrors(t *testing.T) {
	up := func(status int, err error, body string) error {
		return &UpstreamError{Provider: "groq", Model: "m", Status: status, Err: err, Body: []byte(body)}
	}
	refused := `{"error":{"code":"ECONNREFUSED"}}`
	cases := []struct {
		name  string
		err   error
		class Class
		scope Scope
		msg   string
	}{
		{"nil", nil, OK, ScopeRequest, ""},
		{"cancelled", context.Canceled, Cancelled, ScopeRequest, "request cancelled"},
		{"cancelled wins over a status", up(429, fmt.Errorf("read body: %w", context.Canceled), ""), Cancelled, ScopeRequest, "request cancelled"},
		{"deadline", up(0, context.DeadlineExceeded, ""), Timeout, ScopeRoute, "upstream timed out"},
		{"bare deadline", fmt.Errorf("attempt: %w", context.DeadlineExceeded), Timeout, ScopeRoute, "upstream timed out"},
		{"net timeout", up(0, &url.Error{Op: "Post", URL: "https://x", Err: timeoutErr{}}, ""), Timeout, ScopeRoute, "upstream timed out"},
		{"stream stalled", up(200, ErrStreamStalled, ""), Timeout, ScopeRoute, "stream stalled"},
		{"connection refused", up(0, &url.Error{Op: "Post", URL: "https://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}, refused),
			Overloaded, ScopeRoute, "connection refused"},
		{"connection reset", up(0, &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, ""), Overloaded, ScopeRoute, "connection reset"},
		{"eof before response", up(0, io.EOF, ""), Overloaded, ScopeRoute, "connection closed before the response"},
		{"unexpected eof", up(0, io.ErrUnexpectedEOF, ""), Overloaded, ScopeRoute, "connection closed before the response"},
		{"dns", up(0, &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, ""), Overloaded, ScopeRoute, "upstream unreachable"},
		{"unknown error", errors.New("boom"), Overloaded, ScopeRoute, "upstream unreachable"},
		{"empty answer", up(200, ErrEmptyAnswer, ""), Empty, ScopeRoute, "empty answer"},
		{"malformed", up(200, fmt.Errorf("decode: %w", ErrMalformed), "<html>"), Empty, ScopeRoute, "malformed answer"},
		{"stream cut", up(200, ErrStreamCut, ""), Overloaded, ScopeRoute, "stream ended before it finished"},
		{"gemini blockReason", up(200, ErrRefused, `{"promptFeedback":{"blockReason":"SAFETY"}}`), Refused, ScopeRequest, "prompt blocked: SAFETY"},
		{"gemini finishReason", up(200, ErrRefused, `{"candidates":[{"finishReason":"SAFETY"}]}`), Refused, ScopeRequest, "answer stopped: SAFETY"},
		{"refused without body", up(200, ErrRefused, ""), Refused, ScopeRequest, ErrRefused.Error()},
		{"openrouter mid-stream error", up(200, nil, `{"id":"cmpl-abc123","object":"chat.completion.chunk","created":1234567890,"model":"gpt-3.5-turbo","provider":"openai","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`),
			Overloaded, ScopeRoute, "Provider disconnected unexpectedly"},
		{"error in a 200 with an HTTP code", up(200, nil, `{"error":{"code":429,"message":"Rate limit exceeded: free-models-per-min."}}`), RateMinute, ScopeProvider, "Rate limit exceeded: free-models-per-min."},
		{"504", up(504, nil, ""), Timeout, ScopeRoute, "Gateway Timeout"},
		{"408", up(408, nil, `{"error":{"message":"Request timeout","code":408}}`), Overloaded, ScopeRoute, "Request timeout"},
		{"500 html", up(500, nil, "<html><head><title>500 Internal Server Error</title></head><body>x</body></html>"), Overloaded, ScopeRoute, "500 Internal Server Error"},
		{"502 html without title", up(502, nil, "<html><body>bad</body></html>"), Overloaded, ScopeRoute, "Bad Gateway"},
		{"302", up(302, nil, ""), BadConfig, ScopeRoute, "Found"},
		{"plain text 400", up(400, nil, "invalid temperature"), BadRequest, ScopeRequest, "invalid temperature"},
		{"422 generic", up(422, nil, `{"detail":"field required"}`), BadRequest, ScopeRequest, "field required"},
		{"pollinations error string", up(400, nil, `{"error":"bad prompt","status":400}`), BadRequest, ScopeRequest, "bad prompt"},
		{"groq json_schema refused (issue 15)", up(400, nil, "{\"error\":{\"message\":\"This model does not support response format `json_schema`.\",\"type\":\"invalid_request_error\",\"param\":\"response_format\"}}"), TooLarge, ScopeRequest, "This model does not support response format `json_schema`."},
		{"vllm object error", up(400, nil, `{"object":"error","message":"tools is not supported for this model","type":"BadRequestError"}`), TooLarge, ScopeRequest, "tools is not supported for this model"},
		{"parameter not supported", up(400, nil, `{"error":{"message":"temperature is not supported for this model"}}`), Unsupported, ScopeRequest, "temperature is not supported for this model"},
		{"429 inside a number is not a status", up(400, nil, `{"error":{"message":"Please retry in 18.403470473s"}}`), BadRequest, ScopeRequest, "Please retry in 18.403470473s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Classify(tc.err, testNow)
			if v.Class != tc.class || v.Scope != tc.scope || v.Message != tc.msg {
				t.Errorf("got %v/%v %q, want %v/%v %q", v.Class, v.Scope, v.Message, tc.class, tc.scope, tc.msg)
			}
		})
	}
}

// TestUnsupportedParam checks the parameter named by each wording of
// "this route does not take that field" (issue 10, item 1): the router
// decides from it whether the caller's request or the route's own settings
// caused the refusal.
func TestUnsupportedParam(t *testing.T) {
	cases := []struct {
		name, body, param string
	}{
		{"openai", `{"error":{"message":"Unsupported parameter: 'logit_bias' is not supported with this model.","type":"invalid_request_error","param":"logit_bias","code":"unsupported_parameter"}}`, "logit_bias"},
		{"openai dotted", `{"error":{"message":"Unsupported parameter: 'reasoning.effort' is not supported with this model.","type":"invalid_request_error","param":"reasoning.effort","code":"unsupported_parameter"}}`, "reasoning.effort"},
		{"groq did-you-mean names another field", `{"error":{"message":"property 'abort_signal' is unsupported, did you mean 'logit_bias'?","type":"invalid_request_error"}}`, "abort_signal"},
		{"groq backticks", `{"error":{"message":"` + "`reasoning_effort`" + ` is not supported with this model","type":"invalid_request_error"}}`, "reasoning_effort"},
		{"groq reasoning value", `{"error":{"message":"` + "`reasoning_effort` must be one of `none` or `default`" + `","type":"invalid_request_error"}}`, "reasoning_effort"},
		{"nvidia dotted", `{"status":400,"title":"Bad Request","detail":"chat_template_kwargs.enable_thinking is not supported for this model"}`, "chat_template_kwargs.enable_thinking"},
		{"gemini compat array", `[{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"reasoning\": Cannot find field.","status":"INVALID_ARGUMENT"}}]`, "reasoning"},
		{"gemini nested path", `{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"thinking_level\" at 'generation_config.thinking_config': Cannot find field.","status":"INVALID_ARGUMENT"}}`, "generation_config.thinking_config.thinking_level"},
		{"oci", `{"code":"400","error":"Argument not supported: logit_bias"}`, "logit_bias"},
		{"mistral detail at top", `{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted","input":null}]}`, "body.stream_options"},
		{"none named", `{"error":{"message":"This parameter is not supported with this model."}}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Classify(&UpstreamError{Provider: "p", Status: 400, Body: []byte(tc.body)}, testNow)
			if v.Class != Unsupported || v.Scope != ScopeRequest {
				t.Fatalf("got %v/%v (%q), want unsupported/request", v.Class, v.Scope, v.Message)
			}
			if v.Param != tc.param {
				t.Errorf("Param: got %q, want %q (message %q)", v.Param, tc.param, v.Message)
			}
			if v.Class.Rests() {
				t.Error("an unsupported parameter rests the route")
			}
		})
	}
}

func TestUpstreamErrorText(t *testing.T) {
	body := []byte(`{"error":{"message":"secret prompt text"}}`)
	cases := []struct {
		name string
		err  *UpstreamError
		want string
	}{
		{"status", &UpstreamError{Provider: "groq", Model: "llama-3.3-70b-versatile", Status: 429, Body: body}, "groq/llama-3.3-70b-versatile: HTTP 429"},
		{"transport without url or key", &UpstreamError{Provider: "gemini", Model: "gemini-2.5-flash",
			Err: &url.Error{Op: "Post", URL: "https://generativelanguage.googleapis.com/v1beta/models/x:generateContent?key=AIzaSySECRET",
				Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}},
			"gemini/gemini-2.5-flash: dial tcp: connect: connection refused"},
		{"key in the error text", &UpstreamError{Provider: "groq", Err: errors.New("auth gsk_live_SECRET123 rejected")}, "groq: auth [key] rejected"},
		{"sentinel with status", &UpstreamError{Provider: "groq", Model: "m", Status: 200, Err: ErrEmptyAnswer}, "groq/m: HTTP 200: empty answer"},
		{"nothing", &UpstreamError{}, "upstream: unknown failure"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	inner := errors.New("x")
	if got := (&UpstreamError{Err: inner}).Unwrap(); got != inner {
		t.Errorf("Unwrap: got %v, want %v", got, inner)
	}
}

func TestClassNames(t *testing.T) {
	want := []string{"ok", "empty", "rate_minute", "rate_day", "auth", "gone", "bad_config", "bad_request", "unsupported", "refused", "too_large", "overloaded", "timeout", "cancelled", "silent_loser", "invalid"}
	for i, name := range want {
		c := Class(i)
		if got := c.String(); got != name {
			t.Errorf("Class(%d).String(): got %q, want %q", i, got, name)
		}
		if got, ok := ParseClass(name); !ok || got != c {
			t.Errorf("ParseClass(%q): got %v, %v, want %v, true", name, got, ok, c)
		}
	}
	if got := Class(len(want)).String(); got != "unknown" {
		t.Errorf("out of range: got %q, want unknown", got)
	}
	if _, ok := ParseClass("unknown"); ok {
		t.Error("ParseClass(unknown): got ok, want not ok")
	}
	for s, want := range map[Scope]string{ScopeRequest: "request", ScopeRoute: "route", ScopeProvider: "provider", 9: "unknown"} {
		if got := s.String(); got != want {
			t.Errorf("Scope(%d): got %q, want %q", s, got, want)
		}
	}
}
