package emulator

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Made-up account ids written where real bodies name the caller's account.
const (
	groqOrg       = "org_01jemu1at0rfreet1er0000000"
	openRouterUID = "user_2emulatorFreeTierAccount0"
	nvidiaAccount = "EmulatorAccount0000000000000000000000000000"
)

// failure is an error answer: status, extra headers and body.
type failure struct {
	status int
	header http.Header
	body   []byte
	google bool // Google's content type
}

func errEnv(fields ...kv) obj { return obj{{"error", obj(fields)}} }

// oai is the OpenAI error object most flavors send.
func oai(status int, msg, typ string, param any, code any, withParam bool) failure {
	f := []kv{{"message", msg}, {"type", typ}}
	if withParam {
		f = append(f, kv{"param", param})
	}
	f = append(f, kv{"code", code})
	return failure{status: status, body: compact(errEnv(f...))}
}

// failureOf builds the flavor's answer for an error kind.
func (e *Emulator) failureOf(c *call) failure {
	now := e.clock.Now()
	if (c.kind == RateMinute || c.kind == RateDay) && !c.limited {
		c.rate = e.scriptedRate(c, now)
	}
	if c.kind == TooLarge && !c.limited {
		c.rate = rateInfo{Tokens: true, Limit: c.model.Limits.TPM, Requested: c.prompt + c.completion}
		if c.rate.Limit == 0 {
			c.rate.Limit = 6000
		}
		if c.rate.Requested <= c.rate.Limit {
			c.rate.Requested += c.rate.Limit
		}
	}
	var f failure
	switch c.prov.Flavor {
	case FlavorGroq:
		f = groqFailure(c)
	case FlavorGemini:
		f = geminiFailure(c, now)
	case FlavorCerebras:
		f = cerebrasFailure(c)
	case FlavorOpenRouter:
		f = openRouterFailure(c, now)
	case FlavorNVIDIA:
		f = nvidiaFailure(c)
	case FlavorMistral:
		f = mistralFailure(c)
	case FlavorGitHub:
		f = githubFailure(c)
	case FlavorOllama:
		f = ollamaFailure(c)
	case FlavorPollinations:
		f = pollinationsFailure(c, now)
	case FlavorHuggingFace:
		f = huggingFaceFailure(c)
	case FlavorCohere:
		f = cohereFailure(c)
	case FlavorZai:
		f = zaiFailure(c, now)
	default:
		f = genericFailure(c)
	}
	if c.kind == ServerError {
		f = serverFailure(c)
	}
	if c.kind == Unauthorized && c.prov.EchoKey != EchoNone && c.gotKey != "" {
		f = echoFailure(c)
	}
	if c.compat {
		f.body = append(append([]byte("["), f.body...), ']')
	}
	if f.header == nil {
		f.header = http.Header{}
	}
	if c.kind == RateMinute || c.kind == RateDay || c.kind == TooLarge {
		e.limitHeaders(f.header, c)
	}
	return f
}

// seconds is a wait in whole seconds, rounded up, at least 1.
func seconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	return max(s, 1)
}

// goDuration is Groq's "try again in" and reset format: a Go duration.
func goDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Round(time.Millisecond).String()
}

// protoDuration is Google's duration format: "26s", "45.837906927s".
func protoDuration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

func badRequestText(c *call) string {
	if c.step.Text != "" {
		return c.step.Text
	}
	return "'messages.0' : discriminator property 'role' has invalid value"
}

