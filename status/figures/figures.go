// Package figures owns what tollfree's figures mean and how they are worked
// out, so that the same word gives the same number wherever it is shown:
// the live figures behind the status page and /status.json (status/live)
// and the call log's summary per route and day (logstats.Summarize, `tollfree
// log stats`).
//
// The words, for one route's attempts:
//
//   - An attempt hands its request on (HandsOn) when it failed and the
//     request went to the next route (or, for an invalid answer, to a
//     repair on the same route): every class but ok, cancelled,
//     silent_loser (another route had already answered), bad_request and
//     refused (those answer the caller with the provider's reason).
//   - A failover rate is the attempts that handed their request on over the
//     attempts that were not cancelled (a lost hedge or a caller gone says
//     nothing either way).
//   - A success rate is the ok attempts over the judged ones (Judged): ok,
//     a failure the route caused (a class that rests), a silent loser (a
//     route that hangs and always loses a race must not look healthy), or
//     an invalid answer (one that broke the request's schema: it rests
//     nothing, but a route that keeps breaking schemas must not look
//     healthy either; issue 15).
//   - Latency percentiles are nearest-rank (Rank), of ok attempts only:
//     exact over a bounded sample (Percentile), or within 1% over any number
//     of them (Histogram).
//   - A route rescued a stream (Rescued) when it answered (ok) a streamed
//     request on a part after the first: the stream had broken after its
//     first token and this route finished it, by one of the Methods
//     (Method): prefix, instruct, or afresh when nothing had been streamed
//     yet (issue 13). A broken stream that no route finished leaves no ok
//     attempt.
//   - A polite retry is an attempt that called the same route once more
//     after a blip (route.Attempt.Retry); it answered when it ended ok.
//
// Rate gives every rate; no rate is shown before anything counts for it.
package figures

import (
	"cmp"
	"math"
	"slices"

	"github.com/tollfree/tollfree/failure"
)

// HandsOn reports whether an attempt of class c failed and handed its
// request on to the next route: it counts toward a failover rate.
func HandsOn(c failure.Class) bool {
	switch c {
	case failure.OK, failure.Cancelled, failure.SilentLoser, failure.BadRequest, failure.Refused:
		return false
	}
	return true
}

// Judged reports whether an attempt of class c counts toward a route's
// success rate.
func Judged(c failure.Class) bool {
	return c == failure.OK || c == failure.SilentLoser || c == failure.Invalid || c.Rests()
}

// Rescued reports whether an attempt of class c, of a streamed request
// (stream) and on part part, rescued a broken stream: it answered on a
// part after the first.
func Rescued(c failure.Class, stream bool, part int) bool {
	return c == failure.OK && stream && part >= 1
}

// The ways a stream is rescued, as Methods names them.
const (
	// MethodPrefix: the route continued the answer given as a trailing
	// assistant message.
	MethodPrefix = "prefix"
	// MethodInstruct: the partial answer was handed back with a request to
	// continue it.
	MethodInstruct = "instruct"
	// MethodAfresh: nothing had been streamed yet (reasoning only), and the
	// route took the request up afresh.
	MethodAfresh = "afresh"
	// MethodOther: a method this build does not know (a newer gateway's
	// call log).
	MethodOther = "other"
)

// Methods lists the rescue methods in the order they are shown; Method
// indexes it. It is never written to.
var Methods = [...]string{MethodPrefix, MethodInstruct, MethodAfresh, MethodOther}

// NumMethods is len(Methods).
const NumMethods = len(Methods)

// Method returns the index in Methods of how a rescuing attempt continued
// the stream, from its route.Attempt.Method (the call log's
// "continuation"): "" took the request up afresh; a method this build does
// not know is MethodOther.
func Method(m string) int {
	switch m {
	case MethodPrefix:
		return 0
	case MethodInstruct:
		return 1
	case "", MethodAfresh:
		return 2
	}
	return 3
}

// Rate returns part over whole, and whether there is a rate at all: false
// (and 0) when whole is not positive.
func Rate(part, whole int) (float64, bool) {
	if whole <= 0 {
		return 0, false
	}
	return float64(part) / float64(whole), true
}

// Rank returns the 1-based nearest rank of the pct-th percentile among n
// sorted values: ceil(pct*n/100), at least 1.
func Rank(pct, n int) int {
	return max((pct*n+99)/100, 1)
}

// Percentile returns the nearest-rank pct-th percentile of sorted (in
// ascending order), or the zero value when it is empty.
func Percentile[T cmp.Ordered](sorted []T, pct int) T {
	if len(sorted) == 0 {
		var zero T
		return zero
	}
	return sorted[Rank(pct, len(sorted))-1]
}

// Histogram holds latencies in milliseconds in buckets whose bounds grow by
// 1%, so that a percentile is reported at most 1% above the true value
// whatever the number of latencies, in memory that grows with their spread,
// never with their number. Bucket 0 holds latencies under 0.1 ms. The zero
// value is empty and ready; it is not safe for concurrent use.
type Histogram struct {
	buckets map[int]int
	n       int
	max     float64
}

const (
	latRatio = 1.01
	latFloor = 0.1 // ms
)

// Add counts one latency of ms milliseconds.
func (h *Histogram) Add(ms float64) {
	if h.buckets == nil {
		h.buckets = map[int]int{}
	}
	b := 0
	if ms > latFloor {
		b = 1 + int(math.Ceil(math.Log(ms/latFloor)/math.Log(latRatio)))
	}
	h.buckets[b]++
	h.n++
	h.max = max(h.max, ms)
}

// Percentile returns the nearest-rank pct-th percentile: the upper bound of
// the bucket holding it, never above the largest latency seen; 0 when
// empty.
func (h *Histogram) Percentile(pct int) float64 {
	if h.n == 0 {
		return 0
	}
	rank := Rank(pct, h.n)
	keys := make([]int, 0, len(h.buckets))
	for k := range h.buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	seen := 0
	for _, k := range keys {
		seen += h.buckets[k]
		if seen >= rank {
			if k == 0 {
				return min(latFloor, h.max)
			}
			return min(latFloor*math.Pow(latRatio, float64(k-1)), h.max)
		}
	}
	return h.max
}
