package openai

import (
	"github.com/tollfree/tollfree/llm"
)

// decodeChunkFast decodes the common streamed chunk, one delta of text or
// the last one with its usage, without reflection: the profile of a
// streamed answer showed a fifth of the gateway's CPU in encoding/json
// decoding chunks. It checks the JSON grammar (as json.Valid would, see
// validValue) and reads the fields it needs in the same single pass, and
// gives up (ok false) at anything unusual — an error, content parts, Groq's
// usage, a value of an unexpected type, a key in other letter case or given
// twice in a usage — so that DecodeChunk's reflective path, the reference,
// decides those. FuzzDecodeChunkFast holds the two to the same answer.
func decodeChunkFast(data []byte) (c llm.Chunk, ok bool) {
	if len(data) == 0 || data[0] != '{' {
		return llm.Chunk{}, false
	}
	var usage *wireUsage
	end, ok := objectFields(data, 0, 0, func(k []byte, i int) (int, bool) {
		switch string(k) {
		case `"choices"`:
			return chunkChoices(data, i, &c)
		case `"usage"`:
			if usage != nil {
				return i, false // encoding/json would merge the two
			}
			end, ok := validValue(data, i, 1)
			if !ok || isNull(data[i:end]) {
				return end, ok
			}
			usage = &wireUsage{}
			return end, fastChunkUsage(data[i:end], usage)
		case `"error"`, `"x_groq"`:
			return nullValue(data, i, 1)
		case `"object"`:
			end, ok := validValue(data, i, 1)
			return end, ok && string(data[i:end]) == `"chat.completion.chunk"`
		case `"id"`, `"created"`, `"model"`, `"system_fingerprint"`, `"service_tier"`, `"provider"`:
			return validValue(data, i, 1)
		}
		if foldsToKnown(k) {
			return i, false
		}
		return validValue(data, i, 1)
	})
	if !ok || skipSpace(data, end) != len(data) {
		return llm.Chunk{}, false
	}
	if usage != nil {
		u := usage.usage()
		c.Usage = &u
	}
	return c, true
}

// objectFields checks the object starting at b[i] and calls fn with each
// key (quoted, raw) and the index of its value; fn returns the index after
// the value, which it must have checked (validValue, when it does not read
// the value itself), or ok false to give up. It returns the index after
// the object.
func objectFields(b []byte, i, depth int, fn func(k []byte, i int) (int, bool)) (int, bool) {
	if i >= len(b) || b[i] != '{' || depth >= maxValidDepth {
		return i, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		kend, ok := validString(b, i)
		if !ok {
			return kend, false
		}
		k := b[i:kend]
		if i = skipSpace(b, kend); i >= len(b) || b[i] != ':' {
			return i, false
		}
		if i, ok = fn(k, skipSpace(b, i+1)); !ok {
			return i, false
		}
		var end bool
		if i, end, ok = afterItem(b, i, '}'); !ok || end {
			return i, ok
		}
	}
}

// afterItem steps past what follows an item of an object or an array: a
// comma, when more items follow, or its closing byte close, when it ends
// (end). ok is false on anything else.
func afterItem(b []byte, i int, close byte) (next int, end, ok bool) {
	if i = skipSpace(b, i); i >= len(b) {
		return i, false, false
	}
	switch b[i] {
	case ',':
		return skipSpace(b, i+1), false, true
	case close:
		return i + 1, true, true
	}
	return i, false, false
}

// nullValue checks the value at b[i] and takes it only when it is null.
func nullValue(b []byte, i, depth int) (int, bool) {
	end, ok := validValue(b, i, depth)
	return end, ok && isNull(b[i:end])
}

// stringValue reads the string or null at b[i] into dst; anything else is
// not for the fast path.
func stringValue(b []byte, i int, dst *string) (int, bool) {
	if i < len(b) && b[i] == '"' {
		end, ok := validString(b, i)
		if ok {
			*dst = unquote(b[i:end])
		}
		return end, ok
	}
	return nullValue(b, i, 0)
}

