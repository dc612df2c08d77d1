package assistant

import (
	"slices"
	"strings"

	"golang.org/x/text/language"
)

// hints are frequent short words of each language with a default resting
// sentence, for guessing a question's language when the visitor's browser
// sent no Accept-Language.
var hints = map[string][]string{
	"en": {"the", "how", "what", "where", "is", "are", "do", "can", "i", "my", "you", "to", "and", "of"},
	"fr": {"le", "la", "les", "comment", "est", "que", "quoi", "où", "je", "mon", "vous", "un", "une", "des", "pour", "et", "puis"},
	"de": {"der", "die", "das", "wie", "ist", "was", "wo", "ich", "mein", "sie", "und", "ein", "eine", "kann", "nicht"},
	"es": {"el", "la", "los", "las", "cómo", "como", "qué", "dónde", "es", "yo", "mi", "usted", "y", "un", "una", "puedo", "para"},
}

// Language picks the visitor's language among those with a resting
// sentence: the Accept-Language entry of highest weight that has one,
// else the language whose frequent words the question holds most, else
// English (or the first configured language when English has none).
func (a *Assistant) Language(acceptLanguage, question string) string {
	if l := a.accepted(acceptLanguage); l != "" {
		return l
	}
	words := strings.Fields(Normalize(question))
	best, bestN := "", 0
	for _, l := range []string{"en", "fr", "de", "es"} {
		if _, ok := a.cfg.Resting[l]; !ok {
			continue
		}
		n := 0
		for _, w := range words {
			if slices.Contains(hints[l], w) {
				n++
			}
		}
		if n > bestN {
			best, bestN = l, n
		}
	}
	if best != "" {
		return best
	}
	if _, ok := a.cfg.Resting["en"]; ok {
		return "en"
	}
	langs := make([]string, 0, len(a.cfg.Resting))
	for l := range a.cfg.Resting {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	if len(langs) == 0 {
		return "en"
	}
	return langs[0]
}

// accepted reads an Accept-Language header (RFC 9110 12.5.4) with
// golang.org/x/text/language: the language of highest q whose primary
// tag has a resting sentence, "" when none has. The header is a
// stranger's: only its first 16 entries are read, and an entry that does
// not parse is left out rather than spoiling the others.
func (a *Assistant) accepted(h string) string {
	parts := strings.SplitN(h, ",", 17)
	if len(parts) > 16 {
		parts = parts[:16]
	}
	tags, qs, err := language.ParseAcceptLanguage(strings.Join(parts, ","))
	if err != nil {
		// Keep what parses, entry by entry, in the header's order.
		tags, qs = tags[:0], qs[:0]
		for _, p := range parts {
			if t, q, err := language.ParseAcceptLanguage(p); err == nil && len(t) == 1 {
				tags, qs = append(tags, t[0]), append(qs, q[0])
			}
		}
	}
	best, bestQ := "", float32(0)
	for i, t := range tags {
		base, _ := t.Base()
		if _, ok := a.cfg.Resting[base.String()]; ok && qs[i] > bestQ {
			best, bestQ = base.String(), qs[i]
		}
	}
	return best
}

// Resting returns the resting sentence of a language Language picked.
func (a *Assistant) Resting(lang string) string {
	if s, ok := a.cfg.Resting[lang]; ok {
		return s
	}
	return a.cfg.Resting["en"]
}
