package openai

import "strings"

const (
	openTag  = "<think>"
	closeTag = "</think>"
)

// ThinkFilter separates <think>…</think> blocks from streamed content
// (DeepSeek-R1-style models, Groq's reasoning_format raw), also when a tag
// is split across chunks: it holds back a chunk's tail that could be the
// start of a tag until the next Push shows what it is. The whitespace that
// follows a closing tag is dropped from the content. The zero value is
// ready to use; a ThinkFilter is for one stream and is not safe for
// concurrent use.
type ThinkFilter struct {
	inThink  bool
	trimLead bool   // drop whitespace at the start of content after </think>
	pending  string // a held-back tail that may begin a tag
}

// Push takes the next piece of streamed content and returns the parts of
// it, and of what was held back before, that are now known to be answer
// content and reasoning.
func (f *ThinkFilter) Push(s string) (content, reasoning string) {
	if f.pending == "" && !f.inThink && !f.trimLead && strings.IndexByte(s, '<') < 0 {
		return s, "" // the common case: no tag anywhere near
	}
	s = f.pending + s
	f.pending = ""
	var c, r strings.Builder
	for s != "" {
		tag := openTag
		if f.inThink {
			tag = closeTag
		}
		i := strings.Index(s, tag)
		if i < 0 {
			keep := partialTagSuffix(s, tag)
			f.emit(&c, &r, s[:len(s)-keep])
			f.pending = s[len(s)-keep:]
			break
		}
		f.emit(&c, &r, s[:i])
		s = s[i+len(tag):]
		f.inThink = !f.inThink
		f.trimLead = !f.inThink
	}
	return c.String(), r.String()
}

// Flush returns what Push held back, at the end of the stream: an
// unfinished tag is text of whichever side it was on.
func (f *ThinkFilter) Flush() (content, reasoning string) {
	var c, r strings.Builder
	f.emit(&c, &r, f.pending)
	f.pending = ""
	return c.String(), r.String()
}

func (f *ThinkFilter) emit(c, r *strings.Builder, s string) {
	if f.inThink {
		r.WriteString(s)
		return
	}
	if f.trimLead {
		s = strings.TrimLeft(s, " \t\r\n")
		if s == "" {
			return
		}
		f.trimLead = false
	}
	c.WriteString(s)
}

// partialTagSuffix returns the length of the longest proper prefix of tag
// that s ends with.
func partialTagSuffix(s, tag string) int {
	for n := min(len(tag)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
