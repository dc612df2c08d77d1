package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Indentation mistakes are the commonest YAML errors, and the parser's
// words for them ("value is not allowed in this context") do not say
// which line is off or by how much (issue 16). indentHint reads the
// source around the line the parser stopped at; nestFields repairs, and
// reports once, a block of fields written level with the name they
// belong under, which would otherwise give a cascade of unrelated errors.

// indentHint explains the parse error on line (1-based) of src when the
// line's indentation lines up with no open block above it: which key it
// most likely belongs with, and how many spaces to add or remove. It
// returns "" when the line is indented like something above it.
func indentHint(src []byte, line int) string {
	lines := strings.Split(string(src), "\n")
	if line < 2 || line > len(lines) {
		return ""
	}
	key, n, ok := keyAt(lines[line-1])
	if !ok {
		return ""
	}
	// Walk up, keeping each line that opens a shallower level: the blocks
	// still open at this line.
	type level struct {
		indent, line int
		key          string
	}
	var open []level
	cur := -1
	for i := line - 2; i >= 0; i-- {
		k, m, ok := keyAt(lines[i])
		if !ok || (cur >= 0 && m >= cur) {
			continue
		}
		if m == n {
			return "" // lines up with a key above: not an indentation slip
		}
		open = append(open, level{m, i + 1, k})
		cur = m
		if m == 0 {
			break
		}
	}
	if len(open) == 0 {
		return ""
	}
	best := open[0]
	for _, l := range open[1:] {
		if abs(l.indent-n) < abs(best.indent-n) {
			best = l
		}
	}
	diff, more := best.indent-n, "more"
	if diff < 0 {
		diff, more = -diff, "fewer"
	}
	return fmt.Sprintf("`%s:` is indented %d spaces, which lines up with no key above it; indent it %d %s (%d in all) to line up with `%s:` on line %d",
		key, n, diff, spaces(diff, more), best.indent, best.key, best.line)
}

func spaces(n int, more string) string {
	if n == 1 {
		return more + " space"
	}
	return more + " spaces"
}

// keyAt returns the key a line starts ("deadline" for "   deadline: 30s",
// "routes" for "  - routes: [...]") and the column it starts at; ok is
// false for a blank line, a comment, or a line that starts no key.
func keyAt(s string) (key string, col int, ok bool) {
	t := strings.TrimLeft(s, " ")
	col = len(s) - len(t)
	if t == "" || t[0] == '#' {
		return "", 0, false
	}
	if strings.HasPrefix(t, "- ") {
		t = strings.TrimLeft(t[2:], " ")
	}
	k, _, found := strings.Cut(t, ":")
	if !found || k == "" || strings.ContainsAny(k, " {[\"'") {
		return "", col, true // a list item or a value: still a level
	}
	return k, col, true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// nestFields finds, in the chains and providers mappings, a name with no
// value followed by keys that are that entry's own fields (an `answer:`
// followed by `routes:` at the same indentation), reports it once with the
// spaces to add, and moves the fields under the name so that the rest of
// the file is checked as meant.
func nestFields(root *node, src []byte, probs *problems) {
	if root == nil || root.kind != mapNode {
		return
	}
	lines := strings.Split(string(src), "\n")
	for i, section := range root.keys {
		var entry reflect.Type
		switch section {
		case "chains":
			entry = reflect.TypeFor[ChainConfig]()
		case "providers":
			entry = reflect.TypeFor[ProviderConfig]()
		default:
			continue
		}
		if m := root.vals[i]; m.kind == mapNode {
			nestSection(m, section, fieldNames(entry), lines, probs)
		}
	}
}

func nestSection(m *node, section string, fields map[string]bool, lines []string, probs *problems) {
	for i := 0; i < len(m.keys); i++ {
		if m.vals[i].kind != nullNode || fields[m.keys[i]] {
			continue
		}
		j := i + 1
		for j < len(m.keys) && fields[m.keys[j]] {
			j++
		}
		if j == i+1 {
			continue
		}
		name := m.keys[i]
		col := func(line int) int {
			if line < 1 || line > len(lines) {
				return 0
			}
			return len(lines[line-1]) - len(strings.TrimLeft(lines[line-1], " "))
		}
		add := col(m.keyLines[i]) + 2 - col(m.keyLines[i+1])
		probs.addLine(m.keyLines[i+1], joinPath(section, name), nestMessage(m.keys[i+1], name, strings.TrimSuffix(section, "s"), j-i-2, add))
		sub := &node{kind: mapNode, line: m.keyLines[i+1],
			keys: cloneSlice(m.keys[i+1 : j]), keyLines: cloneSlice(m.keyLines[i+1 : j]), vals: cloneSlice(m.vals[i+1 : j])}
		m.vals[i] = sub
		m.keys = append(m.keys[:i+1], m.keys[j:]...)
		m.keyLines = append(m.keyLines[:i+1], m.keyLines[j:]...)
		m.vals = append(m.vals[:i+1], m.vals[j:]...)
	}
}

func nestMessage(first, name, kind string, more, add int) string {
	fix := fmt.Sprintf("indent `%s:` under `%s:` (%d more spaces)", first, name, add)
	switch more {
	case 0:
		return fmt.Sprintf("`%s:` is level with `%s:`, so it is read as a %s of its own; %s", first, name, kind, fix)
	case 1:
		return fmt.Sprintf("`%s:` and the field after it are level with `%s:`, so they are read as %ss of their own; %s, and the field after it too", first, name, kind, fix)
	}
	return fmt.Sprintf("`%s:` and the %d fields after it are level with `%s:`, so they are read as %ss of their own; %s, and the %d fields after it too", first, more, name, kind, fix, more)
}

func cloneSlice[T any](s []T) []T { return append([]T(nil), s...) }

func fieldNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("yaml"); tag != "" && tag != "-" {
			out[tag] = true
		}
	}
	return out
}

// tabHint says what to do when the line that stopped the parser is
// indented with a tab, which YAML forbids ("found character '\t' that
// cannot start any token" says what the parser saw, not what to change).
// The line is found from the error's, or else the first line indented
// with a tab.
func tabHint(src []byte, line int) (string, int) {
	lines := strings.Split(string(src), "\n")
	tabbed := func(l string) bool {
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		return strings.ContainsRune(indent, '\t')
	}
	if line < 1 || line > len(lines) || !tabbed(lines[line-1]) {
		line = 0
		for i, l := range lines {
			if tabbed(l) {
				line = i + 1
				break
			}
		}
	}
	if line == 0 {
		return "", 0
	}
	return "line " + strconv.Itoa(line) + " is indented with a tab; YAML indents with spaces only: replace the tab with spaces (2 a level, as the lines above)", line
}
