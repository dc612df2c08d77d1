package search

import (
	"html"
	"strings"
)

// parseHTML outlines an HTML page by stripping its tags: <title> (or the
// first <h1>) is the title, <h1>..<h6> start sections (their id attribute
// is the anchor), block elements end paragraphs, and the content of
// elements a visitor does not read as the page's text (script, style, nav,
// footer, and the like) is dropped. Entities are decoded. It is a tolerant
// scanner, not a parser: broken markup yields text, never an error.
func parseHTML(src string) *outline {
	o := &outline{}
	var (
		inTitle   bool
		title     strings.Builder
		hLevel    int // the open heading's level, 0 outside one
		hID       string
		hText     strings.Builder
		textStart int
	)
	emit := func(s string) {
		s = html.UnescapeString(s)
		switch {
		case inTitle:
			title.WriteString(s)
		case hLevel > 0:
			hText.WriteString(s)
		default:
			o.text(s)
		}
	}
	for i := 0; i < len(src); {
		if src[i] != '<' {
			i++
			continue
		}
		emit(src[textStart:i])
		name, closing, attrs, end := tag(src, i)
		i, textStart = end, end
		switch {
		case name == "":
			if end == len(src) {
				continue
			}
		case skipped(name) && !closing:
			i = skipElement(src, end, name)
			textStart = i
		case name == "title":
			inTitle = !closing
			if closing && o.title == "" {
				o.title = collapse(title.String())
			}
		case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
			level := int(name[1] - '0')
			if !closing {
				o.flush()
				hLevel, hID = level, attr(attrs, "id")
				hText.Reset()
			} else if hLevel > 0 {
				o.heading(hLevel, hText.String(), hID)
				hLevel = 0
			}
		case block(name):
			if hLevel > 0 {
				hText.WriteByte(' ')
			} else {
				o.flush()
			}
		case name == "td" || name == "th":
			emit(" ")
		}
	}
	emit(src[textStart:])
	if hLevel > 0 {
		o.heading(hLevel, hText.String(), hID)
	}
	o.flush()
	return o
}

// tag reads the markup starting at src[i] == '<'. It returns the lower-case
// element name ("" for a comment, doctype or stray '<'), whether it closes,
// its attribute text, and the index just past it.
func tag(src string, i int) (name string, closing bool, attrs string, end int) {
	rest := src[i:]
	switch {
	case strings.HasPrefix(rest, "<!--"):
		if j := strings.Index(rest[4:], "-->"); j >= 0 {
			return "", false, "", i + 4 + j + 3
		}
		return "", false, "", len(src)
	case strings.HasPrefix(rest, "<!"), strings.HasPrefix(rest, "<?"):
		if j := strings.IndexByte(rest, '>'); j >= 0 {
			return "", false, "", i + j + 1
		}
		return "", false, "", len(src)
	}
	j := 1
	if j < len(rest) && rest[j] == '/' {
		closing = true
		j++
	}
	k := j
	for k < len(rest) && (isASCIIAlpha(rest[k]) || k > j && rest[k] >= '0' && rest[k] <= '9') {
		k++
	}
	if k == j {
		return "", false, "", i + 1 // a stray '<': text
	}
	name = strings.ToLower(rest[j:k])
	// Find the closing '>' outside quoted attribute values.
	var quote byte
	for m := k; m < len(rest); m++ {
		switch c := rest[m]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return name, closing, rest[k:m], i + m + 1
		}
	}
	return name, closing, rest[k:], len(src)
}

// skipElement returns the index just past the close of the element name
// whose content starts at i, or len(src) when it never closes.
func skipElement(src string, i int, name string) int {
	for i < len(src) {
		j := strings.Index(src[i:], "</")
		if j < 0 {
			return len(src)
		}
		i += j
		if n := i + 2 + len(name); n <= len(src) && strings.EqualFold(src[i+2:n], name) {
			_, _, _, end := tag(src, i)
			return end
		}
		i += 2
	}
	return len(src)
}

// attr returns the value of attribute key in a tag's attribute text.
func attr(attrs, key string) string {
	for i := 0; i+len(key) < len(attrs); i++ {
		if attrs[i+len(key)] != '=' || !strings.EqualFold(attrs[i:i+len(key)], key) {
			continue
		}
		if i > 0 && attrs[i-1] != ' ' && attrs[i-1] != '\t' && attrs[i-1] != '\n' {
			continue // data-id=, not id=
		}
		v := attrs[i+len(key)+1:]
		if v != "" && (v[0] == '"' || v[0] == '\'') {
			if j := strings.IndexByte(v[1:], v[0]); j >= 0 {
				return html.UnescapeString(v[1 : 1+j])
			}
			return ""
		}
		if j := strings.IndexAny(v, " \t\n/>"); j >= 0 {
			v = v[:j]
		}
		return v
	}
	return ""
}

// skipped names the elements whose content is not the page's text.
func skipped(name string) bool {
	switch name {
	case "script", "style", "noscript", "template", "svg", "math", "nav",
		"footer", "iframe", "object", "select", "textarea", "button", "canvas":
		return true
	}
	return false
}

// block names the elements that end a paragraph.
func block(name string) bool {
	switch name {
	case "p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "tr", "table",
		"section", "article", "main", "header", "aside", "blockquote", "pre",
		"hr", "figure", "figcaption", "details", "summary", "body", "form",
		"fieldset", "legend", "address":
		return true
	}
	return false
}

func isASCIIAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
