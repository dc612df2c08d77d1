package typed

import (
	"strconv"
	"strings"
)

// A schema whose $ref leads back to itself without going down into the
// value ({"$ref": "#"}, or two $defs that refer to each other) is a valid
// document that can judge nothing: checking an answer against it never
// gets anywhere (issue 32: each such request cost two calls and ended 502).
// refLoop finds one, following the keywords that apply to the same value
// ($ref, $dynamicRef, allOf, anyOf, oneOf, not, if, then, else,
// dependentSchemas); properties, items and the like go down into the value
// and end a loop, as a recursive tree schema does.

// sameValue are the keywords whose subschemas apply to the value itself:
// objects of subschemas by name, arrays of them, or one.
var sameValue = map[string]byte{
	"allOf": '[', "anyOf": '[', "oneOf": '[',
	"not": '{', "if": '{', "then": '{', "else": '{',
	"dependentSchemas": 'm',
}

// refLoop returns the JSON pointers of a loop of doc's schemas through
// keywords that stay on the same value, first one last again, or nil.
func refLoop(doc any) []string {
	nodes := map[string]map[string]any{}
	collect(doc, "", nodes)
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(p string) []string
	visit = func(p string) []string {
		switch state[p] {
		case open:
			for i, q := range stack {
				if q == p {
					return append(append([]string(nil), stack[i:]...), p)
				}
			}
		case done:
			return nil
		}
		state[p] = open
		stack = append(stack, p)
		for _, q := range next(p, nodes[p]) {
			if _, ok := nodes[q]; !ok {
				continue
			}
			if loop := visit(q); loop != nil {
				return loop
			}
		}
		stack = stack[:len(stack)-1]
		state[p] = done
		return nil
	}
	for p := range nodes {
		if loop := visit(p); loop != nil {
			return loop
		}
	}
	return nil
}

// collect notes every object of v by its JSON pointer.
func collect(v any, p string, nodes map[string]map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		nodes[p] = x
		for k, e := range x {
			collect(e, p+"/"+escapePointer(k), nodes)
		}
	case []any:
		for i, e := range x {
			collect(e, p+"/"+strconv.Itoa(i), nodes)
		}
	}
}

// next lists the schemas that apply to the same value as the schema at p:
// what its local $ref names, and its applicators' subschemas.
func next(p string, s map[string]any) []string {
	var out []string
	for _, k := range [...]string{"$ref", "$dynamicRef"} {
		if ref, ok := s[k].(string); ok && (ref == "#" || strings.HasPrefix(ref, "#/")) {
			out = append(out, strings.TrimPrefix(ref, "#"))
		}
	}
	for k, shape := range sameValue {
		switch sub := s[k].(type) {
		case []any:
			if shape == '[' {
				for i := range sub {
					out = append(out, p+"/"+k+"/"+strconv.Itoa(i))
				}
			}
		case map[string]any:
			switch shape {
			case '{':
				out = append(out, p+"/"+k)
			case 'm':
				for name := range sub {
					out = append(out, p+"/"+k+"/"+escapePointer(name))
				}
			}
		}
	}
	return out
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
