package secret

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Mask is what a scrubbed secret becomes.
const Mask = "[secret]"

// Length thresholds; see the package doc.
const (
	// MinLen is the shortest value scrubbed at all.
	MinLen = 4
	// AnywhereLen is the shortest value scrubbed anywhere, inside words
	// and in part (fragments of this length).
	AnywhereLen = 8
)

// Set is an immutable set of secret values, compiled for scrubbing. It is
// safe for concurrent use.
type Set struct {
	// long holds every encoded form of the values of AnywhereLen bytes or
	// more, with the prefix and suffix searched for.
	long []form
	// short holds the encoded forms of the values of MinLen to
	// AnywhereLen-1 bytes, matched as whole words.
	short []string
	// values are the raw values of MinLen bytes or more, for masked
	// echoes.
	values []string
	// skipped counts the non-empty values shorter than MinLen.
	skipped int
}

// form is one encoded form of a long value.
type form struct {
	full, head, tail string
}

// New compiles values into a Set. Empty values are ignored; duplicates are
// kept once.
func New(values ...string) *Set {
	s := &Set{}
	for _, v := range values {
		switch {
		case v == "" || slices.Contains(s.values, v):
			continue
		case len(v) < MinLen:
			s.skipped++
			continue
		}
		s.values = append(s.values, v)
		for _, f := range encodings(v) {
			if len(v) < AnywhereLen {
				if !slices.Contains(s.short, f) {
					s.short = append(s.short, f)
				}
				continue
			}
			if !slices.ContainsFunc(s.long, func(x form) bool { return x.full == f }) {
				s.long = append(s.long, form{full: f, head: f[:AnywhereLen], tail: f[len(f)-AnywhereLen:]})
			}
		}
	}
	return s
}

// Len returns how many values the set scrubs.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.values)
}

// Skipped returns how many values were too short (under MinLen bytes) to
// be scrubbed.
func (s *Set) Skipped() int {
	if s == nil {
		return 0
	}
	return s.skipped
}

// String describes the set without any value: "3 secrets".
func (s *Set) String() string { return strconv.Itoa(s.Len()) + " secrets" }

// GoString is String, so that %#v prints no value either.
func (s *Set) GoString() string { return s.String() }

// Scrub returns text with every secret in it replaced by Mask. It returns
// text itself, without allocating, when there is none.
func (s *Set) Scrub(text string) string {
	if s.Len() == 0 || len(text) < 2 {
		return text
	}
	spans := s.find(text)
	if len(spans) == 0 {
		return text
	}
	return replace(text, spans)
}

// ScrubBytes is Scrub for a byte slice. It returns b itself when there is
// nothing to scrub, else a new slice.
func (s *Set) ScrubBytes(b []byte) []byte {
	if s.Len() == 0 || len(b) < 2 {
		return b
	}
	text := string(b)
	spans := s.find(text)
	if len(spans) == 0 {
		return b
	}
	return []byte(replace(text, spans))
}

// Err returns err with its text scrubbed: err itself when its text holds
// no secret, else an error whose Error is the scrubbed text and whose
// Unwrap is err, so that errors.Is and errors.As still see the chain.
func (s *Set) Err(err error) error {
	if err == nil || s.Len() == 0 {
		return err
	}
	msg := err.Error()
	if clean := s.Scrub(msg); clean != msg {
		return &scrubbedError{err: err, msg: clean}
	}
	return err
}

type scrubbedError struct {
	err error
	msg string
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// span is a byte range [start, end) of text to replace.
type span struct{ start, end int }

// find returns the ranges of text holding a secret, unsorted and possibly
// overlapping.
func (s *Set) find(text string) []span {
	var spans []span
	for _, f := range s.long {
		spans = fragments(text, f, spans)
	}
	for _, v := range s.short {
		spans = words(text, v, spans)
	}
	return s.masked(text, spans)
}

// fragments adds every run of text of AnywhereLen bytes or more that is a
// prefix or a suffix of f.full; a whole occurrence is both.
func fragments(text string, f form, spans []span) []span {
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], f.head)
		if j < 0 {
			break
		}
		start := i + j
		spans = append(spans, span{start, start + commonPrefix(text[start:], f.full)})
		i = start + 1
	}
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], f.tail)
		if j < 0 {
			break
		}
		end := i + j + len(f.tail)
		spans = append(spans, span{end - commonSuffix(text[:end], f.full), end})
		i += j + 1
	}
	return spans
}

