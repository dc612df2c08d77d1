package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/llm"
)

// Tools (issue 33). OpenAI's function tools become one Gemini tool of
// functionDeclarations, each function's parameters converted to the part
// of JSON Schema Gemini takes (parametersJsonSchema, converted as
// responseJsonSchema is: schema.go; the gateway checks every call's
// arguments against the whole schema anyway, package typed). tool_choice
// becomes toolConfig.functionCallingConfig: auto AUTO, none NONE,
// required ANY, a named function ANY with allowedFunctionNames.

// openAITool is one of the caller's tools.
type openAITool struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// wireDeclaration is a functionDeclaration.
type wireDeclaration struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// functionName is what Gemini takes as a function's name: a letter or an
// underscore, then letters, digits, underscores, dots, colons and dashes,
// 64 at most (https://ai.google.dev/api/caching#FunctionDeclaration).
var functionName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`)

// declarations translates the caller's tools; why says what cannot be
// carried ("" when all can).
func declarations(raw json.RawMessage) (json.RawMessage, string) {
	var tools []openAITool
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, "tools is not an array of tools"
	}
	if len(tools) == 0 {
		return nil, ""
	}
	decls := make([]wireDeclaration, 0, len(tools))
	for i, t := range tools {
		if t.Type != "function" || t.Function == nil {
			return nil, fmt.Sprintf("tools[%d] is of type %q; Gemini takes function tools only", i, t.Type)
		}
		if !functionName.MatchString(t.Function.Name) {
			return nil, fmt.Sprintf("tools[%d].function.name is not a name Gemini takes (a letter or _, then letters, digits, _ . : -, 64 at most)", i)
		}
		d := wireDeclaration{Name: t.Function.Name, Description: t.Function.Description}
		if p := t.Function.Parameters; len(p) > 0 && !isNull(p) {
			d.Parameters, _ = jsonSchema(p)
		}
		decls = append(decls, d)
	}
	out, err := json.Marshal([]map[string]any{{"functionDeclarations": decls}})
	if err != nil {
		return nil, "tools cannot be encoded"
	}
	return out, ""
}

// toolConfig translates tool_choice; why says what cannot be carried.
func toolConfig(raw json.RawMessage) (json.RawMessage, string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		mode := map[string]string{"auto": "AUTO", "none": "NONE", "required": "ANY"}[s]
		if mode == "" {
			return nil, fmt.Sprintf("tool_choice %q is not auto, none or required", s)
		}
		return json.RawMessage(`{"functionCallingConfig":{"mode":"` + mode + `"}}`), ""
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &named) != nil || named.Type != "function" || named.Function.Name == "" {
		return nil, "tool_choice is neither a mode nor a named function"
	}
	return json.RawMessage(`{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":[` + strconv.Quote(named.Function.Name) + `]}}`), ""
}

// callerFields are the caller's fields (Request.Extra) the adapter
// translates, and those it may leave out because they ask nothing of the
// answer (metadata and hints for OpenAI's own servers).
var callerFields = map[string]func(v json.RawMessage) string{
	"tools":       nil, // declarations
	"tool_choice": nil, // toolConfig
	"parallel_tool_calls": func(v json.RawMessage) string {
		if string(bytes.TrimSpace(v)) == "false" {
			return "parallel_tool_calls false (Gemini may call several functions at once)"
		}
		return ""
	},
	"frequency_penalty": nil, // frequencyPenalty
	"presence_penalty":  nil, // presencePenalty
	"logprobs": func(v json.RawMessage) string {
		if string(bytes.TrimSpace(v)) == "true" {
			return "logprobs"
		}
		return ""
	},
	"metadata":          ignore,
	"store":             ignore,
	"service_tier":      ignore,
	"prompt_cache_key":  ignore,
	"safety_identifier": ignore,
	"modalities": func(v json.RawMessage) string {
		var m []string
		if json.Unmarshal(v, &m) != nil || len(m) != 1 || m[0] != "text" {
			return "modalities other than text"
		}
		return ""
	},
}

