package emulator

import (
	"encoding/json"
	"strings"
)

// Response formats (issue 15). A chat call may ask for JSON: OpenAI's
// response_format {"type": "json_object"} (JSON mode) or {"type":
// "json_schema", ...} (structured outputs); Gemini's generationConfig
// responseMimeType "application/json", with responseJsonSchema or
// responseSchema for a schema. Every call's Record says which it asked
// (Record.Format). A model refuses what it does not take, in its flavor's
// words, before any script or limit (like Model.Unsupported): Gemma on
// Gemini's API takes no JSON mode at all (Model.NoJSONMode), Groq's
// llama-3.3-70b-versatile takes JSON mode but no json_schema
// (Model.NoJSONSchema). OpenAI's JSON mode also refuses a conversation
// that never says "json", and OpenAI-compatible servers follow it.

// The formats a Record names.
const (
	FormatJSONObject = "json_object"
	FormatJSONSchema = "json_schema"
)

// openAIFormat is the format an OpenAI request's response_format asks, ""
// for none or text.
func openAIFormat(top map[string]json.RawMessage) string {
	var rf struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(top["response_format"], &rf) != nil {
		return ""
	}
	switch rf.Type {
	case FormatJSONObject, FormatJSONSchema:
		return rf.Type
	}
	return ""
}

// geminiFormat is the format a generateContent request's generationConfig
// asks (its keys in camelCase), "" for none.
func geminiFormat(gc map[string]json.RawMessage) string {
	if gc == nil {
		return ""
	}
	var mime string
	_ = json.Unmarshal(gc["responseMimeType"], &mime)
	_, schema := gc["responseJsonSchema"]
	_, old := gc["responseSchema"]
	switch {
	case schema || old:
		return FormatJSONSchema
	case mime == "application/json":
		return FormatJSONObject
	}
	return ""
}

// formatRefusal returns the flavor's 400 for a format the model does not
// take; ok is false when it takes it. mentionsJSON says whether the
// conversation says "json" (OpenAI's JSON mode wants it to).
func formatRefusal(c *call, m Model, format string, mentionsJSON bool) (failure, bool) {
	if format == "" {
		return failure{}, false
	}
	if c.prov.Flavor == FlavorGemini && !c.compat {
		if m.NoJSONMode {
			// Gemma's answer, quoted in many public projects (e.g.
			// "400 INVALID_ARGUMENT: JSON mode is not enabled for
			// models/gemma-3-27b-it").
			return gErr(400, "JSON mode is not enabled for models/"+c.modelID, "INVALID_ARGUMENT"), true
		}
		return failure{}, false
	}
	switch {
	case m.NoJSONMode || format == FormatJSONSchema && m.NoJSONSchema:
		if c.prov.Flavor == FlavorGroq {
			// Groq's for llama-3.3-70b-versatile, quoted verbatim in
			// public projects (github.com/ItzCrazyKns/Vane/issues/980 and
			// others).
			return failure{status: 400, body: compact(errEnv(kv{"message", "This model does not support response format `" + format + "`."},
				kv{"type", "invalid_request_error"}, kv{"param", "response_format"}))}, true
		}
		// OpenAI's own (github.com/openai/openai-dotnet/issues/276).
		return oai(400, "Invalid parameter: 'response_format' of type '"+format+"' is not supported with this model.",
			"invalid_request_error", "response_format", nil, true), true
	case format == FormatJSONObject && !mentionsJSON:
		// OpenAI's JSON-mode rule, which OpenAI-compatible servers share
		// (quoted in many public projects).
		return oai(400, "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
			"invalid_request_error", "messages", nil, true), true
	}
	return failure{}, false
}

// saysJSON reports whether a text says "json", in any case.
func saysJSON(text string) bool { return strings.Contains(strings.ToLower(text), "json") }

// geminiBodyFormat is the format a generateContent body asks, its keys in
// either case (Google accepts snake_case and camelCase).
func geminiBodyFormat(body []byte) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return ""
	}
	for k, v := range top {
		if camel(k) != "generationConfig" {
			continue
		}
		var gc map[string]json.RawMessage
		if json.Unmarshal(v, &gc) != nil {
			return ""
		}
		norm := make(map[string]json.RawMessage, len(gc))
		for gk, gv := range gc {
			norm[camel(gk)] = gv
		}
		return geminiFormat(norm)
	}
	return ""
}
