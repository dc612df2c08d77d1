package typed

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The keywords whose value is one subschema, a list of them, or a map of
// them: what a schema check may go on to. $defs and definitions are left
// out: a definition costs only where a $ref uses it.
var (
	oneSub = []string{"not", "if", "then", "else", "additionalProperties", "additionalItems",
		"contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema", "items"}
	listSub = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	mapSub  = []string{"properties", "patternProperties", "dependentSchemas", "dependencies"}
	refs    = []string{"$ref", "$dynamicRef", "$recursiveRef"}
)

// coster works out a schema's cost: how many subschemas one JSON value can
// be checked against once every applicator and local $ref is followed. A
// $ref back to a schema being costed (a recursive schema) counts 1: the
// recursion is bounded by the answer's own depth, not by the schema. Costs
// are remembered per JSON pointer, so working one out is linear in the
// schema's size.
type coster struct {
	root    any
	anchors map[string]string // $anchor name -> JSON pointer
	memo    map[string]int
	open    map[string]bool // pointers being costed
}

// checkCost refuses a schema whose cost is over MaxSchemaCost.
func checkCost(root any) error {
	c := &coster{root: root, anchors: map[string]string{}, memo: map[string]int{}, open: map[string]bool{}}
	c.findAnchors(root, "")
	if c.cost(root, "") > MaxSchemaCost {
		return fmt.Errorf("is too complex: its anyOf, oneOf, allOf and $ref branches add up to more than %d checks of one value; refer to fewer definitions more than once", MaxSchemaCost)
	}
	return nil
}

func (c *coster) findAnchors(v any, ptr string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"$anchor", "$dynamicAnchor"} {
			if a, ok := x[k].(string); ok {
				c.anchors[a] = ptr
			}
		}
		for k, e := range x {
			c.findAnchors(e, ptr+"/"+escape(k))
		}
	case []any:
		for i, e := range x {
			c.findAnchors(e, ptr+"/"+strconv.Itoa(i))
		}
	}
}

// cost returns the cost of the schema v at ptr, capped a little past the
// bound so that a huge schema stops early.
func (c *coster) cost(v any, ptr string) int {
	obj, ok := v.(map[string]any)
	if !ok {
		return 1 // true, false, or not a schema: the compiler judges it
	}
	if n, ok := c.memo[ptr]; ok {
		return n
	}
	if c.open[ptr] {
		return 1
	}
	c.open[ptr] = true
	defer delete(c.open, ptr)
	n := 1
	add := func(m int) { n = min(n+m, MaxSchemaCost+1) }
	for _, k := range oneSub {
		if sub, ok := obj[k].(map[string]any); ok {
			add(c.cost(sub, ptr+"/"+k))
		}
	}
	for _, k := range listSub {
		if list, ok := obj[k].([]any); ok {
			for i, sub := range list {
				add(c.cost(sub, ptr+"/"+k+"/"+strconv.Itoa(i)))
			}
		}
	}
	for _, k := range mapSub {
		if m, ok := obj[k].(map[string]any); ok {
			for name, sub := range m {
				add(c.cost(sub, ptr+"/"+k+"/"+escape(name)))
			}
		}
	}
	for _, k := range refs {
		if ref, ok := obj[k].(string); ok {
			add(c.refCost(ref))
		}
	}
	c.memo[ptr] = n
	return n
}

// refCost is the cost of what a $ref names: a JSON pointer or an anchor
// in this schema. Anything else fails to compile (nothing is loaded), so
// it costs 1.
func (c *coster) refCost(ref string) int {
	_, frag, _ := strings.Cut(ref, "#")
	if !strings.HasPrefix(ref, "#") {
		return 1
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return 1
	}
	ptr := frag
	if frag != "" && !strings.HasPrefix(frag, "/") {
		p, ok := c.anchors[frag]
		if !ok {
			return 1
		}
		ptr = p
	}
	v, ok := lookup(c.root, ptr)
	if !ok {
		return 1
	}
	return c.cost(v, ptr)
}

// lookup follows a JSON pointer ("" is the root) in v.
func lookup(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// escape makes a key a JSON pointer token.
func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// lenientRegexp compiles a schema's pattern with Go's regexp (RE2, linear
// in the text it matches). A pattern RE2 cannot compile (ECMA-262's
// lookaround or backreferences, which providers accept) is not checked,
// rather than refusing a schema the providers take.
func lenientRegexp(s string) (jsonschema.Regexp, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		return anyText(s), nil
	}
	return re, nil
}

// anyText is a pattern that matches every text.
type anyText string

func (anyText) MatchString(string) bool { return true }
func (a anyText) String() string        { return string(a) }