func groqFailure(c *call) failure {
	m := c.modelID
	switch c.kind {
	case RateMinute, RateDay:
		ri := c.rate
		win := map[[2]bool]string{
			{false, false}: "requests per minute (RPM)", {false, true}: "tokens per minute (TPM)",
			{true, false}: "requests per day (RPD)", {true, true}: "tokens per day (TPD)",
		}[[2]bool{ri.Day, ri.Tokens}]
		typ := "requests"
		if ri.Tokens {
			typ = "tokens"
		}
		msg := fmt.Sprintf("Rate limit reached for model `%s` in organization `%s` service tier `on_demand` on %s: Limit %d, Used %d, Requested %d. Please try again in %s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing",
			m, groqOrg, win, ri.Limit, ri.Used, ri.Requested, goDuration(ri.Wait))
		f := failure{status: 429, body: compact(errEnv(kv{"message", msg}, kv{"type", typ}, kv{"code", "rate_limit_exceeded"})),
			header: http.Header{"Retry-After": {strconv.Itoa(seconds(ri.Wait))}}}
		return f
	case TooLarge:
		msg := fmt.Sprintf("Request too large for model `%s` in organization `%s` on tokens per minute (TPM): Limit %d, Requested %d, please reduce your message size and try again. Visit https://console.groq.com/docs/rate-limits for more information.",
			m, groqOrg, c.rate.Limit, c.rate.Requested)
		return failure{status: 413, body: compact(errEnv(kv{"message", msg}, kv{"type", "tokens"}, kv{"code", "rate_limit_exceeded"}))}
	case Decommissioned:
		msg := "The model `" + m + "` has been decommissioned and is no longer supported. Please refer to https://console.groq.com/docs/deprecations for a recommendation on which model to use instead."
		return failure{status: 400, body: compact(obj{
			{"request_id", fmt.Sprintf("req_01emulator%015d", c.seq)},
			{"created_at", c.start.UTC().Format("2006-01-02T15:04:05.000Z")},
			{"error", obj{{"message", msg}, {"type", "invalid_request_error"}, {"param", ""}, {"code", "model_decommissioned"}}},
		})}
	case NotFound:
		return oai(404, "The model `"+m+"` does not exist or you do not have access to it.", "invalid_request_error", nil, "model_not_found", false)
	case Unauthorized:
		return oai(401, "Invalid API Key", "invalid_request_error", nil, "invalid_api_key", false)
	case Forbidden:
		return oai(403, "Access denied. Please check your network settings.", "permissions_error", nil, "forbidden", false)
	case HighDemand:
		return oai(503, "Service Unavailable", "internal_server_error", nil, "service_unavailable", false)
	case ContextLength:
		return oai(400, "Please reduce the length of the messages or completion.", "invalid_request_error", "messages", "context_length_exceeded", true)
	}
	return openAIShared(c, "invalid_request_error")
}

// openAIShared answers the kinds every OpenAI-envelope flavor writes alike.
func openAIShared(c *call, badType string) failure {
	switch c.kind {
	case BadThinking:
		return oai(400, "`reasoning_effort` is not supported with this model", badType, "reasoning_effort", nil, true)
	case Refused:
		return oai(400, "The response was filtered due to the prompt triggering content management policy.", badType, "prompt", "content_filter", true)
	case ContextLength:
		return oai(400, "This model's maximum context length is 8192 tokens. Please reduce the length of the messages.", badType, "messages", "context_length_exceeded", true)
	case TooLarge:
		return oai(413, "Request too large", badType, nil, "request_too_large", false)
	case Decommissioned:
		return oai(404, "The model `"+c.modelID+"` has been deprecated.", badType, "model", "model_not_found", true)
	case HighDemand:
		return oai(503, "The server is overloaded. Please try again later.", "server_error", nil, "service_unavailable", true)
	}
	return oai(400, badRequestText(c), badType, nil, nil, true)
}

func genericFailure(c *call) failure {
	switch c.kind {
	case RateMinute, RateDay:
		return oai(429, "Rate limit exceeded", "rate_limit_error", nil, "rate_limit_exceeded", true)
	case Unauthorized:
		return oai(401, "Incorrect API key provided.", "invalid_request_error", nil, "invalid_api_key", true)
	case Forbidden:
		return oai(403, "You are not allowed to use this model.", "permission_error", nil, "forbidden", true)
	case NotFound:
		return oai(404, "The model `"+c.modelID+"` does not exist.", "invalid_request_error", "model", "model_not_found", true)
	}
	return openAIShared(c, "invalid_request_error")
}

func ollamaFailure(c *call) failure {
	switch c.kind {
	case NotFound, Decommissioned:
		return oai(404, `model "`+c.modelID+`" not found, try pulling it first`, "not_found_error", nil, nil, true)
	case RateMinute, RateDay, HighDemand, Unauthorized, Forbidden, TooLarge:
		status := map[Kind]int{RateMinute: 429, RateDay: 429, HighDemand: 503, Unauthorized: 401, Forbidden: 403, TooLarge: 413}[c.kind]
		return oai(status, strings.ToLower(http.StatusText(status)), "api_error", nil, nil, true)
	}
	return openAIShared(c, "invalid_request_error")
}

// cerebras writes flat objects without an "error" wrapper.
func cerebras(status int, msg, typ, param, code string) failure {
	return failure{status: status, body: compact(obj{{"message", msg}, {"type", typ}, {"param", param}, {"code", code}})}
}

