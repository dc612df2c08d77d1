package emulator

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// obj is a JSON object whose keys keep their order, so that bodies match
// the providers' byte for byte.
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON writes the pairs in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(p.k)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping, without a trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// compact encodes v as compact JSON, as every provider but Google sends it.
// The values are built here, so an error is a programming error.
func compact(v any) []byte {
	b, err := marshal(v)
	if err != nil {
		panic("emulator: encode: " + err.Error())
	}
	return b
}

// pretty encodes v as Google does: two-space indentation and a trailing
// newline.
func pretty(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic("emulator: encode: " + err.Error())
	}
	return b.Bytes()
}

// googleLine encodes v on one line as Gemini's SSE events are written: a
// space after every colon, none after commas.
func googleLine(v any) []byte {
	src := compact(v)
	out := make([]byte, 0, len(src)+len(src)/8)
	inString, escaped := false, false
	for _, c := range src {
		out = append(out, c)
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && c == ':':
			out = append(out, ' ')
		}
	}
	return out
}

// badText reports whether a JSON body holds invalid UTF-8 or a lone UTF-16
// surrogate escape ("\ud83d" alone): some APIs refuse such bodies with an
// unhelpful error (seed 004), and the emulator does too, so that a test
// shows none ever reaches a provider.
func badText(body []byte) bool {
	if !utf8.Valid(body) {
		return true
	}
	high := false // the previous escape was a high surrogate
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' || i+1 >= len(body) {
			if high {
				return true
			}
			continue
		}
		if body[i+1] != 'u' || i+6 > len(body) {
			if high {
				return true
			}
			i++ // an escaped character, perhaps a backslash
			continue
		}
		v, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		i += 5
		if err != nil {
			continue
		}
		switch r := rune(v); {
		case r >= 0xD800 && r < 0xDC00:
			if high {
				return true
			}
			high = true
		case r >= 0xDC00 && r < 0xE000:
			if !high {
				return true
			}
			high = false
		default:
			if high {
				return true
			}
		}
	}
	return high
}
