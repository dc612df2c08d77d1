package quota

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
)

// TestSizesLearned: until a route has answered learnRatioAfter times, a
// reservation counts Estimate's prompt, then the prompt as its provider
// counts it against the estimate (here 10% fewer); until it has answered
// learnAfter times, max_tokens (or 1,024), then about the 90th percentile
// of its answers where that is smaller, so that a route bound by its
// tokens a minute takes the calls that fit. Another route is left alone;
// longer answers and a provider counting more than the estimate raise the
// reservation again.
func TestSizesLearned(t *testing.T) {
	b, _, clk := newTestBook(t0)
	p := testProvider("mistral", config.Limits{}, utcMidnight)
	r := testRoute("mistral/a", p, config.Limits{TPM: 8000})
	other := testRoute("mistral/b", p, config.Limits{TPM: 8000})

	const est = 1800 // the prompt as Estimate counts it
	answer := func(rt *config.Route, maxTokens, prompt, size int) {
		t.Helper()
		clk.Advance(time.Minute) // a window of its own
		out := b.expectedOutput(maxTokens, rt)
		in := b.promptTokens(est, rt)
		res := mustReserve(t, b, rt, in+out, 0)
		res.Prompt, res.Output = est, out
		if err := b.Settle(context.Background(), res, prompt+size, true); err != nil {
			t.Fatal(err)
		}
		b.LearnAnswer(res, prompt, size)
	}
	for i := range learnRatioAfter - 1 {
		answer(r, 0, 1620, 200+i%3*100)
	}
	if got := b.promptTokens(est, r); got != est {
		t.Fatalf("after %d answers: prompt counted %d, want the estimate %d until %d answers", learnRatioAfter-1, got, est, learnRatioAfter)
	}
	answer(r, 0, 1620, 200)
	if got := b.promptTokens(est, r); got != 1620 {
		t.Errorf("after %d answers, a provider counting 1,620 for an estimate of 1,800: prompt counted %d, want 1620", learnRatioAfter, got)
	}
	for i := learnRatioAfter; i < learnAfter-1; i++ {
		answer(r, 0, 1620, 200+i%3*100)
	}
	if got := b.expectedOutput(0, r); got != defaultOutput {
		t.Fatalf("after %d answers: expected output %d, want the default %d until %d answers", learnAfter-1, got, defaultOutput, learnAfter)
	}
	answer(r, 0, 1620, 300)
	if got := b.expectedOutput(0, r); got < 300 || got > 500 {
		t.Errorf("after %d answers of 200 to 400 tokens: expected output %d, want about their 90th percentile (300 to 500)", learnAfter, got)
	}
	if got := b.expectedOutput(2000, r); got > 500 {
		t.Errorf("with max_tokens 2000: expected output %d, want the answers' size (at most 500)", got)
	}
	if got := b.expectedOutput(150, r); got != 150 {
		t.Errorf("with max_tokens 150: expected output %d, want 150", got)
	}
	if got := b.promptTokens(est, r); got != 1620 {
		t.Errorf("a provider counting 1,620 for an estimate of 1,800: prompt counted %d, want 1620", got)
	}
	if got, want := b.expectedOutput(0, other), defaultOutput; got != want {
		t.Errorf("a route that never answered: expected output %d, want %d", got, want)
	}
	if got := b.promptTokens(est, other); got != est {
		t.Errorf("a route that never answered: prompt counted %d, want %d", got, est)
	}

	// What fits in 8,000 tokens a minute: two calls as guessed (1,800 +
	// 1,024), three as learned (1,620 + about 450).
	fitted := func(bk *Book) int {
		n := 0
		for {
			if _, err := bk.Reserve(context.Background(), r, bk.promptTokens(est, r)+bk.expectedOutput(0, r), 0); err != nil {
				return n
			}
			n++
		}
	}
	fresh, _, _ := newTestBook(t0)
	if got := fitted(fresh); got != 2 {
		t.Errorf("calls reserved in 8,000 TPM as guessed: %d, want 2", got)
	}
	clk.Advance(2 * time.Minute) // past the last answer's minute
	if got := fitted(b); got != 3 {
		t.Errorf("calls reserved in 8,000 TPM as learned: %d, want 3", got)
	}

	// Longer answers, and a provider counting more than the estimate,
	// raise the reservation back.
	clk.Advance(time.Minute) // past the calls fitted
	for range 64 {
		answer(r, 0, 2200, 900)
	}
	if got := b.expectedOutput(0, r); got < 900 {
		t.Errorf("after answers of 900 tokens: expected output %d, want at least 900", got)
	}
	if got := b.promptTokens(est, r); got < 2200 {
		t.Errorf("a provider counting 2,200 for an estimate of 1,800: prompt counted %d, want at least 2200", got)
	}
}

