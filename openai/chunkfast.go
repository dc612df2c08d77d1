package openai

import (
	"encoding/json"

	"github.com/tollfree/tollfree/llm"
)

// decodeChunkFast decodes the common streamed chunk, one delta of text,
// without reflection: the profile of a streamed answer showed a fifth of the
// gateway's CPU in encoding/json decoding chunks. It walks the fields it
// needs over the bytes json.Valid has checked, and gives up (ok false) at
// anything unusual — usage, an error, content parts, a value of an
// unexpected type, a key in other letter case — so that DecodeChunk's
// reflective path, the reference, decides those. FuzzDecodeChunkFast holds
// the two to the same answer.
func decodeChunkFast(data []byte) (c llm.Chunk, ok bool) {
	if len(data) == 0 || data[0] != '{' || !json.Valid(data) {
		return llm.Chunk{}, false
	}
	ok = fields(data, func(k, v []byte) bool {
		switch string(k) {
		case `"choices"`:
			return fastChoices(v, &c)
		case `"usage"`, `"error"`, `"x_groq"`:
			return isNull(v)
		case `"object"`:
			return string(v) == `"chat.completion.chunk"`
		case `"id"`, `"created"`, `"model"`, `"system_fingerprint"`, `"service_tier"`, `"provider"`:
			return true
		}
		return !foldsToKnown(k)
	})
	return c, ok
}

// foldsToKnown reports whether a key that is not one of the exact names
// above matches one of them in other letter case, as encoding/json would.
func foldsToKnown(k []byte) bool {
	for _, name := range [...]string{`"choices"`, `"usage"`, `"error"`, `"x_groq"`, `"object"`, `"delta"`, `"finish_reason"`,
		`"role"`, `"content"`, `"reasoning"`, `"reasoning_content"`, `"tool_calls"`} {
		if len(k) == len(name) && equalFoldASCII(k, name) {
			return true
		}
	}
	return false
}

func equalFoldASCII(a []byte, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// fastChoices reads the first choice of the choices array.
func fastChoices(v []byte, c *llm.Chunk) bool {
	if isNull(v) {
		return true
	}
	if v[0] != '[' {
		return false
	}
	i := skipSpace(v, 1)
	if i < len(v) && v[i] == ']' {
		return true
	}
	end := skipValue(v, i)
	el := v[i:end]
	if len(el) == 0 || el[0] != '{' {
		return false
	}
	return fields(el, func(k, fv []byte) bool {
		switch string(k) {
		case `"delta"`:
			return fastDelta(fv, c)
		case `"finish_reason"`:
			return fastString(fv, &c.FinishReason)
		case `"index"`, `"logprobs"`:
			return true
		}
		return !foldsToKnown(k)
	})
}

// fastDelta reads a delta: role, text content, reasoning and tool calls.
func fastDelta(v []byte, c *llm.Chunk) bool {
	if isNull(v) {
		return true
	}
	var reasoning, reasoningContent string
	ok := fields(v, func(k, fv []byte) bool {
		switch string(k) {
		case `"role"`:
			return fastString(fv, &c.Role)
		case `"content"`:
			return fastString(fv, &c.Content)
		case `"reasoning"`:
			return fastString(fv, &reasoning)
		case `"reasoning_content"`:
			return fastString(fv, &reasoningContent)
		case `"tool_calls"`:
			if !isNull(fv) {
				c.ToolCalls = cleanRaw(fv)
			}
			return true
		case `"refusal"`, `"function_call"`:
			return isNull(fv)
		}
		return !foldsToKnown(k)
	})
	c.Reasoning = reasoning
	if c.Reasoning == "" {
		c.Reasoning = reasoningContent
	}
	return ok
}

// fastString decodes a string or null into dst; anything else is not for
// the fast path.
func fastString(v []byte, dst *string) bool {
	switch {
	case isNull(v):
		return true
	case v[0] == '"':
		*dst = unquote(v)
		return true
	}
	return false
}
