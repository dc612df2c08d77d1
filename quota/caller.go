package quota

import (
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

// siteKeyHash is siteKey's state.HashKey, for Spend.KeyHash.
var siteKeyHash = state.HashKey(siteKey)