// chunkChoices reads the first choice of the choices array at b[i] and
// checks the others.
func chunkChoices(b []byte, i int, c *llm.Chunk) (int, bool) {
	if i >= len(b) || b[i] != '[' {
		return nullValue(b, i, 1)
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	i, ok := objectFields(b, i, 2, func(k []byte, j int) (int, bool) {
		switch string(k) {
		case `"delta"`:
			return chunkDelta(b, j, c)
		case `"finish_reason"`:
			return stringValue(b, j, &c.FinishReason)
		case `"index"`, `"logprobs"`:
			return validValue(b, j, 3)
		}
		if foldsToKnown(k) {
			return j, false
		}
		return validValue(b, j, 3)
	})
	for ok {
		if i = skipSpace(b, i); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ']':
			return i + 1, true
		case ',':
			i, ok = validValue(b, skipSpace(b, i+1), 2)
		default:
			return i, false
		}
	}
	return i, false
}

// chunkDelta reads a delta: role, text content, reasoning and tool calls.
func chunkDelta(b []byte, i int, c *llm.Chunk) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return nullValue(b, i, 3)
	}
	var reasoning, reasoningContent string
	end, ok := objectFields(b, i, 3, func(k []byte, j int) (int, bool) {
		switch string(k) {
		case `"role"`:
			return stringValue(b, j, &c.Role)
		case `"content"`:
			return stringValue(b, j, &c.Content)
		case `"reasoning"`:
			return stringValue(b, j, &reasoning)
		case `"reasoning_content"`:
			return stringValue(b, j, &reasoningContent)
		case `"tool_calls"`:
			end, ok := validValue(b, j, 4)
			if ok && !isNull(b[j:end]) {
				c.ToolCalls = cleanRaw(b[j:end])
			}
			return end, ok
		case `"refusal"`, `"function_call"`:
			return nullValue(b, j, 4)
		}
		if foldsToKnown(k) {
			return j, false
		}
		return validValue(b, j, 4)
	})
	c.Reasoning = reasoning
	if c.Reasoning == "" {
		c.Reasoning = reasoningContent
	}
	return end, ok
}

// fastChunkUsage reads a chunk's usage: its token counts as integers, and
// the details objects OpenAI sends with them. A key given twice, or
// anything but an integer or null where a count is, is not for the fast
// path.
func fastChunkUsage(v []byte, u *wireUsage) bool {
	var seen uint8
	once := func(bit uint8) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	return fields(v, func(k, fv []byte) bool {
		switch string(k) {
		case `"prompt_tokens"`:
			return once(1) && fastInt(fv, &u.PromptTokens)
		case `"completion_tokens"`:
			return once(2) && fastInt(fv, &u.CompletionTokens)
		case `"total_tokens"`:
			return once(4) && fastInt(fv, &u.TotalTokens)
		case `"completion_tokens_details"`:
			if !once(8) {
				return false
			}
			if isNull(fv) {
				return true
			}
			u.CompletionTokensDetails = &struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			}{}
			return fastOnceDetail(fv, `"reasoning_tokens"`, &u.CompletionTokensDetails.ReasoningTokens)
		case `"prompt_tokens_details"`:
			if !once(16) {
				return false
			}
			if isNull(fv) {
				return true
			}
			u.PromptTokensDetails = &struct {
				CachedTokens int `json:"cached_tokens"`
			}{}
			return fastOnceDetail(fv, `"cached_tokens"`, &u.PromptTokensDetails.CachedTokens)
		}
		return !foldsToResponseKey(k)
	})
}

// fastOnceDetail reads one integer field of a usage details object, given
// at most once.
func fastOnceDetail(v []byte, key string, dst *int) bool {
	seen := false
	return fields(v, func(k, fv []byte) bool {
		if string(k) == key {
			if seen {
				return false
			}
			seen = true
			return fastInt(fv, dst)
		}
		return !foldsToResponseKey(k)
	})
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