// TestSizesNotLearnedWhereChargedUpFront: Cerebras charges a request its
// max_tokens when it arrives, so its reservations keep counting them
// whatever its answers cost; its prompts are still counted as it counts
// them.
func TestSizesNotLearnedWhereChargedUpFront(t *testing.T) {
	b, _, _ := newTestBook(t0)
	p := testProvider("cerebras", config.Limits{}, utcMidnight)
	r := testRoute("cerebras/gpt-oss-120b", p, config.Limits{TPM: 1000000})
	for range 2 * learnAfter {
		res := mustReserve(t, b, r, 1800+400, 0)
		res.Prompt, res.Output = 1800, 400
		b.LearnAnswer(res, 1620, 100)
	}
	if got := b.expectedOutput(400, r); got != 400 {
		t.Errorf("cerebras, max_tokens 400, answers of 100: expected output %d, want 400", got)
	}
	if got := b.expectedOutput(0, r); got != defaultOutput {
		t.Errorf("cerebras, no max_tokens: expected output %d, want %d", got, defaultOutput)
	}
	if got := b.promptTokens(1800, r); got != 1620 {
		t.Errorf("cerebras: prompt counted %d, want 1620 as it counts prompts", got)
	}
}

// TestSizesWhereAdmittedByMaxTokens: Groq admits a request by its prompt
// and max_tokens, then counts the answer: a request with max_tokens is
// reserved for at max_tokens whatever its answers cost, one without at the
// size of its answers, and it settles at what the answer cost.
func TestSizesWhereAdmittedByMaxTokens(t *testing.T) {
	b, _, _ := newTestBook(t0)
	p := testProvider("groq", config.Limits{}, utcMidnight)
	r := testRoute("groq/openai/gpt-oss-120b", p, config.Limits{TPM: 1000000})
	var res *Reservation
	for range 2 * learnAfter {
		res = mustReserve(t, b, r, 1800+400, 0)
		res.Prompt, res.Output = 1800, 400
		b.LearnAnswer(res, 1620, 100)
	}
	if got := b.expectedOutput(400, r); got != 400 {
		t.Errorf("groq, max_tokens 400, answers of 100: expected output %d, want 400, as Groq admits the request", got)
	}
	if got := b.expectedOutput(0, r); got > 200 {
		t.Errorf("groq, no max_tokens, answers of 100: expected output %d, want the answers' size", got)
	}
	if got := res.Charged(1620, 100); got != 1720 {
		t.Errorf("groq: a call of 1,620 prompt tokens answered in 100 charged %d, want 1720", got)
	}
}

// TestPromptCountedByTheHighestRecentRatio: a provider whose count of a
// prompt against the estimate varies (by the prompt's length, by its
// text) is reserved for at the highest of its recent counts, not their
// mean: a reservation below the provider's count passes a call it
// refuses, and a minute's 429 rests the route for 20 seconds.
func TestPromptCountedByTheHighestRecentRatio(t *testing.T) {
	b, _, _ := newTestBook(t0)
	p := testProvider("mistral", config.Limits{}, utcMidnight)
	r := testRoute("mistral/a", p, config.Limits{TPM: 1000000})
	for i := range learnAfter {
		res := mustReserve(t, b, r, 1000+400, 0)
		res.Prompt, res.Output = 1000, 400
		prompt := 880
		if i == learnAfter/2 {
			prompt = 930
		}
		b.LearnAnswer(res, prompt, 100)
	}
	if got := b.promptTokens(1000, r); got < 930 {
		t.Errorf("a provider counting 880 and once 930 for an estimate of 1,000: prompt counted %d, want at least 930", got)
	}
	for range learnAfter {
		res := mustReserve(t, b, r, 1000+400, 0)
		res.Prompt, res.Output = 1000, 400
		b.LearnAnswer(res, 880, 100)
	}
	if got := b.promptTokens(1000, r); got > 900 {
		t.Errorf("after %d more answers counted 880: prompt counted %d, want the 930 forgotten (at most 900)", learnAfter, got)
	}
}

