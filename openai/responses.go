package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/llm"
)

// The Responses API (issue 33): POST /v1/responses, what OpenAI's SDKs
// recommend for new code (client.responses.create), what the Vercel AI
// SDK's @ai-sdk/openai provider calls by default, and what the OpenAI
// Agents SDK uses. tollfree serves its stateless part: a request is turned
// into the chat request the gateway answers (DecodeResponsesRequest), and
// the answer into a response object or its typed stream events
// (responses_encode.go). What would need a response kept between requests
// (previous_response_id, store: true, item_reference) or a tool a free
// provider does not run (web search, file search...) is refused with a
// 400 that names it.

// ResponsesRequest is a decoded Responses request: the chat request it
// asks, and what the response object repeats of it.
type ResponsesRequest struct {
	// Model is the request's model: the chain (or route) to ask.
	Model string
	// Request is the chat request the gateway answers.
	Request *llm.Request
	// Echo holds the request's fields the response object repeats, each
	// as sent (JSON), by name: instructions, max_output_tokens,
	// temperature, top_p, tools, tool_choice, text, reasoning, metadata,
	// parallel_tool_calls, user.
	Echo map[string]json.RawMessage
}

// responsesRefused are the request fields DecodeResponsesRequest refuses
// when set, with why; responsesKnown those it reads (include, service_tier,
// safety_identifier and prompt_cache_key ask nothing of the answer and are
// not sent on).
var responsesRefused = map[string]string{
	"previous_response_id": "previous_response_id needs a response kept by the server; tollfree keeps none: send the whole conversation as input",
	"conversation":         "conversation needs conversations kept by the server; tollfree keeps none: send the whole conversation as input",
	"background":           "background responses need a response kept by the server; tollfree keeps none",
	"prompt":               "prompt templates are kept by OpenAI; send the instructions and input instead",
	"max_tool_calls":       "max_tool_calls is not supported",
	"top_logprobs":         "top_logprobs is not supported",
	"stream_options":       "stream_options is not supported on /v1/responses",
}

var responsesKnown = map[string]bool{
	"model": true, "input": true, "instructions": true, "tools": true, "tool_choice": true, "text": true,
	"max_output_tokens": true, "reasoning": true, "stream": true, "temperature": true, "top_p": true,
	"parallel_tool_calls": true, "store": true, "metadata": true, "user": true, "include": true,
	"truncation": true, "service_tier": true, "safety_identifier": true, "prompt_cache_key": true,
}

