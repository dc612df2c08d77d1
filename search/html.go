package search

import (
	"strings"

	"golang.org/x/net/html"
)

// parseHTML outlines an HTML page from golang.org/x/net/html's tokenizer
// (the HTML5 tokenization rules: raw text in script and style, entities,
// attributes quoted or not, broken markup read as browsers read it):
// <title> (or the first <h1>) is the title, <h1>..<h6> start sections
// (their id attribute is the anchor), block elements end paragraphs, and
// the content of elements a visitor does not read as the page's text
// (script, style, nav, footer, and the like) is dropped. It builds no tree:
// a page is read once, token by token, and broken markup yields text,
// never an error.
func parseHTML(src string) *outline {
	o := &outline{}
	var (
		inTitle bool
		title   strings.Builder
		hLevel  int // the open heading's level, 0 outside one
		hID     string
		hText   strings.Builder
		skip    string // the skipped element being read through, "" for none
		depth   int    // how many skip elements are open inside it, itself included
	)
	emit := func(s string) {
		switch {
		case inTitle:
			title.WriteString(s)
		case hLevel > 0:
			hText.WriteString(s)
		default:
			o.text(s)
		}
	}
	z := html.NewTokenizer(strings.NewReader(src))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break // the end of the page (or of what can be read of it)
		}
		if tt == html.TextToken {
			if skip == "" {
				emit(string(z.Text()))
			}
			continue
		}
		if tt != html.StartTagToken && tt != html.EndTagToken && tt != html.SelfClosingTagToken {
			continue // comments, doctypes
		}
		b, hasAttr := z.TagName()
		name := string(b)
		closing := tt == html.EndTagToken
		if skip != "" {
			switch {
			case name != skip || tt == html.SelfClosingTagToken:
			case closing:
				if depth--; depth == 0 {
					skip = ""
				}
			default:
				depth++
			}
			continue
		}
		switch {
		case skipped(name):
			if tt == html.StartTagToken {
				skip, depth = name, 1
			}
		case name == "title":
			inTitle = !closing
			if closing && o.title == "" {
				o.title = collapse(title.String())
			}
		case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
			level := int(name[1] - '0')
			if !closing {
				o.flush()
				hLevel, hID = level, idOf(z, hasAttr)
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
	if hLevel > 0 {
		o.heading(hLevel, hText.String(), hID)
	}
	o.flush()
	return o
}

// idOf returns the id attribute of the tag z just read.
func idOf(z *html.Tokenizer, more bool) string {
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		if string(k) == "id" {
			return string(v)
		}
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
