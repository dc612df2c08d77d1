package openai

import (
	"encoding/json"
	"strconv"
)

// responseKeys are the names the reflective decoder of a chat.completion
// matches (case-insensitively); a key that folds to one of them in other
// letter case sends the answer to that decoder.
var responseKeys = [...]string{`"id"`, `"created"`, `"model"`, `"choices"`, `"usage"`, `"error"`, `"message"`, `"delta"`,
	`"finish_reason"`, `"role"`, `"content"`, `"reasoning"`, `"reasoning_content"`, `"tool_calls"`,
	`"prompt_tokens"`, `"completion_tokens"`, `"total_tokens"`, `"completion_tokens_details"`,
	`"prompt_tokens_details"`, `"reasoning_tokens"`, `"cached_tokens"`}

// fields calls fn on each field of the object v until fn returns false. It
// reports whether v is an object and every call returned true.
func fields(v []byte, fn func(k, fv []byte) bool) bool {
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	ok := true
	_ = eachField(v, func(k, fv []byte) {
		if ok {
			ok = fn(k, fv)
		}
	})
	return ok
}

func foldsToResponseKey(k []byte) bool {
	for _, name := range responseKeys {
		if len(k) == len(name) && equalFoldASCII(k, name) {
			return true
		}
	}
	return false
}

// decodeResponseFast fills w from a plain chat.completion without
// reflection, as decodeChunkFast does for chunks (a non-streamed answer is
// decoded on every request). It gives up (false) at anything unusual —
// an error object, content parts, a number that is not an integer, a key
// in other letter case — and DecodeResponse's reflective path decides.
// FuzzDecodeResponseFast holds the two to the same result.
func decodeResponseFast(body []byte, w *wireResponse) bool {
	if len(body) == 0 || body[0] != '{' || !validJSON(body) {
		return false
	}
	return fields(body, func(k, v []byte) bool {
		switch string(k) {
		case `"id"`:
			return fastString(v, &w.ID)
		case `"model"`:
			return fastString(v, &w.Model)
		case `"created"`:
			return fastInt64(v, &w.Created)
		case `"choices"`:
			return fastResponseChoices(v, w)
		case `"usage"`:
			return fastUsage(v, w)
		case `"error"`:
			return isNull(v)
		}
		return !foldsToResponseKey(k)
	})
}

func fastResponseChoices(v []byte, w *wireResponse) bool {
	if isNull(v) {
		w.Choices = nil
		return true
	}
	if v[0] != '[' {
		return false
	}
	i := skipSpace(v, 1)
	if i < len(v) && v[i] == ']' {
		w.Choices = nil
		return true
	}
	end := skipValue(v, i)
	el := v[i:end]
	if len(el) == 0 || el[0] != '{' {
		return false
	}
	var c wireChoice
	ok := fields(el, func(k, fv []byte) bool {
		switch string(k) {
		case `"message"`:
			return fastMessage(fv, &c.Message)
		case `"finish_reason"`:
			return fastString(fv, &c.FinishReason)
		case `"delta"`:
			return isNull(fv)
		}
		return !foldsToResponseKey(k)
	})
	w.Choices = []wireChoice{c}
	return ok
}

func fastMessage(v []byte, m *wireDelta) bool {
	if isNull(v) {
		return true
	}
	return fields(v, func(k, fv []byte) bool {
		switch string(k) {
		case `"role"`:
			return fastString(fv, &m.Role)
		case `"content"`:
			return fastString(fv, &m.Content.text)
		case `"reasoning"`:
			return fastString(fv, &m.Reasoning)
		case `"reasoning_content"`:
			return fastString(fv, &m.ReasoningContent)
		case `"tool_calls"`:
			m.ToolCalls = json.RawMessage(fv)
			return true
		}
		return !foldsToResponseKey(k)
	})
}

func fastUsage(v []byte, w *wireResponse) bool {
	if isNull(v) {
		return true
	}
	u := &wireUsage{}
	w.Usage = u
	return fields(v, func(k, fv []byte) bool {
		switch string(k) {
		case `"prompt_tokens"`:
			return fastInt(fv, &u.PromptTokens)
		case `"completion_tokens"`:
			return fastInt(fv, &u.CompletionTokens)
		case `"total_tokens"`:
			return fastInt(fv, &u.TotalTokens)
		case `"completion_tokens_details"`:
			if isNull(fv) {
				return true
			}
			u.CompletionTokensDetails = &struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			}{}
			return fastDetail(fv, `"reasoning_tokens"`, &u.CompletionTokensDetails.ReasoningTokens)
		case `"prompt_tokens_details"`:
			if isNull(fv) {
				return true
			}
			u.PromptTokensDetails = &struct {
				CachedTokens int `json:"cached_tokens"`
			}{}
			return fastDetail(fv, `"cached_tokens"`, &u.PromptTokensDetails.CachedTokens)
		}
		return !foldsToResponseKey(k)
	})
}

// fastDetail reads one integer field of a usage details object.
func fastDetail(v []byte, key string, dst *int) bool {
	return fields(v, func(k, fv []byte) bool {
		if string(k) == key {
			return fastInt(fv, dst)
		}
		return !foldsToResponseKey(k)
	})
}

func fastInt(v []byte, dst *int) bool {
	if isNull(v) {
		return true
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return false
	}
	*dst = n
	return true
}

func fastInt64(v []byte, dst *int64) bool {
	if isNull(v) {
		return true
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return false
	}
	*dst = n
	return true
}
