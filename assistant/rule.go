package assistant

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/tollfree/tollfree/llm"
)

// Clean is a visitor's text as the model is sent it: without the
// characters that show nothing but still reach a model (issue 32: a
// question with instructions in Unicode tag characters was cached under
// the clean question's key and its planted answer served to everyone who
// asked it): format characters (Unicode category Cf: zero-width spaces and
// joiners, bidi controls, the word joiner, the byte order mark, soft
// hyphens, and the tag characters U+E0001 and U+E0020-U+E007F), the rest
// of the tag block (U+E0000-U+E007F), private-use characters and control
// characters other than tab and line breaks; then in Unicode
// normalization form NFKC, so that look-alike forms (full-width letters,
// circled and mathematical alphanumerics, ligatures) are the letters they
// show. Every user and assistant turn of an assistant's request goes
// through it once, and the cache key (KeyRequest) is made from the same
// text, so no visitor can hide text from the key.
func Clean(s string) string {
	return norm.NFKC.String(strings.Map(visible, norm.NFKC.String(strings.Map(visible, s))))
}

// visible returns r, or -1 (dropped) for a character Clean removes.
func visible(r rune) rune {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return r
	case r >= 0xE0000 && r <= 0xE007F,
		unicode.Is(unicode.Cf, r), unicode.Is(unicode.Co, r), unicode.IsControl(r):
		return -1
	}
	return r
}

// Normalize folds a question for the cache and the rules: lower case,
// punctuation, spaces and controls as spaces, runs of spaces as one,
// trimmed (seed 000: "keyed by the question's normalised text"). Letters,
// digits, marks and symbols are kept: any other difference is one a
// reader of the two questions sees (their case, their punctuation), and
// text a reader cannot see is gone before (Clean).
func Normalize(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.IsSymbol(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
			space = false
			continue
		}
		space = true
	}
	return b.String()
}

// Rule returns the answer of the first rule the question matches: a match
// list holding the whole question (both normalized), or a pattern found in
// it. ok is false when none does.
func (a *Assistant) Rule(question string) (answer string, ok bool) {
	norm := Normalize(question)
	for _, r := range a.cfg.Rules {
		if r.Pattern != nil && r.Pattern.MatchString(question) {
			return r.Answer, true
		}
		for _, m := range r.Match {
			if Normalize(m) == norm {
				return r.Answer, true
			}
		}
	}
	return "", false
}

// KeyRequest is what an assistant's answer is cached under, with the
// content's version: the question and the history kept, normalized, and
// nothing of the system message (the version stands for the content).
func KeyRequest(req *llm.Request) *llm.Request {
	out := &llm.Request{}
	for _, m := range req.Messages {
		if m.Role != "system" {
			out.Messages = append(out.Messages, llm.Message{Role: m.Role, Content: Normalize(m.Content)})
		}
	}
	return out
}
