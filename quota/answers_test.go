package quota

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
)

// TestAnswerSizesLearned: a request without max_tokens reserves 1,024
// answer tokens until its route has answered learnAfter times; then about
// the 90th percentile of its answers (here 200 to 400 tokens), so that a
// route bound by its tokens a minute takes more calls. max_tokens, a
// route's max_output and another route are left alone; an answer longer
// than the learned size raises it again.
func TestAnswerSizesLearned(t *testing.T) {
	b, _, clk := newTestBook(t0)
	p := testProvider("groq", config.Limits{}, utcMidnight)
	r := testRoute("groq/a", p, config.Limits{TPM: 8000})
	other := testRoute("groq/b", p, config.Limits{TPM: 8000})
	capped := testRoute("groq/c", p, config.Limits{TPM: 8000})
	capped.MaxOutput = 300

	const prompt = 1500
	answer := func(rt *config.Route, size int) {
		t.Helper()
		clk.Advance(time.Minute) // a window of its own
		out := b.ExpectedOutput(0, rt)
		res := mustReserve(t, b, rt, prompt+out, 0)
		res.Output = out
		if err := b.Settle(context.Background(), res, prompt+size, true); err != nil {
			t.Fatal(err)
		}
		b.LearnAnswer(res, prompt+size)
	}
	for i := range learnAfter - 1 {
		answer(r, 200+i%3*100)
	}
	if got := b.ExpectedOutput(0, r); got != defaultOutput {
		t.Fatalf("after %d answers: expected output %d, want the default %d until %d", learnAfter-1, got, defaultOutput, learnAfter)
	}
	answer(r, 300)
	got := b.ExpectedOutput(0, r)
	if got < 300 || got > 500 {
		t.Errorf("after %d answers of 200 to 400 tokens: expected output %d, want about their 90th percentile (300 to 500)", learnAfter, got)
	}
	if got := b.ExpectedOutput(700, r); got != 700 {
		t.Errorf("with max_tokens 700: expected output %d, want 700", got)
	}
	if got := b.ExpectedOutput(0, other); got != defaultOutput {
		t.Errorf("a route that never answered: expected output %d, want %d", got, defaultOutput)
	}
	for range learnAfter {
		answer(capped, 290)
	}
	if got := b.ExpectedOutput(0, capped); got > 300 {
		t.Errorf("a route with max_output 300: expected output %d, want at most 300", got)
	}

	// The reservation without max_tokens counts the learned size: three
	// more calls fit in the 8,000 tokens a minute than with 1,024.
	fresh, _, _ := newTestBook(t0)
	fitted := func(bk *Book) int {
		n := 0
		for {
			if _, err := bk.Reserve(context.Background(), r, prompt+bk.ExpectedOutput(0, r), 0); err != nil {
				return n
			}
			n++
		}
	}
	b2, _, _ := newTestBook(t0)
	for range learnAfter {
		b2.learnAnswer(r.ID, 300)
	}
	if a, l := fitted(fresh), fitted(b2); a != 3 || l != 4 {
		t.Errorf("calls of 1,500 prompt tokens in 8,000 TPM: %d with the default and %d learned, want 3 and 4", a, l)
	}

	// Longer answers raise the estimate back.
	for range 64 {
		answer(r, 900)
	}
	if got := b.ExpectedOutput(0, r); got < 900 {
		t.Errorf("after answers of 900 tokens: expected output %d, want at least 900", got)
	}
}
