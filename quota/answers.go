package quota

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/tollfree/tollfree/config"
)

// Answer sizes learned (issue 31). A reservation counts the answer a
// request may produce before it is known: max_tokens where the caller
// set it, else defaultOutput (1,024). Settle then replaces the estimate
// with what the provider reported, but until it does, the estimate holds
// room in the token windows. Where answers are much shorter than 1,024
// (an evaluation job's 100 to 600 tokens), a route bound by its tokens a
// minute is held to fewer calls than fit: the simulator's evaluation batch
// gave Groq's 8,000 TPM 44 answers where the naive loop's 429s found room
// for 46.
//
// So each route learns the size of its answers as Settle sees them (what
// was used, less the prompt's estimate: the estimate's own error is then
// learned too), and without max_tokens a reservation counts a high
// quantile of that size instead of 1,024: an exponentially weighted mean
// plus twice the weighted mean absolute deviation (for the lognormal sizes
// of chat answers, near the 90th percentile), never less than
// minLearnedOutput, never more than defaultOutput. Until learnAfter
// answers were seen, and for a request whose max_tokens is smaller, the
// rule above stands. An answer longer than the estimate is caught by the
// provider's own count (headers, or a 429 that rests nothing but the
// minute), and the next estimate grows with it.
//
// Sizes are kept in this Book's memory, per instance: a restart starts
// again from 1,024, the safe side.
const (
	learnAfter       = 16
	minLearnedOutput = 64
	// answerWeight is the weight of a new answer in the means: about the
	// last 32 answers count.
	answerWeight = 1.0 / 32
)

// answerSizes tracks one route's answer sizes.
type answerSizes struct {
	mu        sync.Mutex // guards n, mean, dev
	n         int
	mean, dev float64
	out       atomic.Int64 // the learned reservation; 0 until learnAfter answers
}

func (a *answerSizes) add(size int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	x := float64(max(size, 0))
	if a.n == 0 {
		a.mean = x
	} else {
		d := x - a.mean
		a.mean += answerWeight * d
		a.dev += answerWeight * (math.Abs(d) - a.dev)
	}
	a.n++
	if a.n < learnAfter {
		return
	}
	out := int64(math.Ceil(a.mean + 2*a.dev))
	a.out.Store(min(max(out, minLearnedOutput), defaultOutput))
}

// learnAnswer notes what an answer of route id cost beyond its prompt.
func (b *Book) learnAnswer(id string, size int) {
	v, ok := b.answers.Load(id)
	if !ok {
		v, _ = b.answers.LoadOrStore(id, new(answerSizes))
	}
	v.(*answerSizes).add(size)
}

// LearnAnswer notes that the answer reserved for by res used used tokens
// in all, as the provider reported. Call it for accepted answers only: a
// lost race's or a broken stream's usage is not an answer's size.
func (b *Book) LearnAnswer(res *Reservation, used int) {
	if res == nil || res.Output <= 0 {
		return
	}
	b.learnAnswer(res.Route, used-(res.Tokens-res.Output))
}

// ExpectedOutput returns the answer tokens a reservation on route r counts
// for a request with max_tokens maxTokens: the package's ExpectedOutput,
// except that without max_tokens a route that has answered enough counts
// the size of its answers (see above).
func (b *Book) ExpectedOutput(maxTokens int, r *config.Route) int {
	out := ExpectedOutput(maxTokens, r)
	if maxTokens > 0 || r == nil {
		return out
	}
	if v, ok := b.answers.Load(r.ID); ok {
		if n := int(v.(*answerSizes).out.Load()); n > 0 && n < out {
			return n
		}
	}
	return out
}
