package assistant

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/search"
)

const (
	// MaxQuestion caps a question, in characters.
	MaxQuestion = 2000
	// maxTurn caps one history message, in characters: an earlier answer
	// may be longer than a question, not unbounded.
	maxTurn = 4000
)

// ErrQuestion is wrapped by the error for a question that cannot be asked:
// empty, or longer than MaxQuestion.
var ErrQuestion = errors.New("bad question")

// Check returns an error wrapping ErrQuestion, saying what is wrong, for a
// question that is empty or too long.
func Check(q string) error {
	switch n := utf8.RuneCountInString(q); {
	case strings.TrimSpace(q) == "":
		return fmt.Errorf("%w: the question is empty; ask something", ErrQuestion)
	case n > MaxQuestion:
		return fmt.Errorf("%w: the question is %d characters long; the most is %d", ErrQuestion, n, MaxQuestion)
	}
	return nil
}

// Assistant builds a site assistant's requests and answers from its
// configuration. It holds no content: each call is given the index in
// force, so a reload changes the next answer. It is safe for concurrent
// use.
type Assistant struct {
	cfg *config.Assistant
}

// New returns the assistant of a chain's configuration.
func New(cfg *config.Assistant) *Assistant { return &Assistant{cfg: cfg} }

// Config returns the assistant's configuration.
func (a *Assistant) Config() *config.Assistant { return a.cfg }

// Request builds what a model is asked: the system message (prompt and
// every section of ix), the last exchanges of history kept (History), and
// the question as the last user message. Fit condenses it for a route.
func (a *Assistant) Request(ix *search.Index, question string, history []llm.Message) *llm.Request {
	var all []search.Hit
	if ix != nil {
		all = ix.All()
	}
	return a.build(all, question, History(history, a.cfg.History))
}

func (a *Assistant) build(sections []search.Hit, question string, history []llm.Message) *llm.Request {
	msgs := make([]llm.Message, 0, len(history)+2)
	msgs = append(msgs, llm.Message{Role: "system", Content: a.system(sections)})
	msgs = append(msgs, history...)
	msgs = append(msgs, llm.Message{Role: "user", Content: question})
	return &llm.Request{Messages: msgs}
}

// system is the system message: the prompt, then the content.
func (a *Assistant) system(sections []search.Hit) string {
	var b strings.Builder
	b.WriteString(a.Prompt())
	b.WriteString("\n\n<content>\n")
	for i := range sections {
		writeSection(&b, &sections[i])
	}
	b.WriteString("</content>")
	return b.String()
}

// History keeps, of a conversation, the user and assistant turns of the
// last n exchanges (an exchange starts at a user turn), each cut to a
// bounded length. Any other role (system, developer, tool) is dropped: a
// visitor's history never speaks with the assistant's own voice.
func History(msgs []llm.Message, n int) []llm.Message {
	if n <= 0 {
		return nil
	}
	var kept []llm.Message
	for _, m := range msgs {
		if m.Role == "user" || m.Role == "assistant" {
			kept = append(kept, llm.Message{Role: m.Role, Content: cut(Clean(m.Content), maxTurn)})
		}
	}
	users := 0
	for i := len(kept) - 1; i >= 0; i-- {
		if kept[i].Role == "user" {
			if users++; users == n {
				return kept[i:]
			}
		}
	}
	// Fewer than n exchanges: keep them all, but never open on an answer.
	for len(kept) > 0 && kept[0].Role != "user" {
		kept = kept[1:]
	}
	return kept
}

// parts splits a request built by Request into its question and history.
func parts(req *llm.Request) (question string, history []llm.Message) {
	n := len(req.Messages)
	if n < 2 {
		return "", nil
	}
	return req.Messages[n-1].Content, req.Messages[1 : n-1]
}

// Fit returns req (built by Request) condensed to at most maxTokens
// (quota.Estimate): the sections best matching the question and the
// history's user turns, best first, as many as fit; note says what was
// left out ("" when req fits as it is). The prompt, history and question
// are never cut: a route too small even for those gets no sections.
func (a *Assistant) Fit(ix *search.Index, req *llm.Request, maxTokens int) (*llm.Request, string) {
	if ix == nil || quota.Estimate(req) <= maxTokens || len(req.Messages) < 2 {
		return req, ""
	}
	question, history := parts(req)
	query := question
	for _, m := range history {
		if m.Role == "user" {
			query += "\n" + m.Content
		}
	}
	all := ix.All()
	ranked := ix.Search(query, len(all))
	seen := make(map[string]bool, len(ranked))
	order := make([]search.Hit, 0, len(all))
	for _, h := range append(ranked, all...) {
		k := h.Path + "#" + h.Anchor + "#" + h.Heading
		if !seen[k] {
			seen[k] = true
			order = append(order, h)
		}
	}
	room := maxTokens - quota.Estimate(a.build(nil, question, history))
	var keep []search.Hit
	for _, h := range order {
		var b strings.Builder
		writeSection(&b, &h)
		cost := quota.Estimate(&llm.Request{Messages: []llm.Message{{Content: b.String()}}})
		if cost > room {
			continue // a smaller section further down may still fit
		}
		room -= cost
		keep = append(keep, h)
	}
	out := a.build(keep, question, history)
	for len(keep) > 0 && quota.Estimate(out) > maxTokens {
		keep = keep[:len(keep)-1] // the estimate of parts is not additive
		out = a.build(keep, question, history)
	}
	return out, fmt.Sprintf("content condensed to %d of %d sections to fit %d tokens", len(keep), len(all), maxTokens)
}

// defuse keeps a page from opening or closing a block of the content: its
// <section and <content tags lose their bracket.
var defuse = regexp.MustCompile(`(?i)<(/?)(section|content)`)

func writeSection(b *strings.Builder, h *search.Hit) {
	b.WriteString(`<section title="`)
	b.WriteString(attr(title(h)))
	b.WriteString(`" url="`)
	b.WriteString(attr(h.URL))
	b.WriteString("\">\n")
	b.WriteString(defuse.ReplaceAllString(h.Text, "‹$1$2"))
	b.WriteString("\n</section>\n")
}

func attr(s string) string {
	return strings.NewReplacer(`"`, "'", "<", "", ">", "", "\n", " ").Replace(s)
}

// title names a section: its page's title and its heading.
func title(h *search.Hit) string {
	if h.Heading == "" || h.Heading == h.Title {
		return h.Title
	}
	return h.Title + " — " + h.Heading
}

// cut keeps at most n characters of s.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
