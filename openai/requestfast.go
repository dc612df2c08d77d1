package openai

import (
	"encoding/json"
	"strconv"
)

// decodeRequestFast fills w from a client's request body without
// reflection, in one pass that also checks the JSON grammar (validValue),
// and collects the top-level fields w does not hold into extra (nil when
// there are none). Every request pays for decoding its body, and the
// profile of a streamed load showed encoding/json's reflective decode at a
// tenth of the gateway's CPU (issue 18, item 3). It gives up (ok false) at
// anything unusual — a key with an escape or a non-ASCII byte, a key in
// other letter case than its field's, a known key given twice, a value of
// a type its field does not take, a number its field cannot hold — so
// that encoding/json decides those, with its own error messages.
// FuzzDecodeRequestFast holds the two to the same result.
func decodeRequestFast(body []byte, w *wireRequest) (extra map[string]json.RawMessage, ok bool) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	var seen uint16
	end, ok := objectFields(body, i, 0, func(k []byte, j int) (int, bool) {
		if !plainKey(k) || j >= len(body) {
			return j, false
		}
		f := requestField(k)
		if f < 0 {
			if foldsToRequestKey(k) {
				return j, false
			}
			end, ok := validValue(body, j, 1)
			if ok {
				if extra == nil {
					extra = make(map[string]json.RawMessage)
				}
				extra[string(k[1:len(k)-1])] = cleanRaw(body[j:end])
			}
			return end, ok
		}
		if seen&(1<<f) != 0 {
			return j, false // encoding/json would decode the value again into the first
		}
		seen |= 1 << f
		return w.field(body, j, f)
	})
	if !ok || skipSpace(body, end) != len(body) {
		return nil, false
	}
	return extra, true
}

// field decodes the value at b[i] into the field knownFields[f].
func (w *wireRequest) field(b []byte, i, f int) (int, bool) {
	switch knownFields[f] {
	case "model":
		return stringValue(b, i, &w.Model)
	case "messages":
		return fastMessages(b, i, &w.Messages)
	case "max_tokens":
		return intValue(b, i, &w.MaxTokens)
	case "max_completion_tokens":
		return intValue(b, i, &w.MaxCompletionTokens)
	case "temperature":
		return floatValue(b, i, &w.Temperature)
	case "top_p":
		return floatValue(b, i, &w.TopP)
	case "stop":
		end, ok := validValue(b, i, 1)
		if ok {
			_ = w.Stop.UnmarshalJSON(b[i:end]) // never fails: it records what it found
		}
		return end, ok
	case "seed":
		if isNullAt(b, i) {
			return i + 4, true
		}
		end, ok := validNumber(b, i)
		if !ok {
			return end, false
		}
		n, err := strconv.ParseInt(string(b[i:end]), 10, 64)
		w.Seed = &n
		return end, err == nil
	case "response_format":
		end, ok := validValue(b, i, 1)
		w.ResponseFormat = b[i:end]
		return end, ok
	case "reasoning_effort":
		return stringValue(b, i, &w.ReasoningEffort)
	case "stream":
		return boolValue(b, i, &w.Stream)
	case "stream_options":
		if isNullAt(b, i) {
			return i + 4, true
		}
		w.StreamOptions = &streamOptions{}
		return objectFields(b, i, 1, func(k []byte, j int) (int, bool) {
			switch {
			case string(k) == `"include_usage"`:
				return boolValue(b, j, &w.StreamOptions.IncludeUsage)
			case !plainKey(k) || len(k) == len(`"include_usage"`) && equalFoldASCII(k, `"include_usage"`):
				return j, false
			}
			return validValue(b, j, 2)
		})
	case "user":
		return stringValue(b, i, &w.User)
	case "n":
		return intValue(b, i, &w.N)
	}
	return i, false
}

// requestField is the index in knownFields of the quoted key k, or -1.
func requestField(k []byte) int {
	k = k[1 : len(k)-1]
	for f, name := range knownFields {
		if string(k) == name {
			return f
		}
	}
	return -1
}

// foldsToRequestKey reports whether k (quoted) matches a field of
// wireRequest in other letter case, as encoding/json would take it.
func foldsToRequestKey(k []byte) bool {
	k = k[1 : len(k)-1]
	for _, name := range knownFields {
		if len(k) == len(name) && equalFoldASCII(k, name) {
			return true
		}
	}
	return false
}

