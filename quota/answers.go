package quota

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/tollfree/tollfree/config"
)

// Sizes learned (issue 31). A reservation counts a request's tokens before
// the provider has counted them: the prompt by Estimate, the answer by
// max_tokens where the caller set it, else defaultOutput (1,024). Settle
// then replaces the reservation with what the provider reported, but until
// it does, the estimate holds room in the token windows, and a route bound
// by its tokens a minute is refused a call that would fit. Both guesses err
// high, by design: Estimate counts as cl100k does, and the free models'
// tokenizers count up to 45% fewer (docs in estimate.go); an answer is
// rarely as long as its max_tokens. The simulator's evaluation batch
// reserved about 2,170 tokens a call for 1,860 used; on its site day of
// 4,000 questions, Gemma, bound by its 15,000 tokens a minute, was refused
// calls that fit, and learning the sizes below took tollfree from 3,782
// answers to 3,819 (docs/SIM.md).
//
// So each route learns, from the answers it gave (the usage its provider
// reported), two things:
//
//   - its answers' size: a reservation counts a high quantile of it
//     instead of max_tokens or 1,024 when that is smaller (an exponentially
//     weighted mean plus twice the weighted mean absolute deviation: for
//     the lognormal sizes of chat answers, near the 90th percentile), never
//     less than minLearnedOutput;
//   - how its provider counts prompts against Estimate: a reservation
//     counts the estimate times the highest of the provider's counts over
//     the estimate among the route's last learnAfter answers, or their
//     weighted mean plus mean deviation when that is higher (between
//     minPromptRatio and maxPromptRatio), so that a tokenizer counting 10%
//     fewer than the estimate is reserved for as such, and one counting
//     more is too. The highest, not the mean: the ratio moves with a
//     prompt's length and text (the per-message overhead Estimate adds
//     weighs less on a long prompt), a reservation below the provider's
//     count passes a call the provider refuses, and a minute's 429 rests
//     the route for 20 seconds or more: on the evaluation batch of
//     tools/sim (seed 2), Cerebras, its prompts reserved by the mean plus
//     deviation, lost 24 answers to one 2,500-token prompt reserved 2
//     tokens short of its count.
//
// A provider whose limiter admits a request by its max_tokens is reserved
// for as it admits (admitsByMaxTokens): Cerebras charges a request its
// max_tokens (or the model's longest answer) when it arrives
// (docs/PROVIDERS.md, "Cerebras"), and its call is settled at what it
// charged (Reservation.Charged), not at its answer; Groq admits a request
// by its prompt and max_tokens and then counts the answer. There a
// request with max_tokens is reserved for at max_tokens, not at its
// answers' size.
//
// Until learnAfter answers were seen, the guess of the answer's size
// stands. The prompt's count is learned sooner, after learnRatioAfter: it
// is a property of the provider's tokenizer and of the kind of text, it
// varies by a percent or two between requests where answers vary twofold,
// and the estimate it replaces errs high by up to 45%. On the evaluation
// batch of tools/sim, Groq, which answers about four calls a minute there,
// reserved every prompt 10% high for its first four minutes, and refused
// a call with 21 tokens to spare in its 8,000 that the naive loop's 429s
// found room for. A request larger than its reservation is caught by the
// provider's own count (its headers, or a 429), and the next estimates
// grow with it.
//
// Sizes are kept in this Book's memory, per instance: a restart starts
// again from the guesses, the safe side.
const (
	learnAfter       = 16
	learnRatioAfter  = 4
	minLearnedOutput = 64
	minPromptRatio   = 0.5
	maxPromptRatio   = 2.0
	// answerWeight is the weight of a new answer in the means: about the
	// last 32 answers count.
	answerWeight = 1.0 / 32
)

// ewma is an exponentially weighted mean and mean absolute deviation.
type ewma struct {
	n         int
	mean, dev float64
}

// add counts x. The first answers weigh as in a plain mean (1/n), then
// answerWeight: with answerWeight from the start, the first answer would
// still weigh 60% of the mean after sixteen (31/32 to the 16th), and the
// mean deviation would start from 0. One answer of 600 tokens then twenty
// of 200 reserved 686, more than the longest answer; now 363
// (TestSizesFirstAnswerFades).
func (e *ewma) add(x float64) {
	e.n++
	w := max(1/float64(e.n), answerWeight)
	if e.n == 1 {
		e.mean = x
		return
	}
	d := x - e.mean
	e.mean += w * d
	e.dev += max(1/float64(e.n-1), answerWeight) * (math.Abs(d) - e.dev)
}

// answerSizes tracks one route's answers.
type answerSizes struct {
	mu     sync.Mutex // guards size, prompt
	size   ewma       // completion tokens
	prompt ewma       // the provider's prompt count over Estimate's
	// ratios are the last learnAfter of those counts over Estimate's, a
	// ring at next: the reservation counts prompts by the highest.
	ratios [learnAfter]float64
	next   int
	out    atomic.Int64 // the learned answer reservation; 0 until learnAfter answers
	ratio  atomic.Int64 // the learned prompt ratio, in thousandths; 0 until learnRatioAfter
}