// DecodeResponsesRequest decodes a Responses request into the chat request
// it asks: instructions as the first system message; input, a string or a
// list of items (messages with input_text, input_image and input_file
// parts, an assistant's output_text, function_call and
// function_call_output items; reasoning items, the model's own words,
// are not sent on); function tools and tool_choice; text.format
// json_schema or json_object as response_format; max_output_tokens;
// reasoning.effort; temperature, top_p, parallel_tool_calls, stream. It
// checks what DecodeRequestWithin checks of the messages it makes (lim),
// and refuses with a *RequestError what it cannot serve.
func DecodeResponsesRequest(body []byte, lim Limits) (*ResponsesRequest, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, decodeError(err)
	}
	if top == nil {
		return nil, &RequestError{Message: "the request body must be a JSON object", Code: CodeInvalidType}
	}
	for k, v := range top {
		if why, refused := responsesRefused[k]; refused {
			if !isNull(v) {
				return nil, &RequestError{Param: k, Message: why, Code: CodeUnsupportedValue}
			}
			continue
		}
		if !responsesKnown[k] {
			return nil, &RequestError{Param: k, Message: strconv.Quote(k) + " is not a parameter tollfree's /v1/responses takes", Code: CodeUnsupportedValue}
		}
	}
	rr := &ResponsesRequest{Echo: map[string]json.RawMessage{}, Request: &llm.Request{}}
	req := rr.Request
	if err := str(top, "model", &rr.Model); err != nil {
		return nil, err
	}
	var store bool
	if err := boolean(top, "store", &store); err != nil {
		return nil, err
	}
	if store {
		return nil, &RequestError{Param: "store", Message: "store: true needs a response kept by the server; tollfree keeps none: send store: false (or leave it out) and the whole conversation as input", Code: CodeUnsupportedValue}
	}
	if err := boolean(top, "stream", &req.Stream); err != nil {
		return nil, err
	}
	var tr string
	if err := str(top, "truncation", &tr); err != nil {
		return nil, err
	}
	if tr != "" && tr != "disabled" {
		return nil, &RequestError{Param: "truncation", Message: "truncation must be disabled: tollfree never cuts a conversation without saying so (chains may keep the last exchanges: keep_exchanges)", Code: CodeUnsupportedValue}
	}
	var instructions string
	if err := str(top, "instructions", &instructions); err != nil {
		return nil, err
	}
	if instructions != "" {
		req.Messages = append(req.Messages, llm.Message{Role: "system", Content: instructions})
	}
	msgs, err := inputMessages(top["input"])
	if err != nil {
		return nil, err
	}
	req.Messages = append(req.Messages, msgs...)
	if len(req.Messages) == 0 {
		return nil, &RequestError{Param: "input", Message: "input is required: a string, or a list of input items", Code: CodeMissingParameter}
	}
	if lim.Messages > 0 && len(req.Messages) > lim.Messages {
		return nil, &RequestError{Param: "input", Message: fmt.Sprintf("Invalid 'input': array too long. Expected an array with maximum length %d, but got an array with length %d instead.", lim.Messages, len(req.Messages)), Code: CodeArrayTooLong}
	}
	if lim.ContentBytes > 0 && int64(req.TextLen()) > lim.ContentBytes {
		return nil, &RequestError{Param: "input", Message: fmt.Sprintf("Invalid 'input': its text is %d bytes, over this gateway's limit of %d bytes for a request. Shorten the conversation.", req.TextLen(), lim.ContentBytes), Code: CodeStringTooLong}
	}
	if err := responsesOptions(top, req); err != nil {
		return nil, err
	}
	if err := checkPassed(req); err != nil {
		return nil, err
	}
	for _, k := range []string{"instructions", "max_output_tokens", "temperature", "top_p", "tools", "tool_choice", "text", "reasoning", "metadata", "parallel_tool_calls", "user"} {
		if v, ok := top[k]; ok && !isNull(v) {
			rr.Echo[k] = cleanRaw(v)
		}
	}
	return rr, nil
}

