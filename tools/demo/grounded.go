package demo

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/tollfree/tollfree/emulator"
)

// groundedReply is how the demo's emulated models answer the assistant
// (emulator.Model.Reply): from the content in their prompt, as a real
// model told to answer only from it would. The prompt's content comes in
// sections, each introduced by a line carrying its link; the reply quotes
// the first two sentences of the section sharing the most words with the
// visitor's question, followed by its link in Markdown. It reads no
// particular prompt layout beyond "a link on the line that starts a
// section", so that the assistant's prompt may change without breaking
// the demo.
func groundedReply(turns []emulator.Turn) string {
	context, question := splitTurns(turns)
	best, bestScore := section{}, -1
	words := keywords(question)
	for _, s := range sections(context) {
		if n := s.score(words); n > bestScore {
			best, bestScore = s, n
		}
	}
	if bestScore < 0 {
		return "I could not find that in this site's content. The contact page can help."
	}
	text := firstSentences(best.body, 2)
	if text == "" {
		text = "This page covers it:"
	}
	return text + " [" + best.title + "](" + best.url + ")"
}

// splitTurns returns the text the model was given to read and the
// visitor's question: the last user turn, or its last paragraph when the
// content came in the same message.
func splitTurns(turns []emulator.Turn) (context, question string) {
	last := -1
	for i, t := range turns {
		if t.Role == "user" {
			last = i
		}
	}
	var b strings.Builder
	for i, t := range turns {
		if t.Role == "assistant" {
			continue // an earlier answer is not content
		}
		if i == last && !linkRE.MatchString(t.Text) {
			question = t.Text
			continue
		}
		b.WriteString(t.Text)
		b.WriteString("\n")
		if i == last {
			paras := strings.Split(strings.TrimSpace(t.Text), "\n\n")
			question = paras[len(paras)-1]
		}
	}
	return b.String(), question
}

// titleAttr is a title="..." attribute on a section's first line.
var titleAttr = regexp.MustCompile(`title="([^"]*)"`)

var linkRE = regexp.MustCompile(`https?://[^\s<>()\[\]"'` + "`" + `]+`)

// section is a stretch of the prompt that starts on a line with a link.
type section struct {
	title, url, body string
}

// sections cuts text at each line carrying a link.
func sections(text string) []section {
	var out []section
	var cur *section
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.body = strings.TrimSpace(body.String())
			out = append(out, *cur)
		}
		body.Reset()
	}
	for line := range strings.SplitSeq(text, "\n") {
		if u := linkRE.FindString(line); u != "" {
			flush()
			u = strings.TrimRight(u, ".,;:!?")
			title := titleOf(strings.Replace(line, u, "", 1))
			if m := titleAttr.FindStringSubmatch(line); m != nil {
				title = titleOf(m[1]) // the assistant's <section title="..." url="...">
			}
			cur = &section{url: u, title: title}
			continue
		}
		body.WriteString(line)
		body.WriteString("\n")
	}
	flush()
	return out
}

// titleOf cleans a section's first line, its link taken out, into a link
// text: markup and labels dropped.
func titleOf(line string) string {
	t := strings.Map(func(r rune) rune {
		if strings.ContainsRune("#*[]()<>|\"=`", r) {
			return ' '
		}
		return r
	}, line)
	for _, label := range []string{"source:", "url:", "link:", "section:", "title:"} {
		if i := strings.Index(strings.ToLower(t), label); i >= 0 {
			t = t[:i] + t[i+len(label):]
		}
	}
	t = strings.Join(strings.Fields(t), " ")
	t = strings.Trim(t, " -—:,;")
	if t == "" {
		return "Source"
	}
	return t
}

// keywords are the question's words of four letters or more, folded.
func keywords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 4 {
			out = append(out, strings.TrimSuffix(w, "s"))
		}
	}
	return out
}

// score counts the question's words found in the section: twice in its
// text, once in its title or link, so that of a page's sections the one
// that says it wins over the one only titled like it.
func (s section) score(words []string) int {
	body, label := strings.ToLower(s.body), strings.ToLower(s.title+" "+s.url)
	n := 0
	for _, w := range words {
		if strings.Contains(body, w) {
			n += 2
		}
		if strings.Contains(label, w) {
			n++
		}
	}
	return n
}

// firstSentences returns up to n sentences of text, whitespace folded.
func firstSentences(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	end := 0
	for range n {
		i := strings.Index(text[end:], ". ")
		if i < 0 {
			return text
		}
		end += i + 1
	}
	return text[:end]
}