// words adds every occurrence of v in text that is not next to a letter
// or digit.
func words(text, v string, spans []span) []span {
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], v)
		if j < 0 {
			break
		}
		start := i + j
		end := start + len(v)
		if (start == 0 || !isAlnum(text[start-1])) && (end == len(text) || !isAlnum(text[end])) {
			spans = append(spans, span{start, end})
		}
		i = start + 1
	}
	return spans
}

// masks are the runs a provider writes in place of a key's middle: at
// least start, then any number of unit.
var masks = []struct{ start, unit string }{{"**", "*"}, {"...", "."}, {"…", "…"}}

// masked adds the masked echoes: a mask with the start of a value before
// it and its end after it.
func (s *Set) masked(text string, spans []span) []span {
	for _, m := range masks {
		for i := 0; i < len(text); {
			j := strings.Index(text[i:], m.start)
			if j < 0 {
				break
			}
			start := i + j
			end := start + len(m.start)
			for strings.HasPrefix(text[end:], m.unit) {
				end += len(m.unit)
			}
			for _, v := range s.values {
				h := suffixPrefix(text[:start], v)
				t := prefixSuffix(text[end:], v)
				if h >= 2 && t >= 2 || h >= MinLen || t >= MinLen {
					spans = append(spans, span{start - h, end + t})
				}
			}
			i = end
		}
	}
	return spans
}

// suffixPrefix returns the length of the longest end of before that is a
// start of v, shorter than v.
func suffixPrefix(before, v string) int {
	for k := min(len(before), len(v)-1); k > 0; k-- {
		if strings.HasSuffix(before, v[:k]) {
			return k
		}
	}
	return 0
}

// prefixSuffix returns the length of the longest start of after that is an
// end of v, shorter than v.
func prefixSuffix(after, v string) int {
	for k := min(len(after), len(v)-1); k > 0; k-- {
		if strings.HasPrefix(after, v[len(v)-k:]) {
			return k
		}
	}
	return 0
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	for i := 1; i <= n; i++ {
		if a[len(a)-i] != b[len(b)-i] {
			return i - 1
		}
	}
	return n
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// replace writes text with each of the merged spans replaced by Mask.
func replace(text string, spans []span) string {
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	b.Grow(len(text))
	pos := 0
	for i := 0; i < len(spans); {
		start, end := spans[i].start, spans[i].end
		for i++; i < len(spans) && spans[i].start <= end; i++ {
			end = max(end, spans[i].end)
		}
		b.WriteString(text[pos:start])
		b.WriteString(Mask)
		pos = end
	}
	b.WriteString(text[pos:])
	return b.String()
}

// encodings returns v and the forms it takes in JSON, Go quoting, URLs and
// HTML, each once.
func encodings(v string) []string {
	out := []string{v}
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, escapeHTML := range []bool{true, false} {
		j := jsonText(v, escapeHTML)
		add(j)
		add(strings.ReplaceAll(j, "/", `\/`))
	}
	q := strconv.Quote(v)
	add(q[1 : len(q)-1])
	add(url.QueryEscape(v))
	add(url.PathEscape(v))
	add(html.EscapeString(v))
	add(templateEscaper.Replace(v))
	return out
}

// jsonText is v as the inside of a JSON string.
func jsonText(v string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if enc.Encode(v) != nil {
		return ""
	}
	s := strings.TrimSuffix(b.String(), "\n")
	return s[1 : len(s)-1]
}

// templateEscaper escapes as html/template does in HTML text (its
// htmlReplacementTable), where '+' becomes "&#43;".
var templateEscaper = strings.NewReplacer(
	"\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;",
)
