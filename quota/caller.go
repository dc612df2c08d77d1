package quota

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/tollfree/tollfree/config"
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

// Admit checks and counts one question of caller: Enter with l's limits
// (a Pass it would give is dropped: l has no limit that Leave gives back).
// caller is an opaque id (a hashed visitor id, a gateway key); it is
// hashed again (SHA-256, first 16 bytes) before it names a counter, so no
// raw id reaches the Store. An owner skips the per-caller limits and may
// use the whole SiteDay including the Reserve; owners still count. Checks
// and counts are one atomic Store.Spend: a refused question is not
// counted. A Store error is returned wrapped with Admission{OK: true}: the
// site answers while its store is down.
func (b *Book) Admit(ctx context.Context, caller string, owner bool, l CallerLimits) (Admission, error) {
	_, err := b.Enter(ctx, Ask{
		Caller: caller, Owner: owner,
		Limits:  config.CallerLimits{PerHour: l.PerHour, PerDay: l.PerDay},
		SiteDay: l.SiteDay, Reserve: l.Reserve,
	})
	var le *LimitError
	switch {
	case errors.As(err, &le):
		return Admission{Limit: le.Name(), RetryAt: le.RetryAt}, nil
	case err != nil:
		return Admission{OK: true}, err
	}
	return Admission{OK: true}, nil
}

// callerKey names a caller's counters without its raw id.
func callerKey(caller string) string {
	sum := sha256.Sum256([]byte(caller))
	return "caller:" + hex.EncodeToString(sum[:16])
}