func cerebrasFailure(c *call) failure {
	switch c.kind {
	case RateMinute, RateDay:
		per, what, code := "minute", "Requests", "request_quota_exceeded"
		if c.rate.Day {
			per = "day"
		}
		tail := "too many requests sent."
		if c.rate.Tokens {
			what, code, tail = "Tokens", "token_quota_exceeded", "too many tokens processed."
		}
		return cerebras(429, what+" per "+per+" limit exceeded - "+tail, "too_many_requests_error", "quota", code)
	case Unauthorized:
		return cerebras(401, "Wrong API Key", "invalid_request_error", "api_key", "wrong_api_key")
	case Forbidden:
		return cerebras(403, "You do not have access to this resource.", "permission_denied_error", "api_key", "forbidden")
	case NotFound, Decommissioned:
		return cerebras(404, "Model "+c.modelID+" does not exist or you do not have access to it.", "not_found_error", "model", "model_not_found")
	case HighDemand:
		return cerebras(503, "We're experiencing high traffic right now! Please try again soon.", "service_unavailable_error", "queue", "queue_exceeded")
	case TooLarge, ContextLength:
		return cerebras(400, fmt.Sprintf("Please reduce the length of the messages or completion. Current length is %d while limit is 8192", c.prompt+8192), "invalid_request_error", "messages", "context_length_exceeded")
	case BadThinking:
		return cerebras(400, "reasoning_effort is not supported for this model", "invalid_request_error", "reasoning_effort", "wrong_api_format")
	case Refused:
		return cerebras(400, "The response was filtered due to the prompt triggering content management policy.", "invalid_request_error", "prompt", "content_filter")
	}
	return cerebras(400, badRequestText(c), "invalid_request_error", "body", "wrong_api_format")
}

// orErr is OpenRouter's envelope: message, numeric code, optional metadata.
func orErr(status int, msg string, metadata obj, top ...kv) failure {
	f := []kv{{"message", msg}, {"code", status}}
	if metadata != nil {
		f = append(f, kv{"metadata", metadata})
	}
	return failure{status: status, body: compact(append(obj{{"error", obj(f)}}, top...))}
}

func orHeaders(limit int, resetAt time.Time) obj {
	return obj{{"X-RateLimit-Limit", strconv.Itoa(limit)}, {"X-RateLimit-Remaining", "0"},
		{"X-RateLimit-Reset", strconv.FormatInt(resetAt.UnixMilli(), 10)}}
}

func openRouterFailure(c *call, now time.Time) failure {
	ri := c.rate
	switch c.kind {
	case RateDay:
		msg := "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day"
		if ri.Limit >= 1000 {
			msg = "Rate limit exceeded: free-models-per-day-high-balance."
		}
		f := orErr(429, msg, obj{{"headers", orHeaders(ri.Limit, ri.ResetAt)}, {"provider_name", nil}}, kv{"user_id", openRouterUID})
		return f
	case RateMinute:
		resetAt := now.Truncate(time.Minute).Add(time.Minute)
		if c.limited {
			resetAt = ri.ResetAt
		}
		var f failure
		if c.limited && !ri.Account {
			// A busy model's own cap, not the account's.
			base := strings.TrimSuffix(c.modelID, ":free")
			msg := fmt.Sprintf("Rate limit exceeded: limit_rpm/%s/%s. High demand for %s on OpenRouter - limited to %d requests per minute. Please retry shortly.",
				base, uuidOf(c.modelID), c.modelID, ri.Limit)
			f = orErr(429, msg, obj{{"headers", orHeaders(ri.Limit, resetAt)}, {"provider_name", nil}, {"limit_source", "openrouter_shared_capacity"}})
		} else {
			f = orErr(429, "Rate limit exceeded: free-models-per-min.", obj{{"headers", orHeaders(ri.Limit, resetAt)}, {"provider_name", nil}})
		}
		f.header = http.Header{"Retry-After": {strconv.Itoa(seconds(resetAt.Sub(now)))}}
		return f
	case Unauthorized:
		return orErr(401, "No auth credentials found", nil)
	case Forbidden:
		return orErr(403, "Key is disabled.", nil)
	case NotFound, Decommissioned:
		return orErr(404, "No endpoints found for "+c.modelID+".", nil)
	case HighDemand:
		return orErr(503, "No instances available to handle this request. Please try again later.", nil)
	case TooLarge:
		return orErr(413, "Request entity too large", nil)
	case ContextLength:
		return orErr(400, fmt.Sprintf("This endpoint's maximum context length is 131072 tokens. However, you requested about %d tokens (%d of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.", c.prompt+131072, c.prompt+131072),
			obj{{"provider_name", nil}})
	case BadThinking:
		return orErr(400, "Reasoning is mandatory for this endpoint and cannot be disabled.", obj{{"provider_name", nil}})
	case Refused:
		return orErr(403, "The response was filtered due to the prompt triggering content management policy.", obj{{"reasons", []string{"content_filter"}}, {"provider_name", nil}})
	}
	return orErr(400, badRequestText(c), obj{{"provider_name", nil}})
}

