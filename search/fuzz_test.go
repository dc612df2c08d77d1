package search

import (
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds arbitrary pages to the three parsers and the indexer's
// tokenizer: they never panic, and valid UTF-8 in gives valid UTF-8 out.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"# T\n\ntext", "---\ntitle: x\n---\n", "```\n# x\n", "[a](b", "![x](", "<a href='>'>", "<h2 id=\"", "<script>",
		"<!--", "| a | b |\n|-|-|", "Title\n===", "a_b_c *d* `e` ~~f~~", "&amp;&#x1F600;&bogus;", "<h1>a</h1><h1>a</h1>",
		"\\", "1) x\n- y", "<mailto:", "<title>x", "<svg><svg></svg>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for name, parse := range map[string]func(string) *outline{"markdown": parseMarkdown, "html": parseHTML, "text": parseText} {
			o := parse(src)
			if !utf8.ValidString(src) {
				continue
			}
			check := func(what, s string) {
				if !utf8.ValidString(s) {
					t.Fatalf("%s: %s %q is not valid UTF-8", name, what, s)
				}
			}
			check("title", o.title)
			for _, s := range o.secs {
				check("heading", s.heading)
				for _, u := range s.units {
					check("unit", u)
				}
			}
		}
		sc := scanner{s: src}
		for sc.next() {
			if len(sc.tok) == 0 || len(sc.tok) > maxToken || sc.start >= sc.end || sc.end > len(src) {
				t.Fatalf("token %q at [%d,%d) of %d bytes", sc.tok, sc.start, sc.end, len(src))
			}
			term(sc.tok)
		}
	})
}
