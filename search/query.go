package search

import (
	"net/url"
	"slices"
	"unicode/utf8"
)

const (
	// maxQuery caps the bytes of a query that are read; the rest is ignored.
	maxQuery = 4 << 10
	// maxQueryTerms caps the distinct known terms a query is scored on.
	maxQueryTerms = 32
	// snippetRunes caps a Hit's snippet, in characters.
	snippetRunes = 300
)

// Hit is one section that matched a query.
type Hit struct {
	// Title is the page's title: its front matter or <title>, else its first
	// level-1 heading, else its file name.
	Title string
	// Heading is the section's heading; "" for the text before a page's
	// first heading.
	Heading string
	// Path is the page's file, slash-separated, relative to the content root.
	Path string
	// Anchor is the section's anchor within the page (the heading's slug or
	// HTML id); "" for the opening section.
	Anchor string
	// URL links the section when Options.BaseURL is set; else "".
	URL string
	// Score is the section's BM25 score; higher is better. Scores compare
	// only within one index.
	Score float64
	// Snippet is the section's passage that best matches the query: whole
	// sentences from the best one on, at most 300 characters.
	Snippet string
	// Text is the section's whole text, its units joined by spaces: what a
	// model is given to answer from (an assistant's context).
	Text string
}

// scratch is one query's working memory, pooled per Index.
type scratch struct {
	scores  []float32 // by section; all zero between queries
	touched []uint32  // sections with a non-zero score
	qterms  []uint32  // the query's distinct known terms
	top     []ranked
	sc      scanner
}

type ranked struct {
	sec   uint32
	score float32
}

func (ix *Index) get() *scratch {
	if s, _ := ix.scratch.Get().(*scratch); s != nil {
		return s
	}
	return &scratch{scores: make([]float32, len(ix.sections))}
}

// Search returns the n sections that best match query, best first, scored
// by BM25 over their words (heading words count double, the page title and
// enclosing headings count too). Matching ignores case, Latin accents,
// English plurals and -ed/-ing endings, and stop words. The query is
// untrusted text: only its first 4 KiB and 32 distinct known words count.
// It returns nil when n <= 0 or nothing matches.
func (ix *Index) Search(query string, n int) []Hit {
	if n <= 0 {
		return nil
	}
	s := ix.get()
	defer ix.scratch.Put(s)
	top := ix.rank(s, query, n)
	if len(top) == 0 {
		return nil
	}
	hits := make([]Hit, len(top))
	for i, r := range top {
		hits[i] = ix.hit(r, s.qterms, snippetRunes)
	}
	return hits
}

// rank scores the sections against query and returns the best n, best
// first, ties to the earlier section. It leaves s.scores zeroed and
// s.qterms holding the query's terms.
func (ix *Index) rank(s *scratch, query string, n int) []ranked {
	if len(query) > maxQuery {
		query = query[:maxQuery] // a rune cut in two is a separator
	}
	s.qterms = s.qterms[:0]
	s.sc = scanner{s: query, tok: s.sc.tok}
	for len(s.qterms) < maxQueryTerms && s.sc.next() {
		t := term(s.sc.tok)
		if t == nil {
			continue
		}
		id, ok := ix.terms[string(t)]
		if ok && !slices.Contains(s.qterms, id) {
			s.qterms = append(s.qterms, id)
		}
	}
	s.touched = s.touched[:0]
	for _, id := range s.qterms {
		idf := ix.idf[id]
		for _, p := range ix.posts[ix.postStart[id]:ix.postStart[id+1]] {
			if s.scores[p.sec] == 0 {
				s.touched = append(s.touched, p.sec)
			}
			s.scores[p.sec] += idf * p.tf * (bm25K1 + 1) / (p.tf + ix.norm[p.sec])
		}
	}
	s.top = s.top[:0]
	for _, sec := range s.touched {
		r := ranked{sec: sec, score: s.scores[sec]}
		s.scores[sec] = 0
		if len(s.top) == n && !better(r, s.top[n-1]) {
			continue
		}
		if len(s.top) < n {
			s.top = append(s.top, r)
		} else {
			s.top[n-1] = r
		}
		for i := len(s.top) - 1; i > 0 && better(s.top[i], s.top[i-1]); i-- {
			s.top[i], s.top[i-1] = s.top[i-1], s.top[i]
		}
	}
	return s.top
}

func better(a, b ranked) bool {
	return a.score > b.score || a.score == b.score && a.sec < b.sec
}

func (ix *Index) hit(r ranked, qterms []uint32, max int) Hit {
	sec := &ix.sections[r.sec]
	pg := &ix.pages[sec.page]
	return Hit{
		Title: pg.title, Heading: sec.heading, Path: pg.path, Anchor: sec.anchor,
		URL: sectionURL(pg, sec), Score: float64(r.score), Snippet: ix.snippet(sec, qterms, max),
		Text: sec.text,
	}
}

// All returns every section, in the order of the pages and their headings,
// with its whole Text and no Score or Snippet: the whole content, for a
// context that can take it.
func (ix *Index) All() []Hit {
	out := make([]Hit, len(ix.sections))
	for i := range ix.sections {
		sec := &ix.sections[i]
		pg := &ix.pages[sec.page]
		out[i] = Hit{Title: pg.title, Heading: sec.heading, Path: pg.path, Anchor: sec.anchor, URL: sectionURL(pg, sec), Text: sec.text}
	}
	return out
}

// sectionURL links a section: its page's URL and anchor; "" without BaseURL.
func sectionURL(pg *page, sec *section) string {
	if pg.url == "" || sec.anchor == "" {
		return pg.url
	}
	return pg.url + "#" + (&url.URL{Fragment: sec.anchor}).EscapedFragment()
}

// snippet picks the unit of sec that holds the most of the query's weight
// (the first unit when only the heading matched) and runs on through the
// following units while they fit in max characters.
func (ix *Index) snippet(sec *section, qterms []uint32, max int) string {
	best, bestScore := sec.u0, float32(0)
	for ui := sec.u0; ui < sec.u1; ui++ {
		u := ix.units[ui]
		var seen uint64
		var score float32
		for _, t := range ix.unitTerms[u.t0:u.t1] {
			if i := slices.Index(qterms, t); i >= 0 && seen&(1<<i) == 0 {
				seen |= 1 << i
				score += ix.idf[t]
			}
		}
		if score > bestScore {
			best, bestScore = ui, score
		}
	}
	first := ix.units[best]
	end := first.end
	runes := utf8.RuneCountInString(sec.text[first.start:first.end])
	for ui := best + 1; ui < sec.u1 && runes < max; ui++ {
		u := ix.units[ui]
		n := 1 + utf8.RuneCountInString(sec.text[u.start:u.end])
		if runes+n > max {
			break
		}
		runes += n
		end = u.end
	}
	return truncate(sec.text[first.start:end], max)
}

// truncate cuts s to at most max characters, at a space when one is near
// the end, and marks the cut with an ellipsis. It never splits a character.
func truncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	cut, n := 0, 0
	for i := range s {
		if n == max-1 {
			cut = i
			break
		}
		n++
	}
	for i := cut - 1; i > cut*2/3; i-- {
		if s[i] == ' ' {
			cut = i
			break
		}
	}
	return trimRightSpacePunct(s[:cut]) + "…"
}

func trimRightSpacePunct(s string) string {
	for len(s) > 0 {
		switch s[len(s)-1] {
		case ' ', ',', ';', ':', '-':
			s = s[:len(s)-1]
			continue
		}
		break
	}
	return s
}
