package quota

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
)

// The slot sizes. A sliding minute is minuteSlots slots of minuteSlot; a
// rolling day is rollingSlots slots of rollingSlot. A route's or provider's
// window is summed over one slot more than that (windowFor): the current
// slot has only begun, so sixty 1-second slots cover just the last 59 to
// 60 seconds, and a request passed that a provider counting a true minute
// refuses with a 429 (found by the day simulator, tools/sim: 20 TPM 429s in
// seed 000's day). One slot more covers 60 seconds and at most a slot
// more, never less than the provider's minute; 25 hourly slots likewise
// never less than its day.
//
// The minute's slots are a quarter second (issue 31; 10 seconds before
// issue 18, then 5, then 1): a route bound by its minute carries its limit
// per 60 to 60.25 seconds. A budget counts a call until the slot after the
// provider's minute let it go, and at the edge of a minute that is the
// next call's room: thirteen 5-second slots held Cerebras, bound by its 30
// requests a minute, to 280 answers on the evaluation batch of tools/sim
// where the naive loop's 429s found room for 300; 1-second slots still
// missed the call a second's first quarter would have taken, a question
// 60.1 seconds after the one that filled Groq's 8,000 tokens a minute, and
// tollfree answered 3,143 of the batch's eight seeds where quarter seconds
// answer 3,149 and the naive loop 3,141 (docs/SIM.md has today's
// figures). A provider stamps a call when it arrives, a few milliseconds
// after the budget counted it, and the next call's the same few later: the
// quarter second is slack enough for their difference. A Redis window
// reads three keys whatever its slots (redisstore) and sums its slots again
// once a slot, so a busy window costs the shared store a read of 241 keys
// four times a second; a memstore counter keeps its window's sum, adds to
// it at each spend, and sums its live slots again only when the window
// moves or one of them expires.
const (
	minuteSlot   = 250 * time.Millisecond
	minuteSlots  = 240
	rollingSlot  = time.Hour
	rollingSlots = 24
	// dayTTL keeps a midnight day's slot a little longer than the longest
	// day (25 hours across a daylight-saving change).
	dayTTL = 26 * time.Hour
	// monthTTL keeps a month's one slot a little longer than the longest
	// month.
	monthTTL = 32 * 24 * time.Hour
)

// kind is one of the budgets of a route or provider. The hour and month
// kinds (rph, tph, tpmo, rpmo) come after the four every route counts: they are
// counted only where a limit is configured (counted), so that a route
// without them costs the Store nothing more.
type kind int

const (
	rpm kind = iota
	rpd
	tpm
	tpd
	rph
	tph
	tpmo
	rpmo
	nKinds
)

var kindNames = [nKinds]string{"rpm", "rpd", "tpm", "tpd", "rph", "tph", "tpmo", "rpmo"}

func (k kind) String() string { return kindNames[k] }

func (k kind) daily() bool   { return k == rpd || k == tpd }
func (k kind) hourly() bool  { return k == rph || k == tph }
func (k kind) monthly() bool { return k == tpmo || k == rpmo }
func (k kind) tokens() bool  { return k == tpm || k == tpd || k == tph || k == tpmo }

// counted reports whether budget k of scope limits l is kept at all: the
// first four always (a limit may be learned from headers at any time),
// the hour and month only with a configured limit (no header teaches them).
func (k kind) counted(l config.Limits) bool {
	return k < rph || limitOf(l, k) > 0
}

func limitOf(l config.Limits, k kind) int64 {
	switch k {
	case rpm:
		return int64(l.RPM)
	case rpd:
		return int64(l.RPD)
	case tpm:
		return int64(l.TPM)
	case tpd:
		return int64(l.TPD)
	case rph:
		return int64(l.RPH)
	case tph:
		return int64(l.TPH)
	case tpmo:
		return int64(l.TPMo)
	default:
		return int64(l.RPMo)
	}
}

// window says which slots of a counter make a budget at a moment.
type window struct {
	slot  int64 // current slot index
	slots int   // slots in the window, ending at slot
	size  time.Duration
	ttl   time.Duration
	// reset is the next reset of a midnight day or a month; zero otherwise.
	reset time.Time
}

// slidingWindow returns a window of n slots of size ending at now's slot.
func slidingWindow(now time.Time, size time.Duration, n int) window {
	s := floorDiv(now.UnixNano(), int64(size))
	return window{
		slot:  s,
		slots: n,
		size:  size,
		ttl:   time.Duration(n+1) * size,
	}
}

// windowFor returns the window of budget k on reset rule rs at now.
func windowFor(k kind, rs config.Reset, now time.Time) window {
	switch {
	case k.hourly():
		// The caller's six 10-minute slots (caller.go), summed over one
		// more like the minute: 60 to 70 minutes, never less than the
		// provider's hour.
		return slidingWindow(now, hourSlot, hourSlots+1)
	case k.monthly():
		loc := location(rs)
		return window{slot: monthNumber(now, loc), slots: 1, ttl: monthTTL, reset: nextMonth(now, loc)}
	case !k.daily():
		return slidingWindow(now, minuteSlot, minuteSlots+1)
	}
	if rs.Kind == config.ResetRolling {
		return slidingWindow(now, rollingSlot, rollingSlots+1)
	}
	return midnightWindow(now, location(rs))
}

