package assistant

import (
	"strings"
	"unicode"

	"github.com/tollfree/tollfree/llm"
)

// Normalize folds a question for the cache and the rules: lower case,
// punctuation and symbols as spaces, runs of spaces as one, trimmed (seed
// 000: "keyed by the question's normalised text").
func Normalize(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
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
