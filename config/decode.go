package config

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// decoder fills the schema structs from a node tree. It records the line of
// every field it sees, so that later stages can report problems where they
// are, and reports every mismatch instead of stopping at the first.
type decoder struct {
	probs *problems
	lines map[string]int
	// keys holds each mapping's keys in file order, by path.
	keys map[string][]string
	// envVar names the variable a scalar's value came from, by path.
	envVar map[string]string
}

// quote quotes the value at path for a message, unless it came from the
// environment: a value read from a variable may be a secret.
func (d *decoder) quote(path, s string) string {
	if v, ok := d.envVar[path]; ok {
		return "the value of ${" + v + "}"
	}
	return strconv.Quote(s)
}

// nodeDecoder is implemented by schema types that decode themselves
// (Duration, Size, Secret, RouteRef, JSON).
type nodeDecoder interface {
	decodeNode(d *decoder, n *node, path string)
}

var nodeDecoderType = reflect.TypeFor[nodeDecoder]()

// lineOf returns the line recorded for path, or for its nearest parent.
func (d *decoder) lineOf(path string) int {
	for path != "" {
		if l, ok := d.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return d.lines[""]
}

func (d *decoder) decode(n *node, path string, v reflect.Value) {
	if n.line > 0 {
		if _, ok := d.lines[path]; !ok {
			d.lines[path] = n.line
		}
	}
	if len(n.vars) > 0 {
		d.envVar[path] = n.vars[0]
	}
	if v.Kind() == reflect.Pointer {
		if n.kind == nullNode {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		before := len(d.probs.list)
		d.decode(n, path, v.Elem())
		switch v.Type().Elem().Kind() {
		case reflect.Struct, reflect.Map, reflect.Slice:
		default:
			if len(d.probs.list) > before {
				v.SetZero() // a scalar that failed to decode stays unset
			}
		}
		return
	}
	if v.CanAddr() && v.Addr().Type().Implements(nodeDecoderType) {
		v.Addr().Interface().(nodeDecoder).decodeNode(d, n, path)
		return
	}
	if n.kind == nullNode {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, path, v)
	case reflect.Map:
		d.decodeMap(n, path, v)
	case reflect.Slice:
		d.decodeSlice(n, path, v)
	case reflect.String:
		if s, ok := d.scalar(n, path, "text"); ok {
			v.SetString(s)
		}
	case reflect.Int, reflect.Int64:
		s, ok := d.scalar(n, path, "a whole number")
		if !ok {
			return
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
		if err != nil {
			d.probs.addf(path, "%s is not a whole number (write, say, 30)", quoteValue(n, s))
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		s, ok := d.scalar(n, path, "a number")
		if !ok {
			return
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			d.probs.addf(path, "%s is not a number (write, say, 0.05)", quoteValue(n, s))
			return
		}
		v.SetFloat(f)
	case reflect.Bool:
		s, ok := d.scalar(n, path, "true or false")
		if !ok {
			return
		}
		switch strings.ToLower(s) {
		case "true", "yes", "on":
			v.SetBool(true)
		case "false", "no", "off":
			v.SetBool(false)
		default:
			d.probs.addf(path, "%s is not true or false", quoteValue(n, s))
		}
	default:
		panic(fmt.Sprintf("config: decoder cannot fill a %s", v.Type())) // a schema bug, not bad input
	}
}

// scalar returns a scalar node's value, or reports that want was expected.
func (d *decoder) scalar(n *node, path, want string) (string, bool) {
	if n.kind != scalarNode {
		d.probs.addf(path, "want %s, not %s", want, n.kind)
		return "", false
	}
	return n.value, true
}

// quoteValue quotes a scalar for a message, unless it came from the
// environment: a value read from a variable may be a secret.
func quoteValue(n *node, s string) string {
	if len(n.vars) > 0 {
		return "the value of ${" + n.vars[0] + "}"
	}
	return strconv.Quote(s)
}

func (d *decoder) decodeStruct(n *node, path string, v reflect.Value) {
	if n.kind != mapNode {
		d.probs.addf(path, "want a mapping of fields, not %s", n.kind)
		return
	}
	t := v.Type()
	fields := map[string]int{}
	var names []string
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" || tag == "-" || !t.Field(i).IsExported() {
			continue
		}
		fields[tag] = i
		names = append(names, tag)
	}
	for i, key := range n.keys {
		child := joinPath(path, key)
		idx, ok := fields[key]
		if !ok {
			d.lines[child] = n.keyLines[i]
			sorted := append([]string(nil), names...)
			sort.Strings(sorted)
			if hint := didYouMean(key, names); hint != "" {
				d.probs.addf(child, "unknown field%s", hint)
			} else {
				d.probs.addf(child, "unknown field; valid fields here: %s", quoteList(sorted))
			}
			continue
		}
		d.lines[child] = n.keyLines[i]
		d.decode(n.vals[i], child, v.Field(idx))
	}
}

func (d *decoder) decodeMap(n *node, path string, v reflect.Value) {
	if n.kind != mapNode {
		d.probs.addf(path, "want a mapping, not %s", n.kind)
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(v.Type(), len(n.keys)))
	}
	d.keys[path] = append(d.keys[path], n.keys...)
	for i, key := range n.keys {
		child := joinPath(path, key)
		d.lines[child] = n.keyLines[i]
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(n.vals[i], child, elem)
		v.SetMapIndex(reflect.ValueOf(key), elem)
	}
}

func (d *decoder) decodeSlice(n *node, path string, v reflect.Value) {
	if elem := v.Type().Elem(); n.kind == scalarNode && (elem.Kind() == reflect.String || elem == reflect.TypeFor[GatewayKeyConfig]()) {
		// gateway_keys: ${TOLLFREE_KEY} is taken as a list of one.
		n = &node{kind: seqNode, line: n.line, items: []*node{n}}
	}
	if n.kind != seqNode {
		d.probs.addf(path, "want a list, not %s", n.kind)
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.items), len(n.items))
	for i, item := range n.items {
		d.decode(item, fmt.Sprintf("%s[%d]", path, i), out.Index(i))
	}
	v.Set(out)
}
