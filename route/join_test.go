package route

import (
	"strings"
	"testing"
)

// joinAll feeds a continuation to a joiner piece by piece, then ends it,
// and returns what was passed on, and whether it was joined (false: it
// diverged, and nothing of it may be passed on).
func joinAll(sent string, tail, hold int, pieces []string) (string, bool) {
	j := newJoiner(sent, tail)
	if hold > 0 {
		j.hold = hold
	}
	var b strings.Builder
	for _, p := range pieces {
		out, ok := j.feed(p)
		if !ok {
			return b.String(), false
		}
		b.WriteString(out)
	}
	out, ok := j.end()
	b.WriteString(out)
	return b.String(), ok
}

// TestJoin: a continuation is joined to the sent text with its repeated
// tail trimmed, its reproduced start dropped, its whitespace right at the
// join; a restart that cannot be trimmed into one answer is abandoned.
func TestJoin(t *testing.T) {
	const answer = "Tollfree keeps an AI feature answering on the free tiers of many providers."
	w := strings.SplitAfter(answer, " ")
	tests := []struct {
		name   string
		sent   string
		tail   int // what the route was not shown (an instruct continuation)
		hold   int // 0: joinHold
		pieces []string
		want   string
		ok     bool
	}{
		{"exact continuation", strings.Join(w[:5], ""), 0, 0, w[5:], strings.Join(w[5:], ""), true},
		{"exact continuation of a word cut short", "Tollfree keeps an AI feat", 0, 0, []string{"ure ", "answering."}, "ure answering.", true},
		{"overlap of a few words", strings.Join(w[:9], ""), 0, 0, w[6:], strings.Join(w[9:], ""), true},
		{"overlap of a partial word", "on the free tiers of many provid", 0, 0, []string{"providers", "."}, "ers.", true},
		{"overlap of the last word started over", "the free tiers of many providers", 0, 0, []string{"providers", " and more."}, " and more.", true},
		{"overlap after a leading space", "the free tiers of many", 0, 0, []string{" many", " providers."}, " providers.", true},
		{"full restart reproduced", strings.Join(w[:6], ""), 0, 0, w, strings.Join(w[6:], ""), true},
		{"full restart reproduced, past the hold", strings.Join(w[:6], ""), 0, 8, w, strings.Join(w[6:], ""), true},
		{"restart reproduced in one piece", strings.Join(w[:6], ""), 0, 0, []string{answer}, strings.Join(w[6:], ""), true},
		{"restart that diverges", strings.Join(w[:8], ""), 0, 0, []string{"Tollfree ", "keeps ", "an ", "assistant ", "online."}, "", false},
		{"restart that diverges past the hold", strings.Join(w[:8], ""), 0, 8, []string{"Tollfree ", "keeps ", "an ", "assistant ", "online."}, "", false},
		{"restart that ends inside the sent text", strings.Join(w[:8], ""), 0, 0, w[:3], "", true},
		{"a short piece found in the sent text", "It is free. It is fast", 0, 0, []string{"."}, ".", true},
		{"a short piece found in the sent text, then more", "It is free. It is fast", 0, 0, []string{" is", " and good."}, " is and good.", true},
		{"a long repeat of the middle", strings.Join(w[:12], ""), 0, 0, w[3:9], "", false},
		{"a repeat of the middle past the end", strings.Join(w[:9], ""), 0, 0, w[3:], strings.Join(w[9:], ""), true},
		{"a coincidence is not trimmed", "we need 100", 0, 0, []string{"0 ", "more."}, "0 more.", true},
		{"the last word repeated after a space", "I said no", 0, 0, []string{" no", " more."}, " more.", true},
		{"cut after a space, continuation starting with one", "Tollfree keeps an ", 0, 0, []string{" AI", " feature."}, "AI feature.", true},
		{"instruct: the last word written again", "Tollfree keeps an AI feat", 4, 0, []string{"feature ", "answering."}, "ure answering.", true},
		{"instruct: the last whole word written again", "Tollfree keeps an AI", 2, 0, []string{"AI ", "feature."}, " feature.", true},
		{"instruct: a different last word", "Tollfree keeps an AI feat", 4, 0, []string{"function ", "answering."}, "", false},
		{"instruct: the answer started over", "Tollfree keeps an AI feat", 4, 0, w, strings.TrimPrefix(answer, "Tollfree keeps an AI feat"), true},
		{"unicode: a partial word", "Das Café serviert Frühstück bis elf, Frühs", 0, 0, []string{"Frühstück ", "am Sonntag."}, "tück am Sonntag.", true},
		{"unicode: emoji at the join", "Hello 😀 wor", 0, 0, []string{"world 😀", "!"}, "ld 😀!", true},
		{"unicode: no overlap inside a rune", "café", 0, 0, []string{"́ au lait"}, "́ au lait", true},
		{"whitespace only", "Tollfree keeps", 0, 0, []string{" ", "\n"}, "", true},
		{"the end repeated, nothing more", "on the free tiers of many providers.", 0, 0, []string{"providers."}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := joinAll(tt.sent, tt.tail, tt.hold, tt.pieces)
			if got != tt.want || ok != tt.ok {
				t.Errorf("joined %q (ok %v), want %q (ok %v)", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestJoinHoldsBack: nothing of a continuation's start is passed on while
// it may still turn out to repeat the sent text, and a restart past the
// hold is followed without holding its text.
func TestJoinHoldsBack(t *testing.T) {
	j := newJoiner("Tollfree keeps an AI feature answering", 0)
	j.hold = 16
	for _, p := range []string{"Tollfree ", "keeps ", "an ", "AI "} {
		if out, ok := j.feed(p); out != "" || !ok {
			t.Fatalf("feed(%q) = %q, %v; want it held", p, out, ok)
		}
	}
	if j.state != joinSkipping || j.held.Len() != 0 {
		t.Fatalf("state %d, %d bytes held; want skipping, none held", j.state, j.held.Len())
	}
	if out, ok := j.feed("feature answering on the free tiers."); out != " on the free tiers." || !ok {
		t.Errorf("past the sent text: %q, %v", out, ok)
	}
}

// TestCutBack: an instruct continuation is handed the answer up to its
// last whitespace; the last word is left for the route to write again.
func TestCutBack(t *testing.T) {
	tests := []struct {
		sent, keep string
		tail       int
	}{
		{"Tollfree keeps an AI feat", "Tollfree keeps an AI ", 4},
		{"Tollfree keeps an ", "Tollfree keeps an ", 0},
		{"Tollfree", "Tollfree", 0},
		{"a\nlist", "a\n", 4},
		{"see " + strings.Repeat("x", 60), "see " + strings.Repeat("x", 60), 0},
		{"Frühstück bis elf, Frühs", "Frühstück bis elf, ", 6},
		{"  lead", "  lead", 0},
	}
	for _, tt := range tests {
		keep, tail := cutBack(tt.sent)
		if keep != tt.keep || tail != tt.tail || keep+tt.sent[len(keep):] != tt.sent {
			t.Errorf("cutBack(%q) = %q, %d; want %q, %d", tt.sent, keep, tail, tt.keep, tt.tail)
		}
	}
}
