package openai

// validJSON reports whether data is one JSON value with nothing but white
// space around it, as json.Valid does, in one pass of plain loops rather
// than encoding/json's scanner, which calls a function per byte: on a
// streamed answer json.Valid cost as much as walking the chunk's fields
// (issue 18). It is stricter than json.Valid in one way only: values nested
// deeper than maxValidDepth are refused. Callers use it to guard a fast
// path, so a refusal only sends the payload to the reflective decoder;
// FuzzValidJSON holds it to never taking what json.Valid refuses. Like
// json.Valid, it does not check UTF-8 (unquote and cleanRaw repair it).
func validJSON(data []byte) bool {
	i, ok := validValue(data, skipSpace(data, 0), 0)
	return ok && skipSpace(data, i) == len(data)
}

const maxValidDepth = 64

func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return validString(b, i)
	case c == '{':
		return objectFields(b, i, depth, func(_ []byte, j int) (int, bool) {
			return validValue(b, j, depth+1)
		})
	case c == '[':
		if depth >= maxValidDepth {
			return i, false
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = validValue(b, i, depth+1); !ok {
				return i, false
			}
			var end bool
			if i, end, ok = afterItem(b, i, ']'); !ok || end {
				return i, ok
			}
		}
	case c == 't':
		return validLiteral(b, i, "true")
	case c == 'f':
		return validLiteral(b, i, "false")
	case c == 'n':
		return validLiteral(b, i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return validNumber(b, i)
	}
	return i, false
}

func validLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// validString checks the string starting at b[i] == '"': no control
// character, and only the escapes JSON has.
func validString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		i = plainEnd(b, i)
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 || hex4(b[i+1:i+5]) < 0 {
					return i, false
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

// validNumber checks the number starting at b[i]: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
