package quota

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
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

// callerKey names a caller's counters without its raw id.
func callerKey(caller string) string {
	sum := sha256.Sum256([]byte(caller))
	return "caller:" + hex.EncodeToString(sum[:16])
}