// A midnight day's window changes only at the zone's midnight, but working
// it out reads the date in the zone twice (dayNumber, NextReset): for the
// rpd and tpd of a route and its provider at every reservation. Each zone
// keeps its current day's window in days, checked against the day's
// bounds (issue 18, item 2).
type dayEntry struct {
	loc         *time.Location
	from, until int64 // the day's bounds, unix nanoseconds: [from, until)
	w           window
}

// days holds the day windows of the zones used lately, a few at most: a
// plan names a zone for each provider preset with a midnight reset.
var days [8]atomic.Pointer[dayEntry]

// midnightWindow returns the window of the day holding now in loc.
func midnightWindow(now time.Time, loc *time.Location) window {
	ns := now.UnixNano()
	free := -1
	for i := range days {
		e := days[i].Load()
		switch {
		case e == nil:
			if free < 0 {
				free = i
			}
		case e.loc == loc:
			if ns >= e.from && ns < e.until {
				return e.w
			}
			free = i
		}
	}
	y, m, d := now.In(loc).Date()
	start := clock.DayStart(y, m, d, loc)
	w := window{slot: dayNumber(now, loc), slots: 1, ttl: dayTTL, reset: NextReset(config.Reset{Kind: config.ResetMidnight, Location: loc}, now)}
	if free < 0 {
		free = int(ns & (int64(len(days)) - 1))
	}
	if start.UnixNano() <= ns && ns < w.reset.UnixNano() {
		days[free].Store(&dayEntry{loc: loc, from: start.UnixNano(), until: w.reset.UnixNano(), w: w})
	}
	return w
}

// firstExpiry is when the oldest slot of a sliding window drops out: the
// next slot boundary.
func (w window) firstExpiry() time.Time {
	if !w.reset.IsZero() {
		return w.reset
	}
	return w.start().Add(w.size)
}

// start is when a sliding window's current slot began; its slot i, counted
// from the oldest, 0-based, drops out of the sum at start + (i+1)*size.
func (w window) start() time.Time {
	return time.Unix(0, w.slot*int64(w.size))
}

// expiry returns when the window's i-th oldest slot (0-based) drops out.
func (w window) expiry(i int) time.Time {
	if !w.reset.IsZero() {
		return w.reset
	}
	return w.start().Add(time.Duration(i+1) * w.size)
}

func (w window) spend(key string, limit, amount int64) state.Spend {
	return state.Spend{Key: key, Slot: w.slot, Slots: w.slots, Limit: limit, Amount: amount, TTL: w.ttl}
}

// NextReset returns the next daily reset after now under rule reset: the
// next local midnight in reset.Location for a midnight reset (a nil Location
// is UTC), and the next hour boundary for a rolling day, when its oldest
// hour of counts drops out; the router rests an exhausted route until then.
func NextReset(reset config.Reset, now time.Time) time.Time {
	if reset.Kind == config.ResetRolling {
		return now.Truncate(rollingSlot).Add(rollingSlot)
	}
	loc := location(reset)
	y, m, d := now.In(loc).Date()
	return clock.DayStart(y, m, d+1, loc) // time.Date's normalizing makes d+1 a date
}

// dayNumber names a local calendar day: days since 1970-01-01 of the date
// shown in loc. It is the same all day however long the day is.
func dayNumber(now time.Time, loc *time.Location) int64 {
	y, m, d := now.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// monthNumber names a calendar month in loc: months since January 1970.
func monthNumber(now time.Time, loc *time.Location) int64 {
	y, m, _ := now.In(loc).Date()
	return int64(y-1970)*12 + int64(m-1)
}

// nextMonth is the first of the next month at 00:00 in loc, when a
// monthly budget starts again: providers count a calendar month (Mistral's
// "tokens per month"), on the reset rule's zone, UTC for a rolling day.
func nextMonth(now time.Time, loc *time.Location) time.Time {
	y, m, _ := now.In(loc).Date()
	return clock.DayStart(y, m+1, 1, loc)
}

func location(rs config.Reset) *time.Location {
	if rs.Location == nil {
		return time.UTC
	}
	return rs.Location
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// allowed returns how much of limit a spend may fill under margin:
// ceil(limit*(1-margin)), see the package doc. Zero stays zero (no limit).
func allowed(limit int64, margin float64) int64 {
	if limit <= 0 || margin <= 0 {
		return limit
	}
	if margin >= 1 {
		return 1
	}
	// held back: whole units the margin fully covers; the epsilon absorbs
	// float error such as 14400*0.05 = 719.9999...
	held := int64(math.Floor(float64(limit)*margin + 1e-9))
	return limit - held
}
