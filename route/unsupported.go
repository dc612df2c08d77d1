package route

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

// A refusal of a field "this route does not take" is either
// docs/DECISIONS.md's "unsupported here" (the caller sent it: skip the route for this request,
// rest nothing) or its "bad config" (the route's own extra fields sent it:
// rest the route). The classifier names the field (failure.Verdict.Param);
// only the router knows what the caller sent and what the route adds, so
// the decision is made here. A caller must never be able to rest a route for
// everyone (issue 10: one request with logit_bias rested two routes for six
// hours), so the route is blamed only on positive evidence that it sent the
// field itself; a field nobody can be shown to have sent stays with the
// request.

// blame turns an Unsupported verdict into BadConfig when the field it names
// is the route's own (see routeSends); any other verdict is returned as is.
func blame(v failure.Verdict, rt *config.Route, req *llm.Request) failure.Verdict {
	if v.Class != failure.Unsupported || !routeSends(rt, req, v) {
		return v
	}
	v.Class, v.Scope = failure.BadConfig, failure.ScopeRoute
	return v
}

// routeSends reports whether the field v names was put in the request by the
// route rather than by the caller: a key of the route's extra fields at any
// depth (Gemini's generationConfig.thinkingConfig, Gemini OpenAI-compat's
// extra_body.google.thinking_config, NVIDIA's chat_template_kwargs), a
// max_tokens the router set for the route because the caller set none (the
// route's max_output), or stream_options when the caller did not ask for
// usage (the provider's stream_usage). A refusal that also names what the
// caller sent is the combination the request made (Groq: "reasoning_format=raw
// is not supported with JSON mode or tool calling" for a caller asking for
// JSON): it stays with the request.
func routeSends(rt *config.Route, req *llm.Request, v failure.Verdict) bool {
	leaf := leafName(v.Param)
	if leaf == "" {
		return false
	}
	own := gatewaySets(leaf, req)
	if !own {
		for k, raw := range rt.Extra {
			if isNullJSON(raw) {
				continue // a null extra removes the field: it was not sent
			}
			if fieldKey(k) == leaf || hasKey(raw, leaf) {
				own = true
				break
			}
		}
	}
	return own && !mentionsCaller(v.Message, req, rt)
}

// leafName is the refused field itself out of a provider's path
// ("body.frequency_penalty", "generation_config.thinking_config.thinking_level",
// "tools[0].function_declarations[5].const"), normalised by fieldKey; "" when
// there is none.
func leafName(param string) string {
	segs := strings.FieldsFunc(param, func(r rune) bool { return r == '.' || r == '[' || r == ']' || r == '/' })
	for i := len(segs) - 1; i >= 0; i-- {
		s := fieldKey(segs[i])
		if s == "" || strings.Trim(s, "0123456789") == "" {
			continue
		}
		return s
	}
	return ""
}

// fieldKey is a field name with case, underscores and dashes dropped, so
// that every spelling of one field compares equal: reasoning_effort and xAI's
// reasoningEffort, Google's thinking_config and thinkingConfig.
func fieldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		switch r {
		case '_', '-', ' ', '`', '\'', '"':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// gatewaySets reports whether the router or the adapter writes the field for
// the route whatever the caller sent.
func gatewaySets(leaf string, req *llm.Request) bool {
	switch leaf {
	case "maxtokens", "maxcompletiontokens", "maxoutputtokens":
		return req.MaxTokens == 0 // else it is the caller's (capped, maybe)
	case "streamoptions", "includeusage":
		return !req.IncludeUsage
	}
	return false
}

// hasKey reports whether the JSON value raw holds an object key that fieldKey
// turns into key, at any depth.
func hasKey(raw json.RawMessage, key string) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if fieldKey(k) == key || walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

func isNullJSON(raw json.RawMessage) bool {
	return strings.TrimSpace(string(raw)) == "null"
}

// callerFeatures are what a refusal may call a caller's field in words.
var callerFeatures = map[string]*regexp.Regexp{
	"response_format": regexp.MustCompile(`(?i)json[ _-]?(?:mode|object|schema)|structured output|response[ _]format`),
	"tools":           regexp.MustCompile(`(?i)tool[ _-]?(?:call|use|choice)|function[ _-]?call|\btools?\b`),
}

// mentionsCaller reports whether msg names a field the caller sent (one the
// route's extra fields did not replace).
func mentionsCaller(msg string, req *llm.Request, rt *config.Route) bool {
	key := fieldKey(msg)
	has := func(name string) bool {
		// Short names ("n", "user") would match words of any sentence.
		return len(name) >= 4 && strings.Contains(key, fieldKey(name))
	}
	var sent []string
	for _, f := range callerFields(req) {
		if _, replaced := rt.Extra[f]; !replaced {
			sent = append(sent, f)
		}
	}
	for _, f := range sent {
		if has(f) {
			return true
		}
	}
	for f, re := range callerFeatures {
		for _, s := range sent {
			if (s == f || f == "tools" && s == "tool_choice") && re.MatchString(msg) {
				return true
			}
		}
	}
	return false
}

// callerFields lists the top-level fields of the caller's request as an
// OpenAI-compatible upstream gets them.
func callerFields(req *llm.Request) []string {
	var fs []string
	add := func(ok bool, name string) {
		if ok {
			fs = append(fs, name)
		}
	}
	add(req.MaxTokens > 0, "max_tokens")
	add(req.Temperature != nil, "temperature")
	add(req.TopP != nil, "top_p")
	add(len(req.Stop) > 0, "stop")
	add(req.Seed != nil, "seed")
	add(req.ResponseFormat != nil, "response_format")
	add(req.ReasoningEffort != "", "reasoning_effort")
	add(req.User != "", "user")
	for k := range req.Extra {
		fs = append(fs, k)
	}
	return fs
}

// unsupportedTally counts the routes that refused a field of this request,
// and keeps the first refusal: it is what the caller gets when no route
// takes the request.
type unsupportedTally struct {
	n     int
	first *CallerError
}

func (u *unsupportedTally) add(route string, v failure.Verdict) {
	u.n++
	if u.first == nil {
		// The gateway speaks OpenAI's API, whose answer to a parameter a
		// model does not take is a 400 (Mistral's own is a 422).
		u.first = &CallerError{Route: route, Class: failure.Unsupported, Status: http.StatusBadRequest, Message: v.Message, Param: v.Param}
	}
}
