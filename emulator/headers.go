package emulator

import (
	"net/http"
	"strconv"
	"time"
)

// limitHeaders writes the flavor's rate-limit headers (docs/PROVIDERS.md,
// each provider's "Rate-limit headers") from the windows the call left: the model's, or the
// account's when the model has no limits (OpenRouter: the account's first).
// Only limits that are set get headers.
func (e *Emulator) limitHeaders(h http.Header, c *call) {
	b, other := c.budget, c.acct
	if c.prov.Flavor == FlavorOpenRouter || c.prov.Flavor == FlavorMistral {
		b, other = other, b
	}
	if !b.limits.any() {
		b = other
	}
	l, u := b.limits, b.used
	now := e.clock.Now()
	itoa := strconv.Itoa
	rem := func(limit, used int) string { return itoa(max(limit-used, 0)) }
	secs := func(d time.Duration) string { return strconv.FormatFloat(max(d, 0).Seconds(), 'f', -1, 64) }
	switch c.prov.Flavor {
	case FlavorGroq:
		if l.RPD > 0 {
			h.Set("x-ratelimit-limit-requests", itoa(l.RPD))
			h.Set("x-ratelimit-remaining-requests", rem(l.RPD, u.dayReq))
			h.Set("x-ratelimit-reset-requests", goDuration(b.dayReset))
		}
		if l.TPM > 0 {
			h.Set("x-ratelimit-limit-tokens", itoa(l.TPM))
			h.Set("x-ratelimit-remaining-tokens", rem(l.TPM, u.minTok))
			h.Set("x-ratelimit-reset-tokens", goDuration(b.minReset))
		}
	case FlavorCerebras:
		if l.RPD > 0 {
			h.Set("x-ratelimit-limit-requests-day", itoa(l.RPD))
			h.Set("x-ratelimit-remaining-requests-day", rem(l.RPD, u.dayReq))
			h.Set("x-ratelimit-reset-requests-day", secs(b.dayReset))
		}
		if l.RPM > 0 {
			h.Set("x-ratelimit-limit-requests-minute", itoa(l.RPM))
		}
		if l.TPM > 0 {
			h.Set("x-ratelimit-limit-tokens-minute", itoa(l.TPM))
			h.Set("x-ratelimit-remaining-tokens-minute", rem(l.TPM, u.minTok))
			h.Set("x-ratelimit-reset-tokens-minute", secs(b.minReset))
		}
		if l.TPD > 0 {
			h.Set("x-ratelimit-limit-tokens-day", itoa(l.TPD))
		}
	case FlavorOpenRouter:
		switch {
		case l.RPD > 0:
			h.Set("X-RateLimit-Limit", itoa(l.RPD))
			h.Set("X-RateLimit-Remaining", rem(l.RPD, u.dayReq))
			h.Set("X-RateLimit-Reset", strconv.FormatInt(now.Add(b.dayReset).UnixMilli(), 10))
		case l.RPM > 0:
			h.Set("X-RateLimit-Limit", itoa(l.RPM))
			h.Set("X-RateLimit-Remaining", rem(l.RPM, u.minReq))
			h.Set("X-RateLimit-Reset", strconv.FormatInt(now.Truncate(time.Minute).Add(time.Minute).UnixMilli(), 10))
		}
	case FlavorMistral:
		if l.RPM > 0 {
			h.Set("x-ratelimit-limit-req-minute", itoa(l.RPM))
			h.Set("x-ratelimit-remaining-req-minute", rem(l.RPM, u.minReq))
		}
		if l.TPM > 0 {
			h.Set("x-ratelimit-limit-tokens-minute", itoa(l.TPM))
			h.Set("x-ratelimit-remaining-tokens-minute", rem(l.TPM, u.minTok))
		}
	}
}
