package failure

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxWait bounds every wait read from a response: a garbage header must not
// overflow a Duration or rest a route for years.
const maxWait = 30 * 24 * time.Hour

// waitSentence finds the waits providers write into their messages:
// Groq "Please try again in 1m0.363142857s", Gemini "Please retry in
// 36.43s", GitHub "Please wait 5631 seconds before retrying".
var (
	waitDuration = lazyRegexp(`(?i)(?:try again|retry) in ~?((?:[0-9]+(?:\.[0-9]+)?(?:h|ms|m|s))+)`)
	waitSeconds  = lazyRegexp(`(?i)(?:wait|try again in|retry in|retry after|try again after) ([0-9]+(?:\.[0-9]+)?) ?(?:seconds?|secs?)\b`)
)

// retryAfter returns how long the provider asks to wait, from, in order: the
// retry-after header (seconds or an HTTP date; retry-after-ms when it is
// absent), Gemini's RetryInfo.retryDelay, a wait sentence in the message,
// then the x-ratelimit-reset-* headers (and OpenRouter's copy of them in
// metadata.headers). at is an absolute reset time when any source names one
// (an HTTP date, an epoch reset), whichever source gave wait.
func retryAfter(h http.Header, d *detail, now time.Time) (wait time.Duration, at time.Time) {
	if h != nil {
		if w, t, ok := parseRetryAfter(h.Get("Retry-After"), now); ok {
			wait, at = w, t
		} else if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil {
			wait = seconds(ms / 1000)
		}
	}
	if wait == 0 && d.retryDelay != "" {
		if w, err := time.ParseDuration(strings.TrimSpace(d.retryDelay)); err == nil && w > 0 {
			wait = min(w, maxWait)
		}
	}
	if wait == 0 {
		wait = sentenceWait(d.message + "\n" + d.raw)
	}
	rw, rt := resetHeaders(now, h, d.headers)
	if wait == 0 {
		wait = rw
	}
	if at.IsZero() {
		at = rt
	}
	return wait, at
}

// parseRetryAfter reads a retry-after value: delay seconds (integer, or a
// float as some gateways send) or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, time.Time, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, time.Time{}, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		w := seconds(f)
		return w, time.Time{}, w > 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxWait), t, true
	}
	return 0, time.Time{}, false
}

// sentenceWait returns the first wait written in s, or 0.
func sentenceWait(s string) time.Duration {
	if m := waitDuration().FindStringSubmatch(s); m != nil {
		if w, err := time.ParseDuration(m[1]); err == nil && w > 0 {
			return min(w, maxWait)
		}
	}
	if m := waitSeconds().FindStringSubmatch(s); m != nil {
		if f, err := strconv.ParseFloat(m[1], 64); err == nil {
			return seconds(f)
		}
	}
	return 0
}

// resetHeaders reads the x-ratelimit-reset* headers: Groq Go durations
// ("2m59.56s"), Cerebras float seconds ("33011.38"), OpenRouter epoch
// milliseconds ("1779321600000"). Among the resets whose paired remaining
// header is "0" (the spent budget) it takes the latest; when none is known
// spent, the soonest (a lower bound). at is set for an epoch value.
func resetHeaders(now time.Time, hs ...http.Header) (wait time.Duration, at time.Time) {
	var spent, other time.Duration
	var spentAt, otherAt time.Time
	for _, h := range hs {
		for k, vs := range h {
			lk := strings.ToLower(k)
			if !strings.HasPrefix(lk, "x-ratelimit-reset") || len(vs) == 0 {
				continue
			}
			w, t := parseReset(vs[0], now)
			if w <= 0 {
				continue
			}
			rem := headerValue(h, strings.Replace(lk, "reset", "remaining", 1))
			if rem == "0" {
				if w > spent {
					spent, spentAt = w, t
				}
			} else if other == 0 || w < other {
				other, otherAt = w, t
			}
		}
	}
	if spent > 0 {
		return spent, spentAt
	}
	return other, otherAt
}

// headerValue returns h's value for a lower-case name, whatever the case the
// map holds it in (metadata.headers keys are not canonical when built by
// hand).
func headerValue(h http.Header, lower string) string {
	if v := h.Get(lower); v != "" {
		return strings.TrimSpace(v)
	}
	for k, vs := range h {
		if strings.ToLower(k) == lower && len(vs) > 0 {
			return strings.TrimSpace(vs[0])
		}
	}
	return ""
}

// parseReset reads one reset value. Numbers above 1e12 are epoch
// milliseconds, above 1e9 epoch seconds, else seconds to wait.
func parseReset(v string, now time.Time) (time.Duration, time.Time) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, time.Time{}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		w, err := time.ParseDuration(v)
		if err != nil || w <= 0 {
			return 0, time.Time{}
		}
		return min(w, maxWait), time.Time{}
	}
	if math.IsNaN(f) || f <= 0 || f > 1e15 {
		return 0, time.Time{}
	}
	var t time.Time
	switch {
	case f > 1e12:
		t = time.UnixMilli(int64(f))
	case f > 1e9:
		t = time.Unix(int64(f), 0)
	default:
		return seconds(f), time.Time{}
	}
	if !t.After(now) {
		return 0, time.Time{}
	}
	return min(t.Sub(now), maxWait), t
}

// seconds converts f seconds to a Duration in [0, maxWait]; NaN and
// negatives are 0.
func seconds(f float64) time.Duration {
	if math.IsNaN(f) || f <= 0 {
		return 0
	}
	if f >= maxWait.Seconds() {
		return maxWait
	}
	return time.Duration(f * float64(time.Second))
}