func ignore(json.RawMessage) string { return "" }

// Uncarried says what of req this adapter cannot send to Gemini, "" when
// it can send it all (issue 33: nothing of a request is dropped silently;
// the router skips the route for a request it cannot carry, with this
// reason). It names fields and part types, never the request's text. A
// plain text request costs a few map lookups.
func (c *Client) Uncarried(req *llm.Request) string {
	for k, v := range req.Extra {
		if isNull(v) {
			continue
		}
		check, known := callerFields[k]
		if !known {
			return "the field " + strconv.Quote(k)
		}
		if check != nil {
			if why := check(v); why != "" {
				return why
			}
		}
	}
	if raw, ok := req.Extra["tools"]; ok && !isNull(raw) {
		if _, why := declarations(raw); why != "" {
			return why
		}
	}
	if raw, ok := req.Extra["tool_choice"]; ok && !isNull(raw) {
		if _, why := toolConfig(raw); why != "" {
			return why
		}
		// A choice with no tool to choose from asks nothing unless it
		// asks for a call ("required", a named function), which no
		// declaration could answer.
		if t, has := req.Extra["tools"]; (!has || isNull(t) || string(bytes.TrimSpace(t)) == "[]") && !strings.Contains(string(raw), `"none"`) && !strings.Contains(string(raw), `"auto"`) {
			return "tool_choice asks for a function call, but the request has no tools"
		}
	}
	calls := map[string]bool{}
	for i := range req.Messages {
		m := &req.Messages[i]
		at := "messages[" + strconv.Itoa(i) + "]"
		if len(m.ToolCalls) > 0 {
			tcs := parseToolCalls(m.ToolCalls)
			if tcs == nil {
				return at + ".tool_calls does not parse"
			}
			for j, tc := range tcs {
				if tc.Function.Name == "" {
					return fmt.Sprintf("%s.tool_calls[%d] names no function", at, j)
				}
				if _, ok := argsObject(tc.Function.Arguments); !ok {
					return fmt.Sprintf("%s.tool_calls[%d].function.arguments is not a JSON object", at, j)
				}
				calls[tc.ID] = true
			}
		}
		if m.Role == "tool" && !calls[m.ToolCallID] && m.Name == "" {
			return at + " answers a tool call that is not in the conversation"
		}
		if len(m.Parts) > 0 {
			if why := c.uncarriedParts(m, at); why != "" {
				return why
			}
		}
	}
	return ""
}

// uncarriedParts says which content part of m Gemini cannot take.
func (c *Client) uncarriedParts(m *llm.Message, at string) string {
	parts, err := llm.ParseParts(m.Parts)
	if err != nil {
		return at + ".content does not parse"
	}
	for j, p := range parts {
		pat := at + ".content[" + strconv.Itoa(j) + "]"
		if p.Type != llm.PartText && (m.Role == "system" || m.Role == "developer" || m.Role == "assistant" || m.Role == "tool") {
			return pat + ": a " + p.Type + " part in a " + m.Role + " message"
		}
		switch p.Type {
		case llm.PartText:
		case llm.PartImage:
			switch {
			case p.Remote() && c.fetch.allowed(p.URL):
			case p.Remote():
				return pat + ": an image given by URL (tollfree fetches no URL a caller sent unless media.fetch_hosts names its host)"
			default:
				if _, ok := dataURL(p.URL); !ok {
					return pat + ": an image that is not a data: URL of PNG, JPEG, WebP, HEIC or HEIF"
				}
			}
		case llm.PartAudio:
			if _, ok := audioMIME(p.Format); !ok || p.Data == "" {
				return pat + ": audio of a format Gemini does not take (" + strconv.Quote(p.Format) + ")"
			}
		case llm.PartFile:
			if _, ok := dataURL(p.Data); !ok {
				return pat + ": a file that is not a data: URL Gemini takes (a PDF or text); uploaded files are not carried"
			}
		default:
			return pat + ": a part of type " + strconv.Quote(p.Type)
		}
	}
	return ""
}