// responsesOptions reads the request's options into req.
func responsesOptions(top map[string]json.RawMessage, req *llm.Request) error {
	if v, ok := top["max_output_tokens"]; ok && !isNull(v) {
		n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
		if err != nil || n < 1 {
			return &RequestError{Param: "max_output_tokens", Message: "max_output_tokens must be an integer of at least 1", Code: CodeInvalidValue}
		}
		req.MaxTokens = n
	}
	for _, f := range []struct {
		name     string
		dst      **float64
		min, max float64
	}{{"temperature", &req.Temperature, 0, 2}, {"top_p", &req.TopP, 0, 1}} {
		v, ok := top[f.name]
		if !ok || isNull(v) {
			continue
		}
		var x float64
		if json.Unmarshal(v, &x) != nil || !(x >= f.min && x <= f.max) {
			return &RequestError{Param: f.name, Message: fmt.Sprintf("%s must be a number between %g and %g", f.name, f.min, f.max), Code: CodeInvalidValue}
		}
		*f.dst = &x
	}
	if err := str(top, "user", &req.User); err != nil {
		return err
	}
	if v, ok := top["reasoning"]; ok && !isNull(v) {
		var r struct {
			Effort string `json:"effort"`
		}
		if json.Unmarshal(v, &r) != nil {
			return &RequestError{Param: "reasoning", Message: `reasoning must be an object such as {"effort": "low"}`, Code: CodeInvalidType}
		}
		req.ReasoningEffort = r.Effort
	}
	if v, ok := top["text"]; ok && !isNull(v) {
		rf, err := textFormat(v)
		if err != nil {
			return err
		}
		req.ResponseFormat = rf
	}
	if v, ok := top["tools"]; ok && !isNull(v) {
		tools, err := chatTools(v)
		if err != nil {
			return err
		}
		if tools != nil {
			req.Extra = map[string]json.RawMessage{"tools": tools}
		}
	}
	if v, ok := top["tool_choice"]; ok && !isNull(v) {
		tc, err := chatToolChoice(v)
		if err != nil {
			return err
		}
		if req.Extra == nil {
			req.Extra = map[string]json.RawMessage{}
		}
		req.Extra["tool_choice"] = tc
	}
	if v, ok := top["parallel_tool_calls"]; ok && !isNull(v) {
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return &RequestError{Param: "parallel_tool_calls", Message: "parallel_tool_calls must be a boolean", Code: CodeInvalidType}
		}
		if req.Extra == nil {
			req.Extra = map[string]json.RawMessage{}
		}
		req.Extra["parallel_tool_calls"] = json.RawMessage(strconv.FormatBool(b))
	}
	return nil
}

// textFormat turns text.format into a chat response_format; nil for text.
func textFormat(raw json.RawMessage) (json.RawMessage, error) {
	var t struct {
		Format json.RawMessage `json:"format"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return nil, &RequestError{Param: "text", Message: `text must be an object such as {"format": {"type": "json_schema", ...}}`, Code: CodeInvalidType}
	}
	if len(t.Format) == 0 || isNull(t.Format) {
		return nil, nil
	}
	var f struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict"`
	}
	if json.Unmarshal(t.Format, &f) != nil {
		return nil, &RequestError{Param: "text.format", Message: "text.format must be an object with a type", Code: CodeInvalidType}
	}
	switch f.Type {
	case "text":
		return nil, nil
	case "json_object":
		return json.RawMessage(`{"type":"json_object"}`), nil
	case "json_schema":
		js := map[string]any{"name": f.Name}
		if f.Name == "" {
			js["name"] = "response"
		}
		if f.Description != "" {
			js["description"] = f.Description
		}
		if len(f.Schema) > 0 && !isNull(f.Schema) {
			js["schema"] = json.RawMessage(cleanRaw(f.Schema))
		}
		if f.Strict != nil {
			js["strict"] = *f.Strict
		}
		b, err := json.Marshal(map[string]any{"type": "json_schema", "json_schema": js})
		if err != nil {
			return nil, &RequestError{Param: "text.format.schema", Message: "the schema is not JSON", Code: CodeInvalidJSON}
		}
		return b, nil
	}
	return nil, &RequestError{Param: "text.format.type", Message: strconv.Quote(f.Type) + " is not a format; use text, json_object or json_schema", Code: CodeInvalidValue}
}

// chatTools turns Responses function tools ({type, name, description,
// parameters, strict}) into chat tools; any other kind is refused.
func chatTools(raw json.RawMessage) (json.RawMessage, error) {
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, &RequestError{Param: "tools", Message: `tools must be an array of tools such as {"type": "function", "name": "...", "parameters": {...}}`, Code: CodeInvalidType}
	}
	if len(list) == 0 {
		return nil, nil
	}
	out := make([]map[string]any, 0, len(list))
	for i, t := range list {
		var typ, name string
		_ = json.Unmarshal(t["type"], &typ)
		_ = json.Unmarshal(t["name"], &name)
		param := "tools[" + strconv.Itoa(i) + "]"
		if typ != "function" {
			return nil, &RequestError{Param: param + ".type", Message: fmt.Sprintf("a %q tool runs on OpenAI's servers; tollfree's routes take function tools only", typ), Code: CodeUnsupportedValue}
		}
		if name == "" {
			return nil, &RequestError{Param: param + ".name", Message: "a function tool needs a name", Code: CodeMissingParameter}
		}
		fn := map[string]any{"name": name}
		for _, k := range []string{"description", "parameters", "strict"} {
			if v, ok := t[k]; ok && !isNull(v) {
				fn[k] = json.RawMessage(cleanRaw(v))
			}
		}
		out = append(out, map[string]any{"type": "function", "function": fn})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, &RequestError{Param: "tools", Message: "tools are not JSON", Code: CodeInvalidJSON}
	}
	return b, nil
}

