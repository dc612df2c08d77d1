package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxUnit caps one unit of text in bytes: a paragraph with no sentence end
// is cut at a space past it, so a snippet can start near its match.
const maxUnit = 400

// rawSection is one heading's text as a parser found it.
type rawSection struct {
	heading string
	anchor  string
	trail   []string // the page title and the enclosing headings
	units   []string // sentences, list items, table rows, code lines
}

// outline collects a page's title and sections as a parser walks it. A
// heading starts a section; the text before the first heading is the
// page's opening section, with no heading.
type outline struct {
	title   string // set by the parser: front matter or <title>
	h1      string // the first level-1 heading, the title when none is set
	secs    []rawSection
	levels  [7]string // the open headings, by level
	para    strings.Builder
	anchors map[string]int
}

func (o *outline) cur() *rawSection {
	if len(o.secs) == 0 {
		o.secs = append(o.secs, rawSection{})
	}
	return &o.secs[len(o.secs)-1]
}

// heading starts a section under text at level 1..6; id is the anchor the
// page gave it, if any.
func (o *outline) heading(level int, text, id string) {
	o.flush()
	text = collapse(text)
	if text == "" {
		return
	}
	if level == 1 && o.h1 == "" && len(o.secs) <= 1 && len(o.cur().units) == 0 {
		// The page's own title: its text stays the opening section.
		o.h1 = text
		o.cur()
		return
	}
	o.levels[level] = text
	for l := level + 1; l < len(o.levels); l++ {
		o.levels[l] = ""
	}
	var trail []string
	for l := 1; l < level; l++ {
		if o.levels[l] != "" {
			trail = append(trail, o.levels[l])
		}
	}
	if id == "" {
		id = slug(text)
	}
	if o.anchors == nil {
		o.anchors = map[string]int{}
	}
	if n := o.anchors[id]; n > 0 {
		o.anchors[id] = n + 1
		id += "-" + itoa(n)
	} else {
		o.anchors[id] = 1
	}
	o.secs = append(o.secs, rawSection{heading: text, anchor: id, trail: trail})
}

// text adds running text to the current paragraph.
func (o *outline) text(s string) {
	if s == "" {
		return
	}
	if o.para.Len() > 0 {
		o.para.WriteByte(' ')
	}
	o.para.WriteString(s)
}

// flush ends the current paragraph, splitting it into sentences.
func (o *outline) flush() {
	if o.para.Len() == 0 {
		return
	}
	p := o.para.String()
	o.para.Reset()
	for _, s := range sentences(collapse(p)) {
		o.cur().units = append(o.cur().units, s)
	}
}

// unit adds s as one unit of its own: a code line, a table row.
func (o *outline) unit(s string) {
	o.flush()
	if s = collapse(s); s != "" {
		o.cur().units = append(o.cur().units, s)
	}
}

// collapse trims s and folds every run of white space to one space.
func collapse(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sentences splits a paragraph after a sentence end that is followed by a
// space and a capital letter, a digit or a non-letter; after "e.g." or a
// lone initial it does not. Pieces longer than maxUnit are cut at a space.
func sentences(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		i += size
		switch r {
		case '.', '!', '?', '。', '！', '？':
		default:
			if i-start > maxUnit && r == ' ' {
				out = append(out, strings.TrimSpace(p[start:i]))
				start = i
			}
			continue
		}
		if r == '.' && !sentenceEnd(p[start:i-1]) {
			continue
		}
		if r < utf8.RuneSelf && i < len(p) {
			if p[i] != ' ' || i+1 >= len(p) {
				continue
			}
			if next, _ := utf8.DecodeRuneInString(p[i+1:]); unicode.IsLower(next) {
				continue
			}
		}
		if s := strings.TrimSpace(p[start:i]); s != "" {
			out = append(out, s)
		}
		start = i
	}
	if s := strings.TrimSpace(p[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// sentenceEnd reports whether a period after before ends a sentence: not
// after a single letter ("J.") or a word with a period in it ("e.g").
func sentenceEnd(before string) bool {
	before = before[max(0, len(before)-maxToken):] // a word is no longer
	w := before[strings.LastIndexByte(before, ' ')+1:]
	return utf8.RuneCountInString(w) > 1 && !strings.Contains(w, ".")
}

// slug makes a heading's anchor the way GitHub does: lower case, spaces to
// hyphens, punctuation other than hyphens and underscores dropped.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ' || r == '-':
			b.WriteByte('-')
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
