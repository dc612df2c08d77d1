package openai

import (
	"github.com/tollfree/tollfree/llm"
)

// decodeChunkFast decodes the common streamed chunk, one delta of text or
// the last one with its usage, without reflection: the profile of a
// streamed answer showed a fifth of the gateway's CPU in encoding/json
// decoding chunks. It walks the fields it needs over the bytes validJSON
// has checked, and gives up (ok false) at anything unusual — an error,
// content parts, Groq's usage, a value of an unexpected type, a key in
// other letter case or given twice in a usage — so that DecodeChunk's
// reflective path, the reference, decides those. FuzzDecodeChunkFast holds
// the two to the same answer.
func decodeChunkFast(data []byte) (c llm.Chunk, ok bool) {
	if len(data) == 0 || data[0] != '{' || !validJSON(data) {
		return llm.Chunk{}, false
	}
	var usage *wireUsage
	ok = fields(data, func(k, v []byte) bool {
		switch string(k) {
		case `"choices"`:
			return fastChoices(v, &c)
		case `"usage"`:
			if usage != nil {
				return false // encoding/json would merge the two
			}
			if isNull(v) {
				return true
			}
			usage = &wireUsage{}
			return fastChunkUsage(v, usage)
		case `"error"`, `"x_groq"`:
			return isNull(v)
		case `"object"`:
			return string(v) == `"chat.completion.chunk"`
		case `"id"`, `"created"`, `"model"`, `"system_fingerprint"`, `"service_tier"`, `"provider"`:
			return true
		}
		return !foldsToKnown(k)
	})
	if ok && usage != nil {
		u := usage.usage()
		c.Usage = &u
	}
	return c, ok
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
