package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// appendString appends s as a JSON string. It escapes what JSON requires
// plus U+2028 and U+2029 (as encoding/json does), writes invalid UTF-8 as
// \ufffd and does not escape HTML characters.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i = asciiEnd(s, i); i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendFloat appends f as a JSON number, formatted as encoding/json does.
func appendFloat(dst []byte, f float64) []byte {
	abs := f
	if abs < 0 {
		abs = -abs
	}
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.AppendFloat(dst, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// unquote decodes a JSON string literal (with its quotes) that encoding/json
// has already checked for syntax. Like encoding/json, it replaces invalid
// UTF-8 and lone surrogate escapes with U+FFFD. A string without escapes
// and with valid UTF-8 costs one copy.
func unquote(raw []byte) string {
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i += 2
			switch s[i-1] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'u':
				r := hex4(s[i:])
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2 = hex4(s[i+2:])
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				b.WriteRune(r)
			default: // '"', '\\', '/'
				b.WriteByte(s[i-1])
			}
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			b.WriteRune(r) // RuneError for an invalid byte
			i += size
		}
	}
	return b.String()
}

func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// cleanRaw returns a copy of the raw JSON value v in which no string holds
// a lone surrogate escape or invalid UTF-8. A value that holds neither is
// copied verbatim; one that might is decoded and re-encoded (rare: a
// surrogate escape, even a valid pair, or a bad byte).
func cleanRaw(v []byte) json.RawMessage {
	if utf8.Valid(v) && !hasSurrogateEscape(v) {
		return bytes.Clone(v)
	}
	var x any
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		return bytes.Clone(v) // not reached: v was checked by encoding/json
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(x); err != nil {
		return bytes.Clone(v)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// hasSurrogateEscape reports whether v may hold a \uD800-\uDFFF escape.
func hasSurrogateEscape(v []byte) bool {
	for {
		i := bytes.Index(v, []byte(`\u`))
		if i < 0 || i+3 >= len(v) {
			return false
		}
		if (v[i+2] == 'd' || v[i+2] == 'D') && strings.IndexByte("89abcdefABCDEF", v[i+3]) >= 0 {
			return true
		}
		v = v[i+2:]
	}
}

// isNull reports whether the raw value is absent or JSON null.
func isNull(v []byte) bool {
	return len(v) == 0 || string(v) == "null"
}

// content is a message's "content": a string, null, or an array of parts.
// Its UnmarshalJSON never fails, so that DecodeRequest can say which message
// was wrong; kind records what it found.
type content struct {
	kind      contentKind
	text      string
	reasoning string          // Mistral "thinking" parts, in answers
	parts     json.RawMessage // the array, verbatim (cleaned), for kind parts
}

type contentKind uint8

const (
	contentAbsent contentKind = iota
	contentNull
	contentString
	contentParts
	contentInvalid
)

type wirePart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking json.RawMessage `json:"thinking"`
}

func (c *content) UnmarshalJSON(data []byte) error {
	switch data[0] {
	case '"':
		c.kind, c.text = contentString, unquote(data)
	case 'n':
		c.kind = contentNull
	case '[':
		var parts []wirePart
		if err := json.Unmarshal(data, &parts); err != nil {
			c.kind = contentInvalid
			return nil
		}
		c.kind, c.parts = contentParts, cleanRaw(data)
		c.text, c.reasoning = joinParts(parts)
	default:
		c.kind = contentInvalid
	}
	return nil
}

// joinParts joins text parts with "\n"; Mistral's thinking parts (an array
// of text parts under "thinking") go to reasoning.
func joinParts(parts []wirePart) (text, reasoning string) {
	var t, r []string
	for _, p := range parts {
		switch p.Type {
		case "text", "":
			if p.Text != "" {
				t = append(t, p.Text)
			}
		case "thinking":
			var inner []wirePart
			if json.Unmarshal(p.Thinking, &inner) == nil {
				s, _ := joinParts(inner)
				if s != "" {
					r = append(r, s)
				}
			} else if len(p.Thinking) > 0 && p.Thinking[0] == '"' {
				r = append(r, unquote(p.Thinking))
			}
		}
	}
	return strings.Join(t, "\n"), strings.Join(r, "\n")
}

// AppendString appends s as a JSON string, as every encoder of this package
// does (see appendString). Other hand-written encoders (the call log) use it
// so that there is one escaper.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }
