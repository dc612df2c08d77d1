package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
)

// wireRequest is the body of generateContent and streamGenerateContent.
type wireRequest struct {
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction,omitempty"`
	// GenerationConfig is a map so that the route's Extra can add any
	// field Gemini knows, present or future; encoding/json sorts its keys.
	GenerationConfig map[string]json.RawMessage `json:"generationConfig,omitempty"`
	SafetySettings   json.RawMessage            `json:"safetySettings,omitempty"`
	Tools            json.RawMessage            `json:"tools,omitempty"`
	ToolConfig       json.RawMessage            `json:"toolConfig,omitempty"`
	CachedContent    json.RawMessage            `json:"cachedContent,omitempty"`
}

// wireContent is one turn (or the system instruction, which has no role).
type wireContent struct {
	Role  string     `json:"role,omitempty"`
	Parts []wirePart `json:"parts"`
}

// wirePart is one part of a turn: text, inlineData, functionCall or
// functionResponse (parts.go). An answer's parts of other kinds (an
// executable code part...) decode as parts with none of these, and carry
// nothing.
type wirePart struct {
	Text             string                `json:"text,omitempty"`
	Thought          bool                  `json:"thought,omitempty"`
	InlineData       *wireBlob             `json:"inlineData,omitempty"`
	FunctionCall     *wireFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *wireFunctionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string                `json:"thoughtSignature,omitempty"`
}

// The Extra keys that are generateContent fields rather than
// generationConfig fields, and the two generationConfig keys handled apart.
const (
	keySafetySettings   = "safetySettings"
	keyTools            = "tools"
	keyToolConfig       = "toolConfig"
	keyCachedContent    = "cachedContent"
	keyGenerationConfig = "generationConfig"
	keyThinkingConfig   = "thinkingConfig"
)

// buildRequest translates call into Gemini's request body. It does not
// modify call.
func buildRequest(call provider.Call) *wireRequest { return buildRequestWith(call, nil) }

// buildRequestWith is buildRequest with the media fetched for the call's
// remote images, by URL (media.go).
func buildRequestWith(call provider.Call, media map[string]*wireBlob) *wireRequest {
	req := call.Request
	w := &wireRequest{GenerationConfig: map[string]json.RawMessage{}}
	if req == nil {
		req = &llm.Request{}
	}
	w.SystemInstruction, w.Contents = buildContents(req.Messages, call.Model, media)

	gc := w.GenerationConfig
	if req.MaxTokens > 0 {
		setJSON(gc, "maxOutputTokens", req.MaxTokens)
	}
	if req.Temperature != nil {
		setJSON(gc, "temperature", *req.Temperature)
	}
	if req.TopP != nil {
		setJSON(gc, "topP", *req.TopP)
	}
	if len(req.Stop) > 0 {
		setJSON(gc, "stopSequences", req.Stop)
	}
	if req.Seed != nil {
		setJSON(gc, "seed", *req.Seed)
	}
	responseFormat(gc, req.ResponseFormat)
	callerTools(w, gc, req.Extra)

	top, inGC := splitExtra(call.Extra)
	if _, ok := inGC[keyThinkingConfig]; !ok {
		if tc := thinkingFor(call.Model, req.ReasoningEffort); tc != nil {
			gc[keyThinkingConfig] = tc
		}
	}
	for k, v := range inGC {
		if isNull(v) {
			delete(gc, k)
			continue
		}
		gc[k] = v
	}
	for k, v := range top {
		if isNull(v) {
			continue
		}
		switch k {
		case keySafetySettings:
			w.SafetySettings = v
		case keyTools:
			w.Tools = mergeTools(v, w.Tools)
		case keyToolConfig:
			w.ToolConfig = v
		case keyCachedContent:
			w.CachedContent = v
		}
	}
	if len(gc) == 0 {
		w.GenerationConfig = nil
	}
	return w
}

// callerTools translates the caller's tools, tool_choice and penalties
// (tools.go). What cannot be translated was refused before (Uncarried).
func callerTools(w *wireRequest, gc map[string]json.RawMessage, extra map[string]json.RawMessage) {
	if raw, ok := extra["tools"]; ok && !isNull(raw) {
		w.Tools, _ = declarations(raw)
	}
	if raw, ok := extra["tool_choice"]; ok && !isNull(raw) && w.Tools != nil {
		w.ToolConfig, _ = toolConfig(raw)
	}
	for from, to := range map[string]string{"frequency_penalty": "frequencyPenalty", "presence_penalty": "presencePenalty"} {
		if v, ok := extra[from]; ok && !isNull(v) {
			gc[to] = v
		}
	}
}

