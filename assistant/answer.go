package assistant

import (
	"sort"
	"strings"

	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/search"
)

const (
	// searchSections caps the sections a search answer quotes, and the
	// sources given when a model cited none.
	searchSections = 3
	// keepRatio leaves out of a search answer a runner-up scoring under
	// this share of the best section: a distant match is noise.
	keepRatio = 0.35
	// MaxAnswer caps the characters (runes) of a search answer.
	MaxAnswer = 1200
	// maxSources caps the sources of one answer.
	maxSources = 5
)

// Search is the one answer given without a model (seeds 000, 001, 003),
// for a site assistant and for a plain chain whose fallback is a search
// alike: the resting sentence in lang (config.DefaultResting's four
// languages, or the assistant's own), then the sections that best match
// the question, each as a Markdown link to it (or its title, without a
// base URL) and its best passage, the close runners-up only; or, when
// nothing matches, the contact page if one is set. It never echoes the
// question. found reports whether a section matched; sources are the
// sections quoted. text is valid UTF-8 of at most MaxAnswer characters.
func (a *Assistant) Search(ix *search.Index, question, lang string) (text string, sources []llm.Source, found bool) {
	var b strings.Builder
	b.WriteString(a.Resting(lang))
	var hits []search.Hit
	if ix != nil {
		hits = ix.Search(question, searchSections)
	}
	for i := range hits {
		h := &hits[i]
		if i > 0 && h.Score < keepRatio*hits[0].Score {
			break
		}
		b.WriteString("\n\n")
		if h.URL != "" {
			b.WriteString("[" + mdText(title(h)) + "](" + h.URL + ")")
			sources = append(sources, llm.Source{Title: title(h), URL: h.URL})
		} else {
			b.WriteString(title(h))
		}
		if h.Snippet != "" {
			b.WriteString(": " + h.Snippet)
		}
	}
	if len(hits) == 0 && a.cfg.Contact != "" {
		b.WriteString("\n\n[" + a.cfg.Contact + "](" + a.cfg.Contact + ")")
	}
	return cut(b.String(), MaxAnswer), sources, len(hits) > 0
}

// Sources names the sections an answer drew on: those whose link it holds,
// in the order it cites them; when it cites none, the sections that best
// match the question (at most three), since the model was given them.
func Sources(ix *search.Index, answer, question string) []llm.Source {
	if ix == nil {
		return nil
	}
	type cited struct {
		at  int
		src llm.Source
	}
	var found []cited
	seen := map[string]bool{}
	for _, h := range ix.All() {
		if h.URL == "" || seen[h.URL] {
			continue
		}
		if i := linkAt(answer, h.URL); i >= 0 {
			seen[h.URL] = true
			found = append(found, cited{i, llm.Source{Title: title(&h), URL: h.URL}})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].at < found[j].at })
	var out []llm.Source
	for _, c := range found {
		if len(out) < maxSources {
			out = append(out, c.src)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, h := range ix.Search(question, searchSections) {
		if h.URL != "" && !seen[h.URL] {
			seen[h.URL] = true
			out = append(out, llm.Source{Title: title(&h), URL: h.URL})
		}
	}
	return out
}

// linkAt finds url in text as a whole link (not the prefix of a longer
// one, such as a page's URL inside its section's): its offset, or -1.
func linkAt(text, url string) int {
	for from := 0; ; {
		i := strings.Index(text[from:], url)
		if i < 0 {
			return -1
		}
		end := from + i + len(url)
		if end == len(text) || strings.ContainsRune(")]>\"' \n\t,", rune(text[end])) || (text[end] == '.' && (end+1 == len(text) || text[end+1] == ' ' || text[end+1] == '\n')) {
			return from + i
		}
		from = end
	}
}

// Links renders sources as the Markdown that ends an answer on the chat
// API (issue 14: "whose text ends with the sources as Markdown links").
func Links(sources []llm.Source) string {
	if len(sources) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nSources:")
	for _, s := range sources {
		b.WriteString("\n- [" + mdText(s.Title) + "](" + s.URL + ")")
	}
	return b.String()
}

func mdText(s string) string { return strings.NewReplacer("[", "(", "]", ")").Replace(s) }
