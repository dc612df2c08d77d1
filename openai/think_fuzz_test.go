package openai

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzThinkFilter pushes a text through a ThinkFilter whole and cut into
// pieces at fuzzed places (as a stream delivers it) and checks that the
// cuts change nothing, that nothing is made up (content and reasoning
// together are no longer than the text, and a text without "<think>" gives
// no reasoning), that a text without '<' comes through untouched, that
// valid UTF-8 stays valid, and that splitThink agrees with the filter.
func FuzzThinkFilter(f *testing.F) {
	for _, s := range []string{
		"<think>plan</think>\n\nAnswer",
		"Sure. <think>x</think>Done",
		"a <thing> b",
		"<think>still thinking",
		"value <th",
		"<think>a</think>b<think>c</think> d",
		"reasoning first</think>  the answer",
		"<<think>think>></think>>",
		"<think>é\xff</think>\t\r\n ü",
		"plain text without tags",
	} {
		f.Add(s, []byte{1, 3, 5, 7})
		f.Add(s, []byte{0})
	}
	f.Fuzz(func(t *testing.T, text string, cuts []byte) {
		wholeC, wholeR := filterAll(text, nil)
		pieceC, pieceR := filterAll(text, cuts)
		if pieceC != wholeC || pieceR != wholeR {
			t.Fatalf("cut at %v: content %q reasoning %q; whole: %q and %q", cuts, pieceC, pieceR, wholeC, wholeR)
		}
		if len(wholeC)+len(wholeR) > len(text) {
			t.Fatalf("output longer than input: %d+%d > %d", len(wholeC), len(wholeR), len(text))
		}
		if !strings.Contains(text, openTag) && wholeR != "" {
			t.Fatalf("reasoning %q from a text without %s", wholeR, openTag)
		}
		if !strings.Contains(text, "<") && wholeC != text {
			t.Fatalf("text without tags changed: %q became %q", text, wholeC)
		}
		if utf8.ValidString(text) && !(utf8.ValidString(wholeC) && utf8.ValidString(wholeR)) {
			t.Fatalf("valid UTF-8 became invalid: %q, %q", wholeC, wholeR)
		}
		c, r := splitThink(text)
		if len(c)+len(r) > len(text) {
			t.Fatalf("splitThink output longer than input")
		}
		if strings.Contains(text, openTag) && (c != wholeC || r != strings.TrimSpace(wholeR)) {
			t.Fatalf("splitThink gave %q, %q; the filter %q, %q", c, r, wholeC, wholeR)
		}
	})
}

// filterAll runs text through a new ThinkFilter in pieces: each byte of
// cuts is the length of the next piece (0 means 1); what is left after the
// cuts is the last piece.
func filterAll(text string, cuts []byte) (content, reasoning string) {
	var f ThinkFilter
	var c, r strings.Builder
	push := func(s string) {
		pc, pr := f.Push(s)
		c.WriteString(pc)
		r.WriteString(pr)
	}
	for _, n := range cuts {
		if text == "" {
			break
		}
		k := min(max(int(n), 1), len(text))
		push(text[:k])
		text = text[k:]
	}
	if text != "" {
		push(text)
	}
	pc, pr := f.Flush()
	c.WriteString(pc)
	r.WriteString(pr)
	return c.String(), r.String()
}
