package tollfree

import (
	"errors"
	"io"
	"strings"

	"github.com/tollfree/tollfree/assistant"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/content"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/search"
)

// This file is a site assistant's flow (issue 14), woven into Serve and
// ServeStream for a chain with an assistant: block, on POST /v1/ask and on
// the chat API alike:
//
//  1. the call becomes the assistant's request (package assistant): its
//     prompt is the only system message, the content goes with it, then
//     the history kept and the question;
//  2. a rule answers at once, with no call and no quota (seed 003 rule 7);
//  3. else the usual flow: the caller check, the cache (keyed by the
//     normalized question, the history kept and the content's version),
//     the routes, each given as much of the content as its context takes
//     (Shape), and, when every route rests or the site's cap is reached, a
//     search answer with links in the visitor's language;
//  4. the answer gets its sources; on the chat API they end its text.

// Content is what a site assistant answers from: the index in force. It
// may change between two calls (a reload); each request uses one.
type Content interface {
	Current() *search.Index
}

// siteAssistant is a chain's assistant and its content.
type siteAssistant struct {
	*assistant.Assistant
	content Content
}

func (sa *siteAssistant) version() string {
	if ix := sa.content.Current(); ix != nil {
		return ix.Version()
	}
	return ""
}

// search is the assistant's answer when no model can give one.
func (sa *siteAssistant) search(c *Call) string {
	q := lastUser(c.Request)
	text, _, _ := sa.Search(sa.content.Current(), q, sa.Language(c.Language, q))
	return text
}

// openAssistants makes the assistant of every assistant chain, over the
// live content opened for it (openContents): a folder that cannot be read
// is logged there and the assistant answers from none (it says the answer
// is not there) until it can be; a broken folder never stops the gateway.
func openAssistants(p *config.Plan, contents map[string]*content.Library) map[string]*siteAssistant {
	out := make(map[string]*siteAssistant)
	for _, name := range p.ChainOrder {
		if a := p.Chains[name].Assistant; a != nil {
			out[name] = &siteAssistant{Assistant: assistant.New(a), content: contents[name]}
		}
	}
	return out
}

// Shape gives a route of an assistant chain as much of the content as its
// context takes (route.Shaper; seed 001): the whole when it fits, else the
// sections that best match the question and recent history.
func (g *Gateway) Shape(ch *config.Chain, rt *config.Route, req *llm.Request) (*llm.Request, string) {
	sa := g.assistants[ch.Name]
	if sa == nil || rt.MaxContext <= 0 {
		return req, ""
	}
	reserve := max(req.MaxTokens, answerRoom)
	if rt.MaxOutput > 0 {
		reserve = min(reserve, rt.MaxOutput)
	}
	return sa.Fit(sa.content.Current(), req, rt.MaxContext-reserve)
}

// answerRoom is the context kept for an assistant's answer when the
// request sets no max_tokens.
const answerRoom = 512

// prepare turns a call on an assistant chain into the assistant's request:
// the last user message is the question, the user and assistant turns
// before it the history, any system message ignored. A rule that matches
// answers it: ok is true and the call needs nothing else.
func (g *Gateway) prepare(sa *siteAssistant, c *Call) (rule string, ok bool, err error) {
	orig := c.Request
	last := -1
	for i := len(orig.Messages) - 1; i >= 0; i-- {
		if orig.Messages[i].Role == "user" {
			last = i
			break
		}
	}
	if last < 0 {
		return "", false, errors.New("tollfree: an assistant needs a question: the request has no user message (" + assistant.ErrQuestion.Error() + ")")
	}
	// The question as the model will read it, and the cache key with it:
	// nothing a reader cannot see (assistant.Clean).
	q := assistant.Clean(orig.Messages[last].Content)
	if err := assistant.Check(q); err != nil {
		return "", false, err
	}
	if text, ok := sa.Rule(q); ok {
		return text, true, nil
	}
	req := sa.Request(sa.content.Current(), q, orig.Messages[:last])
	req.Stream, req.User = orig.Stream, orig.User
	c.Request = req
	return "", false, nil
}

// finish gives an assistant's answer its sources; on the chat API (not
// Ask) a model's answer ends with them as Markdown links.
func (sa *siteAssistant) finish(a *Answer, c *Call) {
	if a.ServedBy == ServedByRule {
		return
	}
	a.Sources = assistant.Sources(sa.content.Current(), a.Content, lastUser(c.Request))
	if !c.Ask && a.ServedBy != ServedByFallbackSearch {
		a.Content += assistant.Links(a.Sources)
	}
}

// finishStream gives a streamed answer its sources, read once it ends.
func (sa *siteAssistant) finishStream(s *AnswerStream, c *Call) {
	if s.ServedBy == ServedByRule {
		return
	}
	ss := &sourcingStream{ChunkStream: s.ChunkStream, sa: sa, question: lastUser(c.Request), links: !c.Ask && s.ServedBy != ServedByFallbackSearch}
	s.ChunkStream = ss
	s.Sources = func() []llm.Source { return ss.sources }
}

// sourcingStream keeps the text of a stream to name its sources at the
// end, and on the chat API sends them as a last chunk of text.
type sourcingStream struct {
	llm.ChunkStream
	sa       *siteAssistant
	question string
	links    bool
	text     strings.Builder
	sources  []llm.Source
	done     bool
	tail     []llm.Chunk // what is sent after the stream's end
}

func (s *sourcingStream) Next() (llm.Chunk, error) {
	if s.done {
		if len(s.tail) == 0 {
			return llm.Chunk{}, io.EOF
		}
		ch := s.tail[0]
		s.tail = s.tail[1:]
		return ch, nil
	}
	ch, err := s.ChunkStream.Next()
	if err == nil {
		s.text.WriteString(ch.Content)
		if s.links && ch.FinishReason != "" && ch.Content == "" {
			// Hold the finish until the links are sent.
			s.tail = append(s.tail, ch)
			return s.Next()
		}
		return ch, nil
	}
	if !errors.Is(err, io.EOF) {
		return ch, err
	}
	s.done = true
	s.sources = assistant.Sources(s.sa.content.Current(), s.text.String(), s.question)
	if links := assistant.Links(s.sources); s.links && links != "" {
		s.tail = append([]llm.Chunk{{Content: links}}, s.tail...)
	}
	return s.Next()
}

func (s *sourcingStream) Buffered() int {
	if s.done {
		return len(s.tail)
	}
	return s.ChunkStream.Buffered()
}

// ruleAnswer is a rule's answer (or the error of a question that cannot
// be asked): no route, no quota, no cache.
func (g *Gateway) ruleAnswer(ch *config.Chain, text, id string, err error) (*Answer, error) {
	if err != nil {
		g.obs.Request(ch.Name, outcomeRejected, 0)
		return nil, err
	}
	g.obs.Request(ch.Name, outcomeAnswered, 0)
	return fallbackAnswer(ServedByRule, text, id), nil
}
