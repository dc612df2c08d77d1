package quota

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tollfree/tollfree/state"
)

// Caller windows: a sliding hour of six 10-minute slots, and a rolling day
// of 24 one-hour slots for both the caller's and the site's daily count (a
// site needs no time zone, and a rolling day never lets a whole day's
// questions through in the minute after midnight).
const (
	hourSlot  = 10 * time.Minute
	hourSlots = 6
	siteKey   = "site|day"
)

// CallerLimits are the per-caller limits (seed 000: 15 questions an hour and
// 40 a day per visitor, 3,000 a day for the site). Zero fields: no limit.
type CallerLimits struct {
	// PerHour caps one caller's questions in a sliding hour.
	PerHour int
	// PerDay caps one caller's questions in a rolling day.
	PerDay int
	// SiteDay caps every caller's questions together in a rolling day; past
	// it the site answers by its fallback (search alone).
	SiteDay int
	// Reserve is the part of SiteDay kept for owners (seed 004: "the daily
	// total has a reserve so the owner can always get through"): other
	// callers stop at SiteDay − Reserve.
	Reserve int
}

// Admission is Admit's answer.
type Admission struct {
	// OK is true when the caller may ask.
	OK bool
	// Limit names the limit that refused: "caller hour", "caller day" or
	// "site day".
	Limit string
	// RetryAt is when the caller may ask again.
	RetryAt time.Time
}

// CallerLimitError is a question refused by the caller limits: the
// caller's own hour or day, or the site's day. The gateway returns it when
// Admit refuses and no fallback answers instead; the HTTP API answers it
// with 429 and Retry-After.
type CallerLimitError struct {
	// Limit names the limit that refused, as Admission.Limit.
	Limit string
	// Max is that limit's number of questions (for "site day", the whole
	// SiteDay, the owner's reserve included).
	Max int
	// RetryAt is when the caller may ask again; zero when unknown.
	RetryAt time.Time
}

// Error says which limit refused, in words a visitor can read.
func (e *CallerLimitError) Error() string {
	if e.Limit == "site day" {
		return "the site has used today's " + strconv.Itoa(e.Max) + " questions; try again later"
	}
	return "this caller has asked its " + strconv.Itoa(e.Max) + " questions for the " + strings.TrimPrefix(e.Limit, "caller ") + "; try again later"
}

// Max returns the number of questions of the limit named (Admission.Limit).
func (l CallerLimits) Max(limit string) int {
	switch limit {
	case "caller hour":
		return l.PerHour
	case "caller day":
		return l.PerDay
	}
	return l.SiteDay
}

// Admit checks and counts one question of caller. caller is an opaque id
// (a hashed visitor id, a gateway key); it is hashed again (SHA-256, first
// 16 bytes) before it names a counter, so no raw id reaches the Store. An
// owner skips the per-caller limits and may use the whole SiteDay including
// the Reserve; owners still count. Checks and counts are one atomic
// Store.Spend: a refused question is not counted. A Store error is returned
// wrapped with Admission{OK: true}: the site answers while its store is down.
func (b *Book) Admit(ctx context.Context, caller string, owner bool, l CallerLimits) (Admission, error) {
	now := b.clock.Now()
	hour := slidingWindow(now, hourSlot, hourSlots)
	day := slidingWindow(now, rollingSlot, rollingSlots)
	key := callerKey(caller)
	var spends [3]state.Spend
	var wins [3]window
	var names [3]string
	n := 0
	add := func(name string, w window, k string, limit int64) {
		spends[n] = w.spend(k, limit, 1)
		wins[n] = w
		names[n] = name
		n++
	}
	if l.PerHour > 0 {
		add("caller hour", hour, key+"|hour", limitUnless(owner, l.PerHour))
	}
	if l.PerDay > 0 {
		add("caller day", day, key+"|day", limitUnless(owner, l.PerDay))
	}
	if l.SiteDay > 0 {
		site := int64(l.SiteDay)
		if !owner {
			site = max(site-int64(l.Reserve), 0)
		}
		if site == 0 {
			// Everything is reserved: refuse without asking the store.
			return Admission{Limit: "site day", RetryAt: day.firstExpiry()}, nil
		}
		add("site day", day, siteKey, site)
	}
	if n == 0 {
		return Admission{OK: true}, nil
	}
	failed, err := b.store.Spend(ctx, spends[:n])
	if err != nil {
		return Admission{OK: true}, fmt.Errorf("quota: admit: %w", err)
	}
	if failed < 0 || failed >= n {
		return Admission{OK: true}, nil
	}
	a := Admission{Limit: names[failed]}
	a.RetryAt, _, err = b.until(ctx, spends[failed], wins[failed])
	if err != nil {
		a.RetryAt = wins[failed].firstExpiry()
	}
	return a, nil
}

// limitUnless returns limit, or 0 (count without checking) for an owner.
func limitUnless(owner bool, limit int) int64 {
	if owner {
		return 0
	}
	return int64(limit)
}

// callerKey names a caller's counters without its raw id.
func callerKey(caller string) string {
	sum := sha256.Sum256([]byte(caller))
	return "caller:" + hex.EncodeToString(sum[:16])
}
