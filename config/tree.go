package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// A node is one YAML value with its line, after ${ENV} expansion. The decoder
// works on nodes rather than on goccy's AST so that aliases, merge keys and
// expansion are dealt with once, here.
type node struct {
	kind nodeKind
	line int

	// Scalars.
	value    string
	typ      scalarType
	vars     []string // environment variables the scalar referenced
	literal  bool     // text written in the file, outside any reference
	optional bool     // every reference gives a default: ${NAME:-}

	// Mappings, in file order.
	keys     []string
	keyLines []int
	vals     []*node

	// Sequences.
	items []*node
}

type nodeKind int

const (
	nullNode nodeKind = iota
	scalarNode
	mapNode
	seqNode
)

// scalarType is the YAML type of a scalar, kept for extra fields, which are
// sent as JSON.
type scalarType int

const (
	strScalar scalarType = iota
	intScalar
	floatScalar
	boolScalar
)

func (k nodeKind) String() string {
	switch k {
	case scalarNode:
		return "a value"
	case mapNode:
		return "a mapping"
	case seqNode:
		return "a list"
	}
	return "empty"
}

// Limits on what one file may expand to, so that nested aliases (a "billion
// laughs" file) cannot exhaust memory.
const (
	maxNodes = 100_000
	maxDepth = 64
)

var errTooBig = errors.New("the file expands to too many values (check its aliases)")

// parseTree parses src into a node tree, expanding ${ENV} references in
// scalar values. Problems go to probs; the returned tree may be partial.
func parseTree(src []byte, env func(string) string, probs *problems) *node {
	f, err := parser.ParseBytes(protectRefs(src), 0)
	if err != nil {
		line, msg := 0, "cannot parse YAML"
		var yerr yaml.Error
		if errors.As(err, &yerr) {
			// GetMessage, never Error: Error quotes the source, which may hold a key.
			msg = "cannot parse YAML: " + yerr.GetMessage()
			if tok := yerr.GetToken(); tok != nil && tok.Position != nil {
				line = tok.Position.Line
			}
			if hint := indentHint(src, line); hint != "" {
				msg = "cannot parse YAML: " + hint
			} else if strings.Contains(yerr.GetMessage(), "'\t'") {
				if hint, at := tabHint(src, line); hint != "" {
					msg, line = "cannot parse YAML: "+hint, at
				}
			}
		}
		probs.addLine(line, "", msg)
		return nil
	}
	var docs []ast.Node
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			docs = append(docs, d.Body)
		}
	}
	if len(docs) == 0 {
		return &node{kind: mapNode, line: 1}
	}
	if len(docs) > 1 {
		probs.addLine(line(docs[1]), "", "the file holds more than one YAML document; keep one")
	}
	b := &treeBuilder{env: env, probs: probs, anchors: map[string]ast.Node{}}
	root := b.build(docs[0], "", 0)
	if b.tooBig {
		probs.addLine(0, "", errTooBig.Error())
		return nil
	}
	return root
}

type treeBuilder struct {
	env     func(string) string
	probs   *problems
	anchors map[string]ast.Node
	count   int
	tooBig  bool
}

func line(n ast.Node) int {
	if n == nil {
		return 0
	}
	if tok := n.GetToken(); tok != nil && tok.Position != nil {
		return tok.Position.Line
	}
	return 0
}