// TestSizesFirstAnswerFades: the first answers weigh as in a plain mean,
// so that one long first answer does not hold the reservation high for
// minutes. After a 600-token first answer and twenty of 200, the learned
// size is near the answers' own (363); an exponentially weighted mean from
// the first answer kept it at 686, above the longest answer.
func TestSizesFirstAnswerFades(t *testing.T) {
	b, _, clk := newTestBook(t0)
	p := testProvider("groq", config.Limits{}, utcMidnight)
	r := testRoute("groq/a", p, config.Limits{TPM: 8000})
	for i := range 21 {
		clk.Advance(time.Minute)
		res := mustReserve(t, b, r, 2000, 0)
		res.Prompt, res.Output = 1000, 1000
		size := 200
		if i == 0 {
			size = 600
		}
		if err := b.Settle(context.Background(), res, 1000+size, true); err != nil {
			t.Fatal(err)
		}
		b.LearnAnswer(res, 1000, size)
	}
	if got := b.expectedOutput(0, r); got > 400 {
		t.Errorf("after one answer of 600 tokens and twenty of 200: expected output %d, want at most 400 (the mean is 219)", got)
	}
}

// TestSettleKeepsAnUpFrontCharge: a provider that charges a request its
// max_tokens on arrival (Cerebras) keeps the charge when the answer is
// shorter: the count settles at the prompt it counted and max_tokens
// (Reservation.Charged); another provider's falls to what the answer
// used.
func TestSettleKeepsAnUpFrontCharge(t *testing.T) {
	for _, tc := range []struct {
		flavor string
		fits   bool
	}{{"cerebras", false}, {"groq", true}} {
		b, _, _ := newTestBook(t0)
		p := testProvider(tc.flavor, config.Limits{}, utcMidnight)
		r := testRoute(tc.flavor+"/m", p, config.Limits{TPM: 1000})
		res := mustReserve(t, b, r, 800, 0) // a prompt of 400 and max_tokens 400
		res.Prompt, res.Output = 400, 400
		// The provider counted a prompt of 390, and answered in 60.
		if err := b.Settle(context.Background(), res, res.Charged(390, 60), true); err != nil {
			t.Fatal(err)
		}
		_, err := b.Reserve(context.Background(), r, 500, 0)
		if fits := err == nil; fits != tc.fits {
			t.Errorf("%s: 800 reserved, a prompt of 390 answered in 60, then 500 more in a minute of 1,000: fits %v, want %v (err %v)", tc.flavor, fits, tc.fits, err)
		}
		if _, err := b.Reserve(context.Background(), r, 210, 0); tc.flavor == "cerebras" && err != nil {
			t.Errorf("cerebras: 790 charged (the prompt counted and max_tokens), then 210 in a minute of 1,000: %v, want it to fit", err)
		}
	}
}

// expectedOutput is the answer part of Sizes.
func (b *Book) expectedOutput(maxTokens int, r *config.Route) int {
	_, out := b.Sizes(0, maxTokens, r)
	return out
}

// promptTokens is the prompt part of Sizes.
func (b *Book) promptTokens(est int, r *config.Route) int {
	in, _ := b.Sizes(est, 0, r)
	return in
}

// TestInputAloneOnGemini: Gemini's token limits count input alone, so a
// reservation there counts a request's prompt, not its answer, and settles
// at the prompt the provider counted: 15,000 tokens a minute take fifteen
// prompts of 1,000, not ten of 1,000 and 500.
func TestInputAloneOnGemini(t *testing.T) {
	b, _, _ := newTestBook(t0)
	p := testProvider("gemini", config.Limits{}, utcMidnight)
	r := testRoute("gemini/gemma-3-27b-it", p, config.Limits{TPM: 15000})
	if got := Reserved(r, 1000, 500); got != 1000 {
		t.Errorf("gemini: a request of 1,000 prompt tokens and 500 of answer reserves %d, want 1000", got)
	}
	if got := Reserved(testRoute("groq/m", testProvider("groq", config.Limits{}, utcMidnight), config.Limits{}), 1000, 500); got != 1500 {
		t.Errorf("groq: a request of 1,000 prompt tokens and 500 of answer reserves %d, want 1500", got)
	}
	var res *Reservation
	for i := range 15 {
		var err error
		if res, err = b.Reserve(context.Background(), r, Reserved(r, 1000, 500), 0); err != nil {
			t.Fatalf("reservation %d of 1,000 input tokens under 15,000: %v", i+1, err)
		}
	}
	if _, err := b.Reserve(context.Background(), r, Reserved(r, 1000, 500), 0); err == nil {
		t.Error("a 16th reservation of 1,000 input tokens under 15,000 passed")
	}
	res.Output = 500
	if got := res.Charged(980, 420); got != 980 {
		t.Errorf("gemini: a call of 980 prompt tokens answered in 420 charged %d, want 980", got)
	}
}
