package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzAnswer feeds untrusted queries to the tokenizer, the ranking and the
// answer builder: they never panic, the answer is valid UTF-8 within
// MaxAnswer characters, and ok matches whether Search found anything.
func FuzzAnswer(f *testing.F) {
	for _, q := range []string{
		"", "password", "I forgot my password!", "CAFÉ ZÜRICH", "Cafe\u0301", "ノート 作成",
		"\xff\xfe\xc3", "don't 3,000 1.5 e.g.", strings.Repeat("refund ", 2000), strings.Repeat("é", 5000),
		"'''’’’,,,...", "a\u0301\u0301\u0301\u0301", "\u202e\u0000\ufeff export",
	} {
		f.Add(q)
	}
	ix := openSite(f, Options{BaseURL: "https://orbit.example/"})
	f.Fuzz(func(t *testing.T, q string) {
		text, ok := ix.Answer(q)
		hits := ix.Search(q, 3)
		if ok != (len(hits) > 0) {
			t.Fatalf("Answer ok = %v but Search found %d hits", ok, len(hits))
		}
		if !ok && text != "" {
			t.Fatalf("Answer = %q with ok false, want \"\"", text)
		}
		if !utf8.ValidString(text) {
			t.Fatalf("Answer is not valid UTF-8: %q", text)
		}
		if n := utf8.RuneCountInString(text); n > MaxAnswer {
			t.Fatalf("Answer has %d characters, want at most %d", n, MaxAnswer)
		}
		for _, h := range hits {
			if !utf8.ValidString(h.Snippet) || utf8.RuneCountInString(h.Snippet) > snippetRunes {
				t.Fatalf("bad snippet %q", h.Snippet)
			}
		}
	})
}

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
