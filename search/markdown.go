package search

import (
	"html"
	"strings"
)

// parseMarkdown outlines a Markdown page: YAML front matter (its title:
// line), ATX (#) and setext (===, ---) headings, paragraphs, list items,
// block quotes, tables and fenced code. Inline markup is stripped to its
// text: links and images keep their text, emphasis and code marks go, HTML
// tags go and entities are decoded. It is a reader for search, not a
// renderer: what it cannot place it keeps as text.
func parseMarkdown(src string) *outline {
	o := &outline{}
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	lines = frontMatter(o, lines)
	var fence string // the open fence's marker, "" outside code
	paraLines := 0   // lines in the paragraph being built
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
				continue
			}
			o.unit(line)
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			o.flush()
			paraLines = 0
			fence = trimmed[:3]
			continue
		}
		for strings.HasPrefix(trimmed, ">") {
			trimmed = strings.TrimSpace(trimmed[1:])
		}
		if level, text, ok := atxHeading(trimmed); ok {
			o.heading(level, inline(text), "")
			paraLines = 0
			continue
		}
		if level := setext(trimmed); level > 0 && paraLines == 1 {
			text := o.para.String()
			o.para.Reset()
			o.heading(level, text, "")
			paraLines = 0
			continue
		}
		switch {
		case trimmed == "" || isRule(trimmed):
			o.flush()
			paraLines = 0
		case isRefDef(trimmed):
		case strings.HasPrefix(trimmed, "|"):
			if row := tableRow(trimmed); row != "" {
				o.unit(row)
			}
			paraLines = 0
		default:
			if item, ok := listItem(trimmed); ok {
				o.flush()
				paraLines = 0
				trimmed = item
			}
			o.text(inline(trimmed))
			paraLines++
		}
	}
	o.flush()
	return o
}

// frontMatter reads a leading "---" block for its title and returns the
// lines after it.
func frontMatter(o *outline, lines []string) []string {
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return lines
	}
	for i := 1; i < len(lines) && i < 200; i++ {
		l := strings.TrimSpace(lines[i])
		if l == "---" || l == "..." {
			return lines[i+1:]
		}
		if v, ok := strings.CutPrefix(l, "title:"); ok {
			o.title = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	o.title = ""
	return lines // no closing line: not front matter
}

func atxHeading(l string) (level int, text string, ok bool) {
	for level < len(l) && l[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || level < len(l) && l[level] != ' ' && l[level] != '\t' {
		return 0, "", false
	}
	text = strings.TrimSpace(l[level:])
	text = strings.TrimSpace(strings.TrimRight(text, "#"))
	return level, text, true
}

// setext returns 1 for a line of =, 2 for a line of -, else 0.
func setext(l string) int {
	if len(l) < 2 {
		return 0
	}
	switch {
	case strings.Trim(l, "=") == "":
		return 1
	case strings.Trim(l, "-") == "":
		return 2
	}
	return 0
}

func isRule(l string) bool {
	if len(l) < 3 {
		return false
	}
	c := l[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	return strings.Trim(l, string(c)+" ") == ""
}

// isRefDef matches a link reference definition: [id]: url.
func isRefDef(l string) bool {
	if !strings.HasPrefix(l, "[") || strings.HasPrefix(l, "[^") {
		return false
	}
	i := strings.Index(l, "]:")
	return i > 1 && !strings.Contains(l[:i], "](")
}

func listItem(l string) (string, bool) {
	if len(l) >= 2 && (l[0] == '-' || l[0] == '*' || l[0] == '+') && l[1] == ' ' {
		return strings.TrimPrefix(strings.TrimSpace(l[2:]), "[ ] "), true
	}
	i := 0
	for i < len(l) && i < 9 && l[i] >= '0' && l[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(l) && (l[i] == '.' || l[i] == ')') && l[i+1] == ' ' {
		return strings.TrimSpace(l[i+2:]), true
	}
	return "", false
}

// tableRow turns "| a | b |" into "a; b", and a delimiter row into "".
func tableRow(l string) string {
	l = strings.Trim(l, "| ")
	if strings.Trim(l, "|-: ") == "" {
		return ""
	}
	cells := strings.Split(l, "|")
	out := cells[:0]
	for _, c := range cells {
		if c = inline(strings.TrimSpace(c)); c != "" {
			out = append(out, c)
		}
	}
	return strings.Join(out, "; ")
}

// maxInline caps how far a link or tag is looked for, so a line of
// unclosed brackets costs linear time, not quadratic.
const maxInline = 2048

// inline strips Markdown inline markup from one line.
func inline(s string) string {
	if !strings.ContainsAny(s, "*_`~[]!<>&\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) && isPunct(s[i+1]) {
				i++
				b.WriteByte(s[i])
				continue
			}
		case '*', '`':
			continue
		case '~':
			if i+1 < len(s) && s[i+1] == '~' {
				i++
				continue
			}
		case '_':
			if !(i > 0 && isAlnum(s[i-1]) && i+1 < len(s) && isAlnum(s[i+1])) {
				continue // emphasis, not snake_case
			}
		case '!':
			if i+1 < len(s) && s[i+1] == '[' {
				continue // an image: keep its alt text
			}
		case '[':
			if text, n, ok := link(s[i:]); ok {
				b.WriteString(inline(text))
				i += n - 1
				continue
			}
		case '<':
			if j := strings.IndexByte(s[i:min(len(s), i+maxInline)], '>'); j > 0 {
				tag := s[i+1 : i+j]
				if strings.HasPrefix(tag, "http://") || strings.HasPrefix(tag, "https://") || strings.HasPrefix(tag, "mailto:") {
					b.WriteString(strings.TrimPrefix(tag, "mailto:"))
					i += j
					continue
				}
				if len(tag) > 0 && (isAlnum(tag[0]) || tag[0] == '/' || tag[0] == '!') {
					b.WriteByte(' ')
					i += j
					continue
				}
			}
		}
		b.WriteByte(c)
	}
	return html.UnescapeString(b.String())
}

// link matches [text](url), [text][ref] or [text] at the start of s and
// returns the text and the bytes the link spans.
func link(s string) (text string, n int, ok bool) {
	depth := 0
	for i := 0; i < len(s) && i < maxInline; i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth > 0 {
				continue
			}
			text = s[1:i]
			rest := s[i+1:]
			switch {
			case strings.HasPrefix(rest, "("):
				if j := strings.IndexByte(rest, ')'); j >= 0 {
					return text, i + 2 + j, true
				}
			case strings.HasPrefix(rest, "["):
				if j := strings.IndexByte(rest, ']'); j >= 0 {
					return text, i + 2 + j, true
				}
			}
			return text, i + 1, true
		}
	}
	return "", 0, false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func isPunct(c byte) bool {
	return strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0
}