// chatToolChoice turns a Responses tool_choice into a chat one.
func chatToolChoice(raw json.RawMessage) (json.RawMessage, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return raw, nil
		}
		return nil, &RequestError{Param: "tool_choice", Message: "tool_choice must be auto, none, required or a function", Code: CodeInvalidValue}
	}
	var f struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &f) != nil || f.Type != "function" || f.Name == "" {
		return nil, &RequestError{Param: "tool_choice", Message: `tool_choice must be auto, none, required or {"type": "function", "name": "..."}`, Code: CodeUnsupportedValue}
	}
	return json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": f.Name}})
}

// inputItem is one item of a Responses input list.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// inputMessages turns input into chat messages.
func inputMessages(raw json.RawMessage) ([]llm.Message, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []llm.Message{{Role: "user", Content: s}}, nil
	}
	var items []inputItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &RequestError{Param: "input", Message: "input must be a string or an array of input items", Code: CodeInvalidType}
	}
	var msgs []llm.Message
	for i, it := range items {
		param := "input[" + strconv.Itoa(i) + "]"
		typ := it.Type
		if typ == "" && it.Role != "" {
			typ = "message"
		}
		switch typ {
		case "message":
			m, err := inputMessage(it, param)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, m)
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return nil, &RequestError{Param: param, Message: param + ": a function_call needs its call_id and name", Code: CodeMissingParameter}
			}
			call, _ := json.Marshal([]map[string]any{{"id": it.CallID, "type": "function", "function": map[string]string{"name": it.Name, "arguments": it.Arguments}}})
			// Calls in a row are one assistant turn's parallel calls.
			if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" && len(msgs[n-1].ToolCalls) > 0 {
				var prev []json.RawMessage
				_ = json.Unmarshal(msgs[n-1].ToolCalls, &prev)
				var this []json.RawMessage
				_ = json.Unmarshal(call, &this)
				call, _ = json.Marshal(append(prev, this...))
				msgs[n-1].ToolCalls = call
				continue
			}
			msgs = append(msgs, llm.Message{Role: "assistant", ToolCalls: call})
		case "function_call_output":
			if it.CallID == "" {
				return nil, &RequestError{Param: param + ".call_id", Message: param + ": a function_call_output needs the call_id of its call", Code: CodeMissingParameter}
			}
			text, err := outputText(it.Output, param)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, llm.Message{Role: "tool", ToolCallID: it.CallID, Content: text})
		case "reasoning":
			// The model's own reasoning from an earlier answer: no route
			// takes it back, and it asks nothing of the next answer.
		case "item_reference":
			return nil, &RequestError{Param: param, Message: param + ": item_reference needs the response kept by the server; tollfree keeps none: send the item itself (the AI SDK: providerOptions.openai.store = false)", Code: CodeUnsupportedValue}
		default:
			return nil, &RequestError{Param: param + ".type", Message: fmt.Sprintf("%s: input items of type %q are not supported; use message, function_call and function_call_output", param, typ), Code: CodeUnsupportedValue}
		}
	}
	return msgs, nil
}

