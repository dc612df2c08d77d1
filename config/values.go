package config

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Duration is a length of time written as a Go duration string ("8s",
// "1m30s", "250ms"). It is the only way the file gives a duration: a bare
// number is refused, because "8" could mean seconds or milliseconds.
type Duration time.Duration

// ParseDuration parses a Duration, refusing bare numbers and negative values
// with a message that says what to write instead.
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("%q is not a duration (write %ss)", s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (write, say, 8s, 1m30s or 250ms)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative; a duration is 0 or more", s)
	}
	return Duration(d), nil
}

// String formats d as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalText parses a duration string, so Duration also works with
// encoding/json and flag-style decoders.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("parse duration: %w", err)
	}
	*d = v
	return nil
}

// MarshalText formats d as a duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

func (d *Duration) decodeNode(dec *decoder, n *node, path string) {
	if n.kind == nullNode {
		return
	}
	s, ok := dec.scalar(n, path, "a duration such as 8s")
	if !ok {
		return
	}
	v, err := ParseDuration(s)
	if err != nil {
		if len(n.vars) > 0 {
			dec.probs.addf(path, "the value of ${%s} is not a duration (write, say, 8s)", n.vars[0])
			return
		}
		dec.probs.addf(path, "%s", err.Error())
		return
	}
	*d = v
}

// Size is a byte count written "4MiB", "512KiB", "1MB" or as plain bytes.
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"B", 1},
}

// ParseSize parses a Size.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f*float64(mult) > math.MaxInt64/2 || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is not a size (write, say, 4MiB, 512KiB or 1048576)", s)
	}
	return Size(f * float64(mult)), nil
}

func (z *Size) decodeNode(dec *decoder, n *node, path string) {
	if n.kind == nullNode {
		return
	}
	s, ok := dec.scalar(n, path, "a size such as 4MiB")
	if !ok {
		return
	}
	v, err := ParseSize(s)
	if err != nil {
		if len(n.vars) > 0 {
			dec.probs.addf(path, "the value of ${%s} is not a size (write, say, 4MiB)", n.vars[0])
			return
		}
		dec.probs.addf(path, "%s", err.Error())
		return
	}
	*z = v
}

// Secret is a value that must not be printed: a key or a token. Its String
// and GoString never show the value.
type Secret struct {
	// Value is the value after ${ENV} expansion.
	Value string
	// Vars are the environment variables it referenced.
	Vars []string
	// Literal is true when text was written in the file itself rather than
	// only referenced.
	Literal bool
	// Optional is true when the value was written ${NAME:-}: the file allows
	// it to be empty. A required secret (a gateway key, the admin token)
	// written ${NAME} whose variable is unset is a config error instead.
	Optional bool
	set      bool
}

// String returns "[secret]", never the value.
func (s Secret) String() string { return "[secret]" }

// GoString returns "[secret]", never the value.
func (s Secret) GoString() string { return "[secret]" }

func (s *Secret) decodeNode(dec *decoder, n *node, path string) {
	if n.kind == nullNode {
		s.set = true
		return
	}
	if n.kind != scalarNode {
		dec.probs.addf(path, "want a value such as ${NAME}, not %s", n.kind)
		return
	}
	*s = Secret{Value: n.value, Vars: n.vars, Literal: n.literal, Optional: n.optional, set: true}
}

// RouteRef names a route in a chain: "provider/model", a mapping
// {route: provider/model, rank: n}, or a tier of equivalent routes, a
// list [provider/model, provider/model] (issue 31: within a tier, the
// route whose limits renew soonest goes first). A tier is flattened into
// one RouteRef per route when the config is loaded (flattenTiers).
type RouteRef struct {
	Route string `yaml:"route"`
	// Rank: routes of equal rank may be reordered by latency. 0 (unset)
	// means one more than the route before.
	Rank int `yaml:"rank"`
	// Tier is a tier's routes, as written; empty once flattened.
	Tier []string `yaml:"-"`
	// tier numbers the tier a flattened route came from (from 1); 0 for a
	// route listed on its own.
	tier int
}

func (r *RouteRef) decodeNode(dec *decoder, n *node, path string) {
	switch n.kind {
	case scalarNode:
		r.Route = n.value
	case mapNode:
		type plain RouteRef // no decodeNode: decode field by field
		var p plain
		dec.decodeStruct(n, path, reflect.ValueOf(&p).Elem())
		*r = RouteRef(p)
	case seqNode:
		if len(n.items) == 0 {
			dec.probs.addf(path, "an empty tier: list its routes, as in [gemini/gemma-3-27b-it, groq/llama-3.3-70b-versatile]")
			return
		}
		for i, it := range n.items {
			if it.kind != scalarNode {
				dec.probs.addf(path, "a tier lists provider/model names; its item %d is %s", i+1, it.kind)
				return
			}
			r.Tier = append(r.Tier, it.value)
		}
	default:
		dec.probs.addf(path, "want provider/model, {route: provider/model, rank: 1} or a tier [provider/model, provider/model], not %s", n.kind)
	}
}

// flattenTiers puts each tier's routes in the chain's list in its place,
// marked with their tier's number (RouteRef.tier).
func flattenTiers(c *ChainConfig) {
	has := false
	for _, ref := range c.Routes {
		has = has || len(ref.Tier) > 0
	}
	if !has {
		return
	}
	out := make([]RouteRef, 0, len(c.Routes))
	tier := 0
	for _, ref := range c.Routes {
		if len(ref.Tier) == 0 {
			out = append(out, ref)
			continue
		}
		tier++
		for _, id := range ref.Tier {
			out = append(out, RouteRef{Route: id, tier: tier})
		}
	}
	c.Routes = out
}

// JSON is a YAML value sent as JSON (a model's extra request fields).
type JSON json.RawMessage

func (j *JSON) decodeNode(dec *decoder, n *node, path string) {
	v, ok := toJSONValue(dec, n, path)
	if !ok {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		dec.probs.addf(path, "has no JSON form")
		return
	}
	*j = b
}

func toJSONValue(dec *decoder, n *node, path string) (any, bool) {
	switch n.kind {
	case nullNode:
		return nil, true
	case mapNode:
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			v, ok := toJSONValue(dec, n.vals[i], joinPath(path, k))
			if !ok {
				return nil, false
			}
			m[k] = v
		}
		return m, true
	case seqNode:
		l := make([]any, len(n.items))
		for i, it := range n.items {
			v, ok := toJSONValue(dec, it, fmt.Sprintf("%s[%d]", path, i))
			if !ok {
				return nil, false
			}
			l[i] = v
		}
		return l, true
	}
	switch n.typ {
	case intScalar, floatScalar:
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			dec.probs.addf(path, "%s has no JSON form (write a finite number)", strconv.Quote(n.value))
			return nil, false
		}
		if i, err := strconv.ParseInt(n.value, 10, 64); err == nil {
			return i, true
		}
		return f, true
	case boolScalar:
		switch strings.ToLower(n.value) {
		case "true", "yes", "on":
			return true, true
		}
		return false, true
	}
	return n.value, true
}
