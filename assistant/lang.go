package assistant

import (
	"slices"
	"strconv"
	"strings"
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

// accepted reads an Accept-Language header (RFC 9110 12.5.4): the primary
// tag of highest q with a resting sentence, "" when none has.
func (a *Assistant) accepted(h string) string {
	best, bestQ := "", 0.0
	for i, part := range strings.Split(h, ",") {
		if i >= 16 {
			break // an untrusted header: read a few entries only
		}
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		primary, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if _, ok := a.cfg.Resting[primary]; ok && q > bestQ {
			best, bestQ = primary, q
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