// uuidOf is a stable made-up UUID for a name.
func uuidOf(name string) string {
	h := fnv.New128a()
	h.Write([]byte(name))
	b := h.Sum(nil)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func problem(status int, detail string) failure {
	o := obj{{"status", status}, {"title", http.StatusText(status)}}
	if detail != "" {
		o = append(o, kv{"detail", detail})
	}
	return failure{status: status, body: compact(o)}
}

func nvidiaFailure(c *call) failure {
	switch c.kind {
	case RateMinute, RateDay:
		return problem(429, "")
	case Unauthorized:
		return problem(401, "Authentication failed")
	case Forbidden:
		return problem(403, "Authorization failed")
	case NotFound:
		return problem(404, "Function '"+uuidOf(c.modelID)+"': Not found for account '"+nvidiaAccount+"'")
	case Decommissioned:
		return problem(410, "Function '"+uuidOf(c.modelID)+"': is no longer available")
	case HighDemand:
		return problem(503, "Inference service is overloaded, please retry")
	case TooLarge:
		return problem(413, "Request body too large")
	case ContextLength:
		return problem(400, "This model's maximum context length is 131072 tokens. Please reduce the length of the messages.")
	case Refused:
		return problem(400, "The response was filtered due to the prompt triggering content management policy.")
	case BadThinking:
		return problem(400, "chat_template_kwargs.enable_thinking is not supported for this model")
	}
	return problem(400, badRequestText(c))
}

func mistral(status int, msg, typ string, code any) failure {
	return failure{status: status, body: compact(obj{{"object", "error"}, {"message", msg}, {"type", typ}, {"param", nil}, {"code", code}})}
}

func mistralFailure(c *call) failure {
	switch c.kind {
	case RateMinute, RateDay:
		return mistral(429, "Rate limit exceeded", "rate_limited", "1300")
	case Unauthorized:
		return mistral(401, "Unauthorized", "unauthorized", nil)
	case Forbidden:
		return mistral(403, "Forbidden", "forbidden", nil)
	case NotFound, Decommissioned:
		return mistral(400, "Invalid model: "+c.modelID, "invalid_model", "1500")
	case HighDemand:
		return mistral(503, "Service unavailable", "service_unavailable", nil)
	case TooLarge, ContextLength:
		return mistral(400, fmt.Sprintf("Prompt contains %d tokens and 0 draft tokens, too large for model with 131072 maximum context length", c.prompt+131072), "invalid_request_message_order", "3051")
	case Refused:
		return mistral(400, "The response was filtered due to the prompt triggering content management policy.", "invalid_request_error", "content_filter")
	}
	return mistral(400, badRequestText(c), "invalid_request_error", nil)
}

func github(status int, code, msg string, details bool) failure {
	f := []kv{{"code", code}, {"message", msg}}
	if details {
		f = append(f, kv{"details", msg})
	}
	return failure{status: status, body: compact(errEnv(f...))}
}

func githubFailure(c *call) failure {
	short := c.modelID
	if i := strings.LastIndexByte(short, '/'); i >= 0 {
		short = short[i+1:]
	}
	switch c.kind {
	case RateMinute, RateDay:
		span, name := "60s", "UserByModelByMinute"
		if c.rate.Day {
			span, name = "86400s", "UserByModelByDay"
		}
		wait := seconds(c.rate.Wait)
		msg := fmt.Sprintf("Rate limit of %d per %s exceeded for %s. Please wait %d seconds before retrying.", c.rate.Limit, span, name, wait)
		f := github(429, "RateLimitReached", msg, true)
		f.header = http.Header{"Retry-After": {strconv.Itoa(wait)}, "X-Ratelimit-Type": {name}}
		return f
	case TooLarge:
		return github(413, "tokens_limit_reached", "Request body too large for "+short+" model. Max size: 8000 tokens.", false)
	case Unauthorized:
		return github(401, "unauthorized", "Bad credentials", true)
	case Forbidden:
		return github(403, "no_access", "No access to model: "+c.modelID, true)
	case NotFound, Decommissioned:
		return github(404, "unknown_model", "Unknown model: "+c.modelID, true)
	case HighDemand:
		return github(503, "ServiceUnavailable", "The service is temporarily unable to process your request. Please try again later.", true)
	case ContextLength:
		return github(400, "context_length_exceeded", "This model's maximum context length is 128000 tokens. Please reduce the length of the messages.", true)
	case Refused:
		return github(400, "content_filter", "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", true)
	}
	return github(400, "invalid_request", badRequestText(c), true)
}

// openAIParams are the chat-completion fields of OpenAI's API: a provider
// that knows a field's name but not for this model says so differently from
// one that does not know the name at all (Groq).
var openAIParams = map[string]bool{
	"frequency_penalty": true, "presence_penalty": true, "logit_bias": true, "logprobs": true,
	"top_logprobs": true, "n": true, "parallel_tool_calls": true, "reasoning_effort": true,
	"reasoning_format": true, "response_format": true, "seed": true, "service_tier": true,
	"stop": true, "temperature": true, "tool_choice": true, "tools": true, "top_p": true,
	"user": true, "max_tokens": true, "max_completion_tokens": true, "stream_options": true,
}

// unsupportedFailure is the flavor's 400 for a request field the model
// refuses (Model.Unsupported); value is the field's JSON value, which only
// Mistral echoes back. Verbatim sources are cited; where no capture of a
// flavor's wording exists, the comment says what it is modelled on.
func unsupportedFailure(c *call, name string, value json.RawMessage) failure {
	switch c.prov.Flavor {
	case FlavorGroq:
		if openAIParams[name] {
			// "`logprobs` is not supported with this model"
			// (github.com/groq/groq-python/issues/25; the same for
			// reasoning_effort, github.com/iamsrikanthnani/pluely/issues/242).
			return failure{status: 400, body: compact(errEnv(kv{"message", "`" + name + "` is not supported with this model"}, kv{"type", "invalid_request_error"}))}
		}
		// A name Groq does not know: "property 'store' is unsupported, did
		// you mean 'stop'?" (github.com/fanenr/chatbot/issues/21); the
		// did-you-mean is left out.
		return failure{status: 400, body: compact(errEnv(kv{"message", "property '" + name + "' is unsupported"}, kv{"type", "invalid_request_error"}))}
	case FlavorCerebras:
		// Captured for a message field ("messages.1.assistant.reasoning_content:
		// property '...' is unsupported", github.com/egoist/chatwise-releases/issues/1442);
		// the top-level form is assumed to name the field the same way.
		return cerebras(400, name+": property '"+name+"' is unsupported", "invalid_request_error", "validation_error", "wrong_api_format")
	case FlavorGemini:
		if c.compat {
			return compatUnknown(name)
		}
		// Google's wording for a field it does not take (the same as for
		// an unknown one); a model-specific refusal of a known field is
		// not captured.
		msg := `Invalid JSON payload received. Unknown name "` + name + `" at 'generation_config': Cannot find field.`
		if gemTopField(camel(name)) {
			msg = `Invalid JSON payload received. Unknown name "` + name + `": Cannot find field.`
		}
		return gErr(400, msg, "INVALID_ARGUMENT", obj{{"@type", "type.googleapis.com/google.rpc.BadRequest"},
			{"fieldViolations", []obj{{{"description", msg}}}}})
	case FlavorMistral:
		// Pydantic's 422 (github.com/crewAIInc/crewAI/issues/60), which
		// echoes the value sent.
		var input any
		_ = json.Unmarshal(value, &input)
		detail := obj{{"type", "extra_forbidden"}, {"loc", []string{"body", name}}, {"msg", "Extra inputs are not permitted"},
			{"input", input}, {"url", "https://errors.pydantic.dev/2.6/v/extra_forbidden"}}
		return failure{status: 422, body: compact(obj{{"object", "error"}, {"message", obj{{"detail", []obj{detail}}}},
			{"type", "invalid_request_error"}, {"param", nil}, {"code", nil}})}
	case FlavorNVIDIA:
		// Not captured: NVIDIA's problem envelope around the sentence its
		// OpenAI-style servers use.
		return problem(400, name+" is not supported for this model")
	case FlavorOpenRouter:
		// Not captured (OpenRouter mostly drops what a model does not
		// take): OpenAI's sentence in OpenRouter's envelope.
		return orErr(400, "Unsupported parameter: '"+name+"' is not supported with this model.", obj{{"provider_name", nil}})
	}
	// OpenAI's own, which GitHub Models (Azure) and OpenAI-shaped servers
	// follow: github.com/appatalks/eva-agent/issues/83.
	return oai(400, "Unsupported parameter: '"+name+"' is not supported with this model.", "invalid_request_error", name, "unsupported_parameter", true)
}
