package failure

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// FuzzRetryAfter feeds the retry-after parser garbage in every source it
// reads (the Retry-After and Retry-After-Ms headers, Gemini's retryDelay, a
// wait sentence in the message, the x-ratelimit-reset-* headers and
// OpenRouter's copy of them) and checks its invariants: the wait is within
// [0, maxWait], an absolute reset is after now, a Retry-After that parses
// wins over every other source, and the values providers really send read
// back exactly: n seconds, an HTTP date n seconds away, a Go duration in a
// "try again in" sentence, a reset of n seconds.
func FuzzRetryAfter(f *testing.F) {
	// Seeds from real answers (docs/PROVIDERS.md, failure/testdata).
	f.Add("2", "", "", "Please try again in 1m0.363142857s. Need more tokens?", "requests", "2m59.56s", "0", int64(60))
	f.Add("", "1500", "26s", "Please retry in 36.43s.", "tokens", "33011.38", "5", int64(1))
	f.Add("Tue, 10 Mar 2026 12:01:00 GMT", "", "45.837906927s", "", "", "1779321600000", "0", int64(86400))
	f.Add("", "", "", "Please wait 5631 seconds before retrying.", "requests-day", "1773144060", "0", int64(5631))
	f.Add("NaN", "-1", "1e400s", "try again in ~9m38.016s", "", "1e400", "", int64(-5))
	f.Add("1e12", "Inf", "-3s", "retry after 0.5 secs", "x", "-7", "0", int64(1<<62))
	f.Fuzz(func(t *testing.T, ra, raMs, delay, msg, suffix, reset, remaining string, n int64) {
		now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		h := http.Header{}
		h.Set("Retry-After", ra)
		h.Set("Retry-After-Ms", raMs)
		h.Set("X-Ratelimit-Reset-"+suffix, reset)
		h.Set("X-Ratelimit-Remaining-"+suffix, remaining)
		d := &detail{message: msg, retryDelay: delay, raw: msg,
			headers: http.Header{"X-RateLimit-Reset": {reset}, "X-RateLimit-Remaining": {remaining}}}

		wait, at := retryAfter(h, d, now)
		if wait < 0 || wait > maxWait {
			t.Fatalf("wait %v outside [0, %v]", wait, maxWait)
		}
		if !at.IsZero() && !at.After(now) {
			t.Fatalf("reset %v is not after now %v", at, now)
		}
		if w, _, ok := parseRetryAfter(ra, now); ok && wait != w {
			t.Fatalf("Retry-After %q reads %v but the wait is %v", ra, w, wait)
		}
		if w, rt := parseReset(reset, now); w < 0 || w > maxWait || (!rt.IsZero() && !rt.After(now)) {
			t.Fatalf("parseReset(%q) = %v, %v", reset, w, rt)
		}
		if w := sentenceWait(msg); w < 0 || w > maxWait {
			t.Fatalf("sentenceWait(%q) = %v", msg, w)
		}

		want := clampWait(n)
		if w, _, ok := parseRetryAfter(strconv.FormatInt(n, 10), now); w != want || ok != (want > 0) {
			t.Fatalf("Retry-After %d: %v (%v), want %v", n, w, ok, want)
		}
		if n > 0 && n < 1<<32 {
			date := now.Add(time.Duration(n) * time.Second).Format(http.TimeFormat)
			if w, at, ok := parseRetryAfter(date, now); !ok || w != want || !at.Equal(now.Add(time.Duration(n)*time.Second)) {
				t.Fatalf("Retry-After %s: %v %v %v, want %v", date, w, at, ok, want)
			}
			if w, _ := parseReset(strconv.FormatInt(min(n, 1e9), 10), now); w != clampWait(min(n, 1e9)) {
				t.Fatalf("reset %d: %v", n, w)
			}
			dur := time.Duration(n) * time.Millisecond
			if w := sentenceWait("Please try again in " + dur.String() + ". Visit"); w != min(dur, maxWait) {
				t.Fatalf("try again in %s: %v", dur, w)
			}
		}
	})
}

// clampWait is n seconds within [0, maxWait].
func clampWait(n int64) time.Duration {
	switch {
	case n <= 0:
		return 0
	case n >= int64(maxWait/time.Second):
		return maxWait
	}
	return time.Duration(n) * time.Second
}
