package search

import (
	"slices"
	"strings"
	"unicode/utf8"
)

const (
	// MaxAnswer caps the characters (runes) of an Answer.
	MaxAnswer = 1200
	// answerSections caps the sections an Answer quotes.
	answerSections = 3
	// keepRatio drops a runner-up scoring under this share of the best.
	keepRatio = 0.35
	// maxSubject caps the words and characters of the subject an Answer
	// names.
	maxSubjectWords, maxSubjectRunes = 6, 60
	// maxHitSnippet caps one quoted passage, so one hit is not a wall.
	maxHitSnippet = 400
)

// Answer is the assistant's reply when every route of a chain is resting:
// it says so plainly and quotes the best one to three sections, each under
// its page title (and link, with Options.BaseURL):
//
//	The assistant is resting right now; here is what the site says about “reset password”:
//
//	Account › Resetting your password: Open Settings and choose Security. …
//
// The subject names only the query's words that the content holds, so the
// reply never echoes other text of the visitor's. ok is false, with text
// "", when nothing matches (an empty query, only stop words, or words the
// content lacks); the caller then answers with a fixed message. text is
// valid UTF-8 of at most MaxAnswer characters.
func (ix *Index) Answer(query string) (text string, ok bool) {
	s := ix.get()
	defer ix.scratch.Put(s)
	top := ix.rank(s, query, answerSections)
	if len(top) == 0 {
		return "", false
	}
	keep := 1
	for keep < len(top) && top[keep].score >= keepRatio*top[0].score {
		keep++
	}
	var b strings.Builder
	b.WriteString("The assistant is resting right now; here is what the site says about “")
	b.WriteString(ix.subject(s, query))
	b.WriteString("”:")
	per := (MaxAnswer - utf8.RuneCountInString(b.String())) / keep
	for _, r := range top[:keep] {
		sec := &ix.sections[r.sec]
		pg := &ix.pages[sec.page]
		head := pg.title
		if sec.heading != "" {
			head += " › " + sec.heading
		}
		head = truncate(head, 100)
		tail := ""
		if u := sectionURL(pg, sec); u != "" && utf8.RuneCountInString(u) <= 200 {
			tail = " (" + u + ")"
		}
		room := per - 2 - utf8.RuneCountInString(head) - 2 - utf8.RuneCountInString(tail)
		b.WriteString("\n\n")
		b.WriteString(head)
		b.WriteString(": ")
		b.WriteString(ix.snippet(sec, s.qterms, min(room, maxHitSnippet)))
		b.WriteString(tail)
	}
	return truncate(b.String(), MaxAnswer), true
}

// subject lists, in the query's order and lower case, the query's words
// that the index knows (s.qterms), at most six words and 60 characters.
func (ix *Index) subject(s *scratch, query string) string {
	if len(query) > maxQuery {
		query = query[:maxQuery]
	}
	var b strings.Builder
	var used []uint32
	n, words, prevEnd := 0, 0, -1
	sc := scanner{s: query, tok: s.sc.tok}
	for words < maxSubjectWords && sc.next() {
		t := term(sc.tok)
		if t == nil {
			continue
		}
		id, ok := ix.terms[string(t)]
		if !ok || !slices.Contains(s.qterms, id) || slices.Contains(used, id) {
			continue
		}
		w := strings.ToLower(query[sc.start:sc.end])
		if n += utf8.RuneCountInString(w) + 1; n > maxSubjectRunes+1 {
			if words == 0 {
				b.WriteString(truncate(w, maxSubjectRunes))
			}
			break
		}
		if words > 0 && sc.start != prevEnd {
			b.WriteByte(' ') // adjacent ideographs stay together
		}
		b.WriteString(w)
		used = append(used, id)
		words++
		prevEnd = sc.end
	}
	s.sc.tok = sc.tok
	return b.String()
}