// inputMessage turns a message item into a chat message: its string
// content, or its parts as chat content parts.
func inputMessage(it inputItem, param string) (llm.Message, error) {
	switch it.Role {
	case "user", "system", "developer", "assistant":
	default:
		return llm.Message{}, &RequestError{Param: param + ".role", Message: param + ".role must be user, system, developer or assistant", Code: CodeInvalidValue}
	}
	m := llm.Message{Role: it.Role}
	var s string
	if json.Unmarshal(it.Content, &s) == nil {
		m.Content = s
		return m, nil
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(it.Content, &parts) != nil {
		return m, &RequestError{Param: param + ".content", Message: param + ".content must be a string or an array of content parts", Code: CodeInvalidType}
	}
	chat := make([]map[string]any, 0, len(parts))
	var texts []string
	media := false
	for j, p := range parts {
		var typ, text string
		_ = json.Unmarshal(p["type"], &typ)
		pp := param + ".content[" + strconv.Itoa(j) + "]"
		switch typ {
		case "input_text", "output_text", "text":
			_ = json.Unmarshal(p["text"], &text)
			texts = append(texts, text)
			chat = append(chat, map[string]any{"type": "text", "text": text})
		case "refusal":
			_ = json.Unmarshal(p["refusal"], &text)
			texts = append(texts, text)
			chat = append(chat, map[string]any{"type": "text", "text": text})
		case "input_image":
			var url, detail string
			_ = json.Unmarshal(p["image_url"], &url)
			_ = json.Unmarshal(p["detail"], &detail)
			if url == "" {
				return m, &RequestError{Param: pp + ".image_url", Message: pp + ": an input_image needs an image_url (a data: URL or an https URL); uploaded files (file_id) are kept by OpenAI", Code: CodeUnsupportedValue}
			}
			img := map[string]string{"url": url}
			if detail != "" {
				img["detail"] = detail
			}
			chat = append(chat, map[string]any{"type": "image_url", "image_url": img})
			media = true
		case "input_file":
			var data, name string
			_ = json.Unmarshal(p["file_data"], &data)
			_ = json.Unmarshal(p["filename"], &name)
			if data == "" {
				return m, &RequestError{Param: pp, Message: pp + ": an input_file needs file_data (a data: URL); uploaded files (file_id) and file_url are not fetched", Code: CodeUnsupportedValue}
			}
			chat = append(chat, map[string]any{"type": "file", "file": map[string]string{"file_data": data, "filename": name}})
			media = true
		default:
			return m, &RequestError{Param: pp + ".type", Message: fmt.Sprintf("%s: content parts of type %q are not supported", pp, typ), Code: CodeUnsupportedValue}
		}
	}
	m.Content = strings.Join(texts, "\n")
	if media || len(chat) > 1 {
		m.Parts, _ = json.Marshal(chat)
		m.Parts = cleanRaw(m.Parts)
	}
	return m, nil
}

// outputText is a function_call_output's output: a string, or the text of
// its parts.
func outputText(raw json.RawMessage, param string) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", &RequestError{Param: param + ".output", Message: param + ".output must be a string", Code: CodeInvalidType}
	}
	var texts []string
	for _, p := range parts {
		if p.Type != "input_text" && p.Type != "output_text" {
			return "", &RequestError{Param: param + ".output", Message: param + ".output may hold text parts only", Code: CodeUnsupportedValue}
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

func str(top map[string]json.RawMessage, k string, dst *string) error {
	v, ok := top[k]
	if !ok || isNull(v) {
		return nil
	}
	if json.Unmarshal(v, dst) != nil {
		return &RequestError{Param: k, Message: k + " must be a string", Code: CodeInvalidType}
	}
	return nil
}

func boolean(top map[string]json.RawMessage, k string, dst *bool) error {
	v, ok := top[k]
	if !ok || isNull(v) {
		return nil
	}
	if json.Unmarshal(v, dst) != nil {
		return &RequestError{Param: k, Message: k + " must be a boolean", Code: CodeInvalidType}
	}
	return nil
}