// mergeTools puts the route's own Gemini tools (googleSearch...) before
// the caller's function declarations.
func mergeTools(route, caller json.RawMessage) json.RawMessage {
	if len(caller) == 0 {
		return route
	}
	var a, b []json.RawMessage
	if json.Unmarshal(route, &a) != nil || json.Unmarshal(caller, &b) != nil {
		return route
	}
	out, err := json.Marshal(append(a, b...))
	if err != nil {
		return route
	}
	return out
}

// splitExtra sorts the route's Extra into top-level fields and
// generationConfig fields. A "generationConfig" object contributes its
// fields; a key given both ways takes the top-level key's value.
func splitExtra(extra map[string]json.RawMessage) (top, gc map[string]json.RawMessage) {
	top = map[string]json.RawMessage{}
	gc = map[string]json.RawMessage{}
	if raw, ok := extra[keyGenerationConfig]; ok {
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil {
			for k, v := range inner {
				gc[k] = v
			}
		}
	}
	for k, v := range extra {
		switch k {
		case keyGenerationConfig:
		case keySafetySettings, keyTools, keyToolConfig, keyCachedContent:
			top[k] = v
		default:
			gc[k] = v
		}
	}
	return top, gc
}

// responseFormat sets responseMimeType (and responseJsonSchema, converted
// to the part of JSON Schema Gemini takes: see jsonSchema) for an OpenAI
// response_format. Anything else, including "text", sets nothing.
func responseFormat(gc map[string]json.RawMessage, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(raw, &rf) != nil {
		return
	}
	switch rf.Type {
	case "json_object":
		setJSON(gc, "responseMimeType", "application/json")
	case "json_schema":
		setJSON(gc, "responseMimeType", "application/json")
		if s := rf.JSONSchema.Schema; len(s) > 0 && !isNull(s) {
			gc["responseJsonSchema"], _ = jsonSchema(s)
		}
	}
}

// thinkingFor maps an OpenAI reasoning_effort onto the thinkingConfig of
// the model's family, or returns nil when there is none to send:
//
//	effort         gemini-2.5 thinkingBudget   gemini-3.x thinkingLevel
//	none, minimal  0 (Pro: 128, its minimum)   MINIMAL (Pro: LOW)
//	low            1024                        LOW
//	medium         8192                        MEDIUM
//	high, xhigh    24576                       HIGH
//
// The budgets are those of Gemini's OpenAI-compatible endpoint. Pro models
// cannot turn thinking off (docs/PROVIDERS.md: "Budget 0 is invalid",
// MINIMAL rejected), so they get their least. Other models (Gemma, 2.0)
// take no thinkingConfig: sending one is a 400.
func thinkingFor(model, effort string) json.RawMessage {
	m := strings.ToLower(strings.TrimPrefix(model, "models/"))
	pro := strings.Contains(m, "-pro")
	switch strings.ToLower(effort) {
	case "":
		return nil
	case "none", "minimal":
		effort = "none"
	case "low", "medium":
		effort = strings.ToLower(effort)
	case "high", "xhigh":
		effort = "high"
	default:
		return nil
	}
	switch {
	case strings.Contains(m, "gemini-2.5"):
		budget := map[string]int{"none": 0, "low": 1024, "medium": 8192, "high": 24576}[effort]
		if pro && budget == 0 {
			budget = 128
		}
		return json.RawMessage(fmt.Sprintf(`{"thinkingBudget":%d}`, budget))
	case strings.Contains(m, "gemini-3"):
		level := map[string]string{"none": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"}[effort]
		if pro && level == "MINIMAL" {
			level = "LOW"
		}
		return json.RawMessage(fmt.Sprintf(`{"thinkingLevel":%q}`, level))
	}
	return nil
}

// setJSON sets gc[key] to v encoded. A value JSON cannot hold (a NaN
// temperature) is left out rather than failing the call.
func setJSON(gc map[string]json.RawMessage, key string, v any) {
	if b, err := json.Marshal(v); err == nil {
		gc[key] = b
	}
}

// isNull reports whether raw is the JSON literal null.
func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
