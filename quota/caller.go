package quota

import (
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
