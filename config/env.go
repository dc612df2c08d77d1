package config

import (
	"errors"
	"regexp"
	"strings"
)

// Braces of ${...} references are swapped for private-use runes before the
// YAML parser sees the file, so that an unquoted ${GROQ_API_KEY} inside a
// flow mapping ({api_key: ${GROQ_API_KEY}}) stays one plain scalar instead of
// opening a nested mapping. The swap keeps every line where it was; expand
// swaps the braces back after parsing.
const (
	openBrace  = "\uE000"
	closeBrace = "\uE001"
)

// refPattern matches a ${NAME} or ${NAME:-default} reference in the source.
var refPattern = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^{}\n]*)?\}`)

// protectRefs swaps the braces of every reference in src.
func protectRefs(src []byte) []byte {
	return refPattern.ReplaceAllFunc(src, func(m []byte) []byte {
		s := string(m)
		return []byte("$" + openBrace + s[2:len(s)-1] + closeBrace)
	})
}

// expansion is a scalar after ${ENV} expansion.
type expansion struct {
	value string
	// vars are the variables referenced, in order.
	vars []string
	// literal is true when the scalar holds text outside its references, or
	// a reference with a non-empty default: text written in the file itself.
	literal bool
	// optional is true when every reference gives a default, ${NAME:-}: the
	// file says the value may be empty (a gateway key or an admin token
	// that the deployment may leave unset). A bare ${NAME} that comes out
	// empty is a mistake where a secret is required (issue 12).
	optional bool
}

var (
	errUnterminated = errors.New("unterminated ${ (write ${NAME} or ${NAME:-default})")
	errBadName      = errors.New("${...} must hold an environment variable's name: letters, digits and _ (write ${NAME} or ${NAME:-default})")
)

// expand replaces ${NAME} with env(NAME) and ${NAME:-default} with the
// default when NAME is empty or unset. $${ writes a literal ${. Errors never
// quote the scalar, which may hold a key.
func expand(s string, env func(string) string) (expansion, error) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, openBrace, "{"), closeBrace, "}")
	var x expansion
	var b strings.Builder
	allDefault := true
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		if i > 0 && s[i-1] == '$' { // $${ is an escaped ${
			b.WriteString(s[:i-1] + "${")
			x.literal = true
			s = s[i+2:]
			continue
		}
		if i > 0 {
			x.literal = true
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return expansion{}, errUnterminated
		}
		ref := s[i+2 : i+end]
		s = s[i+end+1:]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validVarName(name) {
			return expansion{}, errBadName
		}
		x.vars = append(x.vars, name)
		v := ""
		if env != nil {
			v = env(name)
		}
		if def != "" {
			x.literal = true // a default is text written in the file
		}
		allDefault = allDefault && hasDef
		if v == "" && hasDef {
			v = def
		}
		b.WriteString(v)
	}
	if s != "" {
		x.literal = true
	}
	b.WriteString(s)
	x.value = b.String()
	x.optional = allDefault && len(x.vars) > 0
	return x, nil
}

func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// keyVarName reports whether name looks like an environment variable meant
// to hold a key (GROQ_API_KEY), not a key pasted between ${ and }: only
// capitals, digits and _, at most 64 characters.
func keyVarName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