func (a *answerSizes) add(prompt, est, completion int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.size.add(float64(max(completion, 0)))
	if a.size.n >= learnAfter {
		out := int64(math.Ceil(a.size.mean + 2*a.size.dev))
		a.out.Store(min(max(out, minLearnedOutput), MaxTokens))
	}
	if prompt <= 0 || est <= 0 {
		return
	}
	x := float64(prompt) / float64(est)
	a.prompt.add(x)
	a.ratios[a.next] = x
	a.next = (a.next + 1) % len(a.ratios)
	if a.prompt.n >= learnRatioAfter {
		r := a.prompt.mean + a.prompt.dev
		for _, y := range a.ratios {
			r = max(r, y)
		}
		r = min(max(r, minPromptRatio), maxPromptRatio)
		a.ratio.Store(int64(math.Ceil(r * 1000)))
	}
}

// charge is how a route's provider counts a call against its token
// limits.
type charge uint8

const (
	// chargeAnswer: the prompt and the answer, as the provider reports
	// them.
	chargeAnswer charge = iota
	// chargeUpFront: the prompt and max_tokens, whatever the answer then
	// costs: Cerebras ("we estimate the total tokens the request will
	// consume by ... adding either the max_completion_tokens parameter or
	// an analyzed estimate for an upper bound of the output tokens",
	// https://inference-docs.cerebras.ai/support/rate-limits).
	chargeUpFront
	// chargeInput: the prompt alone: Gemini's free tier limits input
	// tokens a minute (its 429 names the quota metric
	// generate_content_free_tier_input_token_count; the published limits
	// are RPM, RPD and input TPM, docs/PROVIDERS.md, "Gemini"). A
	// reservation there holds no room for an answer, which would cost
	// Gemma, bound by its 15,000 tokens a minute, the calls an answer's
	// room is worth.
	chargeInput
)

// chargeOf returns how route r's provider counts a call.
func chargeOf(r *config.Route) charge {
	if r.Provider == nil {
		return chargeAnswer
	}
	switch r.Provider.Flavor {
	case "cerebras":
		return chargeUpFront
	case "gemini":
		return chargeInput
	}
	return chargeAnswer
}

// Reserved returns the tokens a reservation on route r counts for a
// request whose prompt and answer Sizes counted: both, or the prompt alone
// where the provider's token limits count input alone (Gemini).
func Reserved(r *config.Route, prompt, output int) int {
	if r != nil && chargeOf(r) == chargeInput {
		return clampTokens(prompt)
	}
	return AddTokens(prompt, output)
}

// admitsByMaxTokens reports whether route r's provider admits a request of
// maxTokens by its prompt and max_tokens: Cerebras, which charges so
// (chargeUpFront), whatever maxTokens, and Groq, which reserves a
// request's prompt and max_tokens when it arrives and counts the answer
// once written ("the reservation is set by prompt + max_tokens against an
// 8000 TPM rolling window",
// https://github.com/maplibre/maplibre-agent-skills/pull/63). A smaller
// reservation, by the route's answers' size, would count room the
// provider does not give.
func admitsByMaxTokens(r *config.Route, maxTokens int) bool {
	if chargeOf(r) == chargeUpFront {
		return true
	}
	return r.Provider != nil && r.Provider.Flavor == "groq" && maxTokens > 0
}

func (b *Book) sizes(id string) *answerSizes {
	v, ok := b.answers.Load(id)
	if !ok {
		v, _ = b.answers.LoadOrStore(id, new(answerSizes))
	}
	return v.(*answerSizes)
}

// LearnAnswer notes that the answer reserved for by res used prompt and
// completion tokens, as its provider reported. Call it for accepted
// answers only: a lost race's or a broken stream's usage is not an
// answer's size. A reservation whose Prompt and Output its caller did not
// set teaches nothing.
func (b *Book) LearnAnswer(res *Reservation, prompt, completion int) {
	if res == nil || res.Output <= 0 || res.Prompt <= 0 {
		return
	}
	b.sizes(res.Route).add(prompt, res.Prompt, completion)
}

// Sizes returns what a reservation on route r counts for a request whose
// prompt Estimate counts est and whose max_tokens is maxTokens: the
// prompt, scaled by how the route's provider has counted prompts against
// the estimate, and the answer, the package's ExpectedOutput or the size
// of the route's answers when it has learned one that is smaller (see
// above). One lookup of the route's sizes serves both, on every pick.
func (b *Book) Sizes(est, maxTokens int, r *config.Route) (prompt, output int) {
	prompt, output = est, ExpectedOutput(maxTokens, r)
	if r == nil {
		return prompt, output
	}
	v, ok := b.answers.Load(r.ID)
	if !ok {
		return prompt, output
	}
	a := v.(*answerSizes)
	if m := a.ratio.Load(); m > 0 && est > 0 {
		prompt = int(min((int64(est)*m+999)/1000, int64(MaxTokens)))
	}
	if n := int(a.out.Load()); n > 0 && n < output && !admitsByMaxTokens(r, maxTokens) {
		output = n
	}
	return prompt, output
}
