// Package failure owns the meaning of an upstream failure. Provider adapters
// report every failed call as an *UpstreamError (status, headers, at most
// 64 KiB of body, or a transport error or sentinel); Classify sorts it into a
// closed set of classes with a scope and the provider's wait. What a
// Verdict then causes (how long, and what, to rest) belongs to package rest:
// failure says what happened, rest what follows from it. One
// classifier for every dialect keeps the failover decision in one place
// (docs/STYLE.md, Errors), and it is a pure function of the error and the time, so
// it is safe for concurrent use.
//
// # Rules
//
// Classify applies these rules in order; typed checks come first, status
// codes next, and message text only inside a status family.
//
//	 #  seen as                                                class        scope
//	 1  nil                                                    ok           request
//	 2  errors.Is context.Canceled (caller gone, hedge lost)   cancelled    request
//	 3  HTTP status 1xx, 3xx-5xx: rules 11-21 on the body
//	 4  2xx with no Err: an error event inside a 200 (OpenRouter
//	    mid-stream); its numeric code decides, else 502
//	 5  ErrRefused (Gemini blockReason, finishReason SAFETY)   refused      request
//	    ErrCannotCarry (a part or field the adapter has no
//	    place for, media it could not fetch; no call made)     too_large    request
//	 6  ErrEmptyAnswer, ErrMalformed                           empty        route
//	 7  ErrStreamCut                                           overloaded   route
//	 8  ErrStreamStalled, context.DeadlineExceeded,
//	    a net.Error whose Timeout() is true                    timeout      route
//	 9  ECONNREFUSED, ECONNRESET, EPIPE, io.EOF,
//	    io.ErrUnexpectedEOF                                    overloaded   route
//	10  any other transport error                              overloaded   route
//	11  429: see "Per day or per minute" below                 rate_*       route/provider
//	12  402 (no credits; Pollinations balance)                 rate_day     provider
//	    402 "tier not high enough" (one model out of reach)    gone         route
//	13  401                                                    auth         provider
//	14  403 "moderation"/"flagged"/content_policy (OpenRouter) refused      request
//	    403 "has not agreed to" (Cloudflare model terms)       bad_config   route
//	    other 403 (NVIDIA "Authorization failed", leaked key)  auth         provider
//	15  404, 410 "No endpoints found that support ..."         too_large    request
//	    other 404, 410                                         gone         route
//	16  413                                                    too_large    request
//	17  408                                                    overloaded   route
//	18  504                                                    timeout      route
//	19  other 5xx ("high demand", UNAVAILABLE, OpenRouter 502/503)
//	                                                           overloaded   route
//	20  other 4xx, in order:
//	    content_filter, content_policy_violation, moderation   refused      request
//	    model_decommissioned, model_not_found, "no such model",
//	    "Not found for account"                                gone         route
//	    Gemini "API key not valid", API_KEY_INVALID,
//	    "API Key not found", "User location is not supported"  auth         provider
//	    context_length_exceeded, "reduce the length", "input
//	    token count (...) exceeds the maximum",
//	    tokens_limit_reached, "request too large"              too_large    request
//	    Gemini thinking errors ("Thinking level ...", "thinking
//	    budget", "Budget 0 is invalid")                        unsupported  request
//	    tools / JSON mode / images "not supported", "does not
//	    support response format"                               too_large    request
//	    a field this route does not take: "Unsupported
//	    parameter: 'x'", "property 'x' is unsupported", "x is
//	    not supported with/for this model", "Unknown name \"x\":
//	    Cannot find field", "is not enabled for models/",
//	    Mistral's extra_forbidden, "does not support parameter
//	    x"; any 4xx naming reasoning_format/reasoning_effort   unsupported  request
//	    anything else                                          bad_request  request
//	21  1xx, unfollowed 3xx (a wrong base URL)                 bad_config   route
//
// too_large also covers "this route cannot serve this request's features"
// (tools, JSON mode, images): like a prompt too long, another route may take
// it, and a caller must never rest a route for everyone.
//
// # Unsupported
//
// unsupported is docs/DECISIONS.md's "unsupported here" and, when the field
// is the route's own, its bad_config. Classify cannot tell the two apart: the
// same "`reasoning_effort` is not supported with this model" is the
// caller's doing when the caller sent reasoning_effort, and the route's
// when its config's extra fields did. So the verdict names the field
// (Verdict.Param: "logit_bias", "thinkingConfig" for Gemini's thinking
// refusals, "" when the provider names none) and stays with the request;
// the router, which knows what the caller sent and what the route adds,
// turns it into bad_config (a 6 h rest) only when the field is the route's
// own. Otherwise the route is skipped for this request, nothing rests, the
// next route gets the request, and the caller gets the provider's reason
// only when no route takes it (issue 10: one request with logit_bias used
// to rest two routes for six hours).
//
// # Per day or per minute
//
// A 429 is per day or per minute from its body first, then its headers:
//
//	OpenRouter "free-models-per-day*", limit_source openrouter_free_tier_daily   rate_day     provider
//	OpenRouter "free-models-per-min"                                            rate_minute  provider
//	Cloudflare "daily free allocation" (10,000 neurons, account-wide)           rate_day     provider
//	OpenRouter "limit_rpm/...", upstream_provider_shared_pool,
//	openrouter_shared_capacity                                                  rate_minute  route
//	Groq "(RPD)"/"(TPD)", Gemini quotaId "PerDay" or metric "per_day",
//	Gemini "limit: 0" (no free quota at all), "per day", GitHub
//	"UserByModelByDay"/"per 86400s", "daily", "-day"                            rate_day     route
//	Groq x-ratelimit-remaining-requests "0" (it counts the day), Cerebras
//	x-ratelimit-remaining-{requests,tokens}-day "0"                             rate_day     route
//	"(RPM)"/"(TPM)", "per minute", quotaId "PerMinute", "per 60s"               rate_minute  route
//	no window named, retry-after > 5 min                                        rate_day     route
//	no window named (Mistral, NVIDIA, bare Gemini)                              rate_minute  route
//
// Day signals win over minute ones: one Gemini 429 may list both quotas.
// Gemini's retryDelay never decides the window (a per-day 429 carries a 36 s
// delay); rest.Policy ignores such a short wait for a per-day limit.
//
// # Bodies
//
// Error bodies are parsed once into a small internal shape, whatever the
// envelope: {"error":{...}} (OpenAI, Groq, OpenRouter, GitHub, Ollama),
// Google's pretty-printed {"error":{"code","message","status","details"}},
// the same inside a JSON array (Gemini's OpenAI-compatible endpoint),
// Cerebras' and Mistral's flat {"message","type","code"}, NVIDIA's problem
// {"status","title","detail"}, Cloudflare's {"success":false,"errors":[...]},
// Pollinations' {"success":false,"error":{...}} and {"error":"text"}, plain
// text, and HTML (its <title>). Garbage never panics (FuzzClassify).
//
// # What callers see
//
// Verdict.Message is the provider's reason with keys, bearer tokens,
// org_/user_ ids and emails removed (Redact, by shape), at most 300 bytes;
// the configured secrets are already gone by value, whatever their shape:
// the adapters scrub UpstreamError.Body with the plan's secret.Set before
// Classify sees it (issue 10).
// Verdict.LogText is shorter still and elides long quoted spans, since a
// provider may echo the prompt. UpstreamError.Error never prints the body.
package failure
