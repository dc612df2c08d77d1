package route

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// joinAll feeds a continuation to a joiner piece by piece, then ends it,
// and returns what was passed on, and whether it was joined (false: it
// cannot be, and nothing of it may be passed on). The route was shown sent
// as cutBack cuts it.
func joinAll(sent string, hold int, pieces []string) (string, bool) {
	_, tail := cutBack(sent)
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

// cont is what a route shown sent as cutBack cuts it writes when it
// continues answer exactly, in pieces of one word each.
func cont(answer, sent string) []string {
	keep, _ := cutBack(sent)
	return strings.SplitAfter(strings.TrimPrefix(answer, keep), " ")
}

// TestJoin: a continuation is joined to the sent text only where the join
// is proven: the hidden last word written again (exactly), or a repeat or
// restart that can be read only one way; anything else is abandoned, and
// nothing is ever trimmed that the route did not write twice. Repeated
// words, numbers and indentation are text (issue 32).
func TestJoin(t *testing.T) {
	const answer = "Tollfree keeps an AI feature answering on the free tiers of many providers."
	w := strings.SplitAfter(answer, " ")
	tests := []struct {
		name   string
		sent   string
		hold   int // 0: joinHold
		pieces []string
		want   string
		ok     bool
	}{
		{"exact continuation", strings.Join(w[:5], ""), 0, cont(answer, strings.Join(w[:5], "")), strings.Join(w[5:], ""), true},
		{"exact continuation of a word cut short", "Tollfree keeps an AI feat", 0, []string{"feature ", "answering."}, "ure answering.", true},
		{"overlap of a few words", strings.Join(w[:9], ""), 0, w[5:], strings.Join(w[9:], ""), true},
		{"overlap after a leading space", "the free tiers of many", 0, []string{" many", " providers."}, " providers.", true},
		{"full restart reproduced", strings.Join(w[:6], ""), 0, w, strings.Join(w[6:], ""), true},
		{"full restart reproduced, past the hold", strings.Join(w[:6], ""), 8, w, strings.Join(w[6:], ""), true},
		{"restart reproduced in one piece", strings.Join(w[:6], ""), 0, []string{answer}, strings.Join(w[6:], ""), true},
		{"restart that diverges", strings.Join(w[:8], ""), 0, []string{"Tollfree ", "keeps ", "an ", "assistant ", "online."}, "", false},
		{"restart that diverges past the hold", strings.Join(w[:8], ""), 8, []string{"Tollfree ", "keeps ", "an ", "assistant ", "online."}, "", false},
		{"restart that ends inside the sent text", strings.Join(w[:8], ""), 0, w[:3], "", false},
		{"a different last word", "Tollfree keeps an AI feat", 0, []string{"function ", "answering."}, "", false},
		{"a long repeat of the middle", strings.Join(w[:12], ""), 0, w[3:9], "", false},
		{"a repeat of the middle past the end", strings.Join(w[:9], ""), 0, w[3:], strings.Join(w[9:], ""), true},
		{"the end repeated, nothing more", "on the free tiers of many providers.", 0, []string{"providers."}, "", true},
		{"unicode: a partial word", "Das Café serviert Frühstück bis elf, Frühs", 0, []string{"Frühstück ", "am Sonntag."}, "tück am Sonntag.", true},
		{"unicode: emoji at the join", "Hello 😀 wor", 0, []string{"world 😀", "!"}, "ld 😀!", true},
		{"a single word, continued", "Tollfree", 0, []string{" keeps", " going."}, " keeps going.", true},
		{"a single word, restarted: two readings", "Tollfree", 0, []string{"Tollfree", " keeps."}, "", false},
		// The issue-32 cases: the old join trimmed any 4 bytes that matched.
		{"repeated word cut mid-word", "lima lima li", 0, cont("lima lima lima five", "lima lima li"), "ma five", true},
		{"repetition cut mid-word", "four four fo", 0, cont("four four four five", "four four fo"), "ur five", true},
		{"repetition cut after a word: two readings", "four four ", 0, cont("four four four five", "four four "), "", false},
		{"a number that repeats its tail", "we need 1000", 0, cont("we need 1000 1000 more", "we need 1000"), " 1000 more", true},
		{"indentation cut short", "def f():\n    if x:\n      ", 0, cont("def f():\n    if x:\n        return 1\n", "def f():\n    if x:\n      "), "  return 1\n", true},
		{"whitespace is text", "Tollfree keeps ", 0, []string{"keeps ", " two spaces"}, " two spaces", true},
		{"whitespace only, after a hidden word", "Tollfree keeps", 0, []string{" ", "\n"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := joinAll(tt.sent, tt.hold, tt.pieces)
			if got != tt.want || ok != tt.ok {
				t.Errorf("joined %q (ok %v), want %q (ok %v)", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestJoinNeverAlters: over answers full of repeated words, numbers,
// indentation and CJK, cut at every byte, an exact continuation, a repeat
// of the last words and a restart are each either joined into exactly the
// answer or abandoned; never joined into anything else.
func TestJoinNeverAlters(t *testing.T) {
	answers := []string{
		"lima lima lima lima five four four four five 1000 1000 100 10 1",
		"def f(x):\n    if x:\n        return [x, x, x]\n    return None\n",
		"東京 東京 大阪 東京。 数字 1 1 11 111",
		"the the the end",
	}
	joined, abandoned := 0, 0
	for _, answer := range answers {
		for cut := 1; cut < len(answer); cut++ {
			sent := answer[:cut]
			if !utf8.ValidString(sent) {
				continue
			}
			keep, _ := cutBack(sent)
			rest := strings.TrimPrefix(answer, keep)
			for _, c := range []string{rest, keep[overlapFrom(keep):] + rest, answer} {
				got, ok := joinAll(sent, 0, strings.SplitAfter(c, " "))
				switch {
				case !ok:
					abandoned++
				case sent+got != answer:
					t.Fatalf("sent %q, continuation %q: joined into %q, want %q", sent, c, sent+got, answer)
				default:
					joined++
				}
			}
		}
	}
	t.Logf("%d joined exactly, %d abandoned", joined, abandoned)
	if joined == 0 {
		t.Fatal("nothing joined")
	}
}

// overlapFrom is where the last two words of s start.
func overlapFrom(s string) int {
	i := strings.LastIndex(strings.TrimRight(s, " "), " ")
	if i < 0 {
		return 0
	}
	j := strings.LastIndex(s[:i], " ")
	return j + 1
}

// TestJoinHoldsBack: nothing of a continuation's start is passed on while
// it may still be read as a repeat of the sent text; a restart that goes
// on reproducing it is followed without holding its text; text that two
// readings would pass differently is held no longer than the hold.
func TestJoinHoldsBack(t *testing.T) {
	sent := "Tollfree keeps an AI feature answering"
	_, tail := cutBack(sent)
	j := newJoiner(sent, tail)
	j.hold = 16
	for _, p := range []string{"Tollfree ", "keeps ", "an ", "AI "} {
		if out, ok := j.feed(p); out != "" || !ok {
			t.Fatalf("feed(%q) = %q, %v; want it held", p, out, ok)
		}
	}
	if len(j.held) != 0 {
		t.Fatalf("%d bytes held while reproducing the sent text; want none", len(j.held))
	}
	if out, ok := j.feed("feature answering on the free tiers."); out != " on the free tiers." || !ok {
		t.Errorf("past the sent text: %q, %v", out, ok)
	}

	sent = "four four "
	_, tail = cutBack(sent)
	j = newJoiner(sent, tail)
	j.hold = 16
	for _, p := range []string{"four ", "four ", "four "} {
		if out, ok := j.feed(p); out != "" || !ok {
			t.Fatalf("feed(%q) = %q, %v; want it held", p, out, ok)
		}
	}
	if out, ok := j.feed("four four four "); out != "" || ok {
		t.Errorf("past the hold with two readings: %q, %v; want abandoned", out, ok)
	}
}

// TestCutBack: a continuing route is shown the answer up to the start of
// its last word; the last word and the whitespace after it are left for the
// route to write again.
func TestCutBack(t *testing.T) {
	tests := []struct {
		sent, keep string
		tail       int
	}{
		{"Tollfree keeps an AI feat", "Tollfree keeps an AI ", 4},
		{"Tollfree keeps an ", "Tollfree keeps ", 3},
		{"def f():\n    if x:\n      ", "def f():\n    if ", 9},
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