// plainKey reports whether the quoted key k has no escape and only ASCII
// bytes: what the fast path matches by its bytes. encoding/json unescapes
// keys, and folds 'ſ' to 's' and the Kelvin sign to 'k'.
func plainKey(k []byte) bool {
	for _, c := range k[1 : len(k)-1] {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// messageKeys are the fields of wireMessage.
var messageKeys = [...]string{`"role"`, `"content"`, `"name"`, `"tool_calls"`, `"tool_call_id"`, `"prefix"`}

// fastMessages decodes the messages array at b[i]; null leaves it nil. An
// element that is not an object is for encoding/json.
func fastMessages(b []byte, i int, dst *[]wireMessage) (int, bool) {
	if isNullAt(b, i) {
		return i + 4, true
	}
	if b[i] != '[' {
		return i, false
	}
	i = skipSpace(b, i+1)
	msgs := make([]wireMessage, 0, 4)
	if i < len(b) && b[i] == ']' {
		*dst = msgs
		return i + 1, true
	}
	for {
		msgs = append(msgs, wireMessage{})
		var ok bool
		if i, ok = requestMessage(b, i, &msgs[len(msgs)-1]); !ok {
			return i, false
		}
		var end bool
		if i, end, ok = afterItem(b, i, ']'); !ok {
			return i, false
		} else if end {
			*dst = msgs
			return i, true
		}
	}
}

// requestMessage decodes one message object at b[i].
func requestMessage(b []byte, i int, m *wireMessage) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return i, false
	}
	var seen uint8
	return objectFields(b, i, 2, func(k []byte, j int) (int, bool) {
		if !plainKey(k) || j >= len(b) {
			return j, false
		}
		f := -1
		for n, name := range messageKeys {
			if string(k) == name {
				f = n
				break
			}
			if len(k) == len(name) && equalFoldASCII(k, name) {
				return j, false
			}
		}
		if f < 0 {
			return validValue(b, j, 3)
		}
		if seen&(1<<f) != 0 {
			return j, false
		}
		seen |= 1 << f
		switch f {
		case 0:
			return stringValue(b, j, &m.Role)
		case 1:
			end, ok := validValue(b, j, 3)
			if ok {
				_ = m.Content.UnmarshalJSON(b[j:end]) // never fails: it records what it found
			}
			return end, ok
		case 2:
			return stringValue(b, j, &m.Name)
		case 3:
			end, ok := validValue(b, j, 3)
			m.ToolCalls = b[j:end]
			return end, ok
		case 4:
			return stringValue(b, j, &m.ToolCallID)
		default:
			return boolValue(b, j, &m.Prefix)
		}
	})
}

// isNullAt reports whether the literal at b[i] is null.
func isNullAt(b []byte, i int) bool {
	return len(b)-i >= 4 && string(b[i:i+4]) == "null"
}

// intValue reads an integer or null at b[i] into dst; a fraction, an
// exponent or an int overflow is for encoding/json.
func intValue(b []byte, i int, dst **int) (int, bool) {
	if isNullAt(b, i) {
		return i + 4, true
	}
	end, ok := validNumber(b, i)
	if !ok {
		return end, false
	}
	n, err := strconv.Atoi(string(b[i:end]))
	*dst = &n
	return end, err == nil
}

// floatValue reads a number or null at b[i] into dst.
func floatValue(b []byte, i int, dst **float64) (int, bool) {
	if isNullAt(b, i) {
		return i + 4, true
	}
	end, ok := validNumber(b, i)
	if !ok {
		return end, false
	}
	f, err := strconv.ParseFloat(string(b[i:end]), 64)
	*dst = &f
	return end, err == nil
}

// boolValue reads true, false or null at b[i] into dst.
func boolValue(b []byte, i int, dst *bool) (int, bool) {
	switch {
	case isNullAt(b, i):
		return i + 4, true
	case len(b)-i >= 4 && string(b[i:i+4]) == "true":
		*dst = true
		return i + 4, true
	case len(b)-i >= 5 && string(b[i:i+5]) == "false":
		*dst = false
		return i + 5, true
	}
	return i, false
}