func (b *treeBuilder) build(n ast.Node, path string, depth int) *node {
	b.count++
	if b.count > maxNodes || depth > maxDepth {
		b.tooBig = true
		return &node{}
	}
	if b.tooBig || n == nil {
		return &node{}
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		if v.Name != nil {
			b.anchors[anchorName(v.Name)] = v.Value
		}
		return b.build(v.Value, path, depth+1)
	case *ast.AliasNode:
		target, ok := b.anchors[anchorName(v.Value)]
		if !ok {
			b.probs.addLine(line(n), path, "alias names no anchor defined above it")
			return &node{line: line(n)}
		}
		out := b.build(target, path, depth+1)
		out.line = line(n)
		return out
	case *ast.TagNode:
		out := b.build(v.Value, path, depth+1)
		if v.Start != nil && v.Start.Value == "!!str" && out.kind == scalarNode {
			out.typ = strScalar
		}
		return out
	case *ast.MappingNode:
		return b.mapping(v.Values, line(n), path, depth)
	case *ast.MappingValueNode:
		return b.mapping([]*ast.MappingValueNode{v}, line(n), path, depth)
	case *ast.SequenceNode:
		out := &node{kind: seqNode, line: line(n)}
		for i, item := range v.Values {
			out.items = append(out.items, b.build(item, fmt.Sprintf("%s[%d]", path, i), depth+1))
		}
		return out
	case *ast.NullNode, *ast.CommentGroupNode, *ast.CommentNode:
		return &node{kind: nullNode, line: line(n)}
	case *ast.StringNode:
		return b.scalar(v.Value, strScalar, line(n), path)
	case *ast.LiteralNode:
		if v.Value == nil {
			return &node{kind: nullNode, line: line(n)}
		}
		return b.scalar(v.Value.Value, strScalar, line(n), path)
	case *ast.IntegerNode:
		return b.scalar(n.GetToken().Value, intScalar, line(n), path)
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return b.scalar(n.GetToken().Value, floatScalar, line(n), path)
	case *ast.BoolNode:
		return b.scalar(n.GetToken().Value, boolScalar, line(n), path)
	}
	b.probs.addLine(line(n), path, fmt.Sprintf("unsupported YAML (%s)", n.Type()))
	return &node{line: line(n)}
}

func anchorName(n ast.Node) string {
	if n == nil {
		return ""
	}
	if s, ok := n.(*ast.StringNode); ok {
		return s.Value
	}
	if tok := n.GetToken(); tok != nil {
		return tok.Value
	}
	return ""
}

func (b *treeBuilder) scalar(raw string, typ scalarType, ln int, path string) *node {
	out := &node{kind: scalarNode, line: ln, typ: typ, value: raw, literal: raw != ""}
	if typ != strScalar || !strings.Contains(raw, "$") {
		return out
	}
	x, err := expand(raw, b.env)
	if err != nil {
		b.probs.addLine(ln, path, err.Error())
		out.value = ""
		return out
	}
	out.value, out.vars, out.literal, out.optional = x.value, x.vars, x.literal, x.optional
	return out
}

func (b *treeBuilder) mapping(values []*ast.MappingValueNode, ln int, path string, depth int) *node {
	out := &node{kind: mapNode, line: ln}
	seen := map[string]bool{}
	var merged []*node
	for _, mv := range values {
		if mv == nil {
			continue
		}
		key := mv.Key
		if mk, ok := key.(*ast.MappingKeyNode); ok {
			if kn, ok := mk.Value.(ast.MapKeyNode); ok {
				key = kn
			}
		}
		kl := line(key)
		if _, ok := key.(*ast.MergeKeyNode); ok {
			v := b.build(mv.Value, path, depth+1)
			switch v.kind {
			case mapNode:
				merged = append(merged, v)
			case seqNode:
				for _, it := range v.items {
					if it.kind == mapNode {
						merged = append(merged, it)
					}
				}
			default:
				b.probs.addLine(kl, path, "<< must merge a mapping")
			}
			continue
		}
		name, ok := keyString(key)
		if !ok {
			b.probs.addLine(kl, path, "a key must be a plain value")
			continue
		}
		child := joinPath(path, name)
		if seen[name] {
			b.probs.addLine(kl, child, "appears twice; keep one")
			continue
		}
		seen[name] = true
		v := b.build(mv.Value, child, depth+1)
		if v.line == 0 {
			v.line = kl
		}
		out.keys = append(out.keys, name)
		out.keyLines = append(out.keyLines, kl)
		out.vals = append(out.vals, v)
	}
	for _, m := range merged {
		for i, k := range m.keys {
			if !seen[k] {
				seen[k] = true
				out.keys = append(out.keys, k)
				out.keyLines = append(out.keyLines, m.keyLines[i])
				out.vals = append(out.vals, m.vals[i])
			}
		}
	}
	return out
}

func keyString(k ast.Node) (string, bool) {
	switch v := k.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode:
		return v.GetToken().Value, true
	case *ast.TagNode:
		return keyString(v.Value)
	}
	return "", false
}

// joinPath appends a key to a dotted path, quoting keys that are not plain
// words (model ids such as "openai/gpt-oss-120b").
func joinPath(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if !plain {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}
