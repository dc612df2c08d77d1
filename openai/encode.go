package openai

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/tollfree/tollfree/llm"
)

// adapterOwned are the fields AppendRequest writes from its arguments alone;
// a route's extra fields cannot replace them.
func adapterOwned(key string) bool {
	switch key {
	case "model", "messages", "stream", "stream_options":
		return true
	}
	return false
}

// AppendRequest appends the body of a chat completion request for an
// OpenAI-compatible upstream to dst and returns the extended slice.
//
// The body names model, carries req's messages and parameters, and writes
// "stream": true and stream_options {"include_usage": true} only when
// req.Stream and req.IncludeUsage ask for them. req.Extra follows verbatim.
// extra (the route's fields) overrides both the parameters and req.Extra
// key by key; an extra value of JSON null removes the field instead (for a
// model that refuses, say, temperature), and null values of req.Extra are
// left out as well. extra cannot replace model,
// messages, stream or stream_options. Keys of req.Extra and extra are
// written in sorted order, so equal requests give equal bodies.
//
// A message is {"role","content"} plus name, tool_calls and tool_call_id
// when set. Content is the original parts array when the message had one,
// else the string; an assistant message with tool calls and no content has
// "content": null. An assistant message with Prefix set gets "prefix": true:
// Mistral's continuation flag, which makes the model continue that message
// rather than answer it (used to resume a cut stream on another route).
// Other upstreams refuse the unknown field (Groq, Cerebras) or ignore it:
// the adapter clears Prefix for them (provider/openaicompat), and a plain
// trailing assistant message is their prefill.
func AppendRequest(dst []byte, model string, req *llm.Request, extra map[string]json.RawMessage) []byte {
	dst = append(dst, `{"model":`...)
	dst = appendString(dst, model)
	dst = append(dst, `,"messages":[`...)
	for i := range req.Messages {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendMessage(dst, &req.Messages[i])
	}
	dst = append(dst, ']')
	free := func(key string) bool { _, ok := extra[key]; return !ok }
	if req.MaxTokens > 0 && free("max_tokens") {
		dst = append(dst, `,"max_tokens":`...)
		dst = strconv.AppendInt(dst, int64(req.MaxTokens), 10)
	}
	if req.Temperature != nil && free("temperature") {
		dst = append(dst, `,"temperature":`...)
		dst = appendFloat(dst, *req.Temperature)
	}
	if req.TopP != nil && free("top_p") {
		dst = append(dst, `,"top_p":`...)
		dst = appendFloat(dst, *req.TopP)
	}
	if len(req.Stop) > 0 && free("stop") {
		dst = append(dst, `,"stop":[`...)
		for i, s := range req.Stop {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, s)
		}
		dst = append(dst, ']')
	}
	if req.Seed != nil && free("seed") {
		dst = append(dst, `,"seed":`...)
		dst = strconv.AppendInt(dst, *req.Seed, 10)
	}
	if req.ResponseFormat != nil && free("response_format") {
		dst = append(dst, `,"response_format":`...)
		dst = append(dst, req.ResponseFormat...)
	}
	if req.ReasoningEffort != "" && free("reasoning_effort") {
		dst = append(dst, `,"reasoning_effort":`...)
		dst = appendString(dst, req.ReasoningEffort)
	}
	if req.User != "" && free("user") {
		dst = append(dst, `,"user":`...)
		dst = appendString(dst, req.User)
	}
	if req.Stream {
		dst = append(dst, `,"stream":true`...)
		if req.IncludeUsage {
			dst = append(dst, `,"stream_options":{"include_usage":true}`...)
		}
	}
	dst = appendFields(dst, req.Extra, func(k string) bool { return free(k) && !adapterOwned(k) })
	dst = appendFields(dst, extra, func(k string) bool { return !adapterOwned(k) })
	return append(dst, '}')
}

// appendFields appends the fields of m that keep says to keep and that are
// not null, in key order.
func appendFields(dst []byte, m map[string]json.RawMessage, keep func(string) bool) []byte {
	if len(m) == 0 {
		return dst
	}
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		if isNull(v) || !keep(k) {
			continue
		}
		dst = append(dst, ',')
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = append(dst, v...)
	}
	return dst
}

func appendMessage(dst []byte, m *llm.Message) []byte {
	dst = append(dst, `{"role":`...)
	dst = appendString(dst, m.Role)
	dst = append(dst, `,"content":`...)
	switch {
	case m.Parts != nil:
		dst = append(dst, m.Parts...)
	case m.Content == "" && m.Role == "assistant" && m.ToolCalls != nil:
		dst = append(dst, "null"...)
	default:
		dst = appendString(dst, m.Content)
	}
	if m.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, m.Name)
	}
	if m.ToolCalls != nil {
		dst = append(dst, `,"tool_calls":`...)
		dst = append(dst, m.ToolCalls...)
	}
	if m.ToolCallID != "" {
		dst = append(dst, `,"tool_call_id":`...)
		dst = appendString(dst, m.ToolCallID)
	}
	if m.Prefix && m.Role == "assistant" {
		dst = append(dst, `,"prefix":true`...)
	}
	return append(dst, '}')
}
