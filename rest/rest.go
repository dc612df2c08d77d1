package rest

import (
	"context"
	"fmt"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/state"
)

// Store is where rests are kept, shared by every instance that shares it;
// state.Store implements it.
type Store interface {
	SetRest(ctx context.Context, r state.Rest) error
	ClearRest(ctx context.Context, key string, manual bool) error
	Rests(ctx context.Context, now time.Time) ([]state.Rest, error)
}

// classPaused is the stored class of a pause set by hand.
const classPaused = "paused"

// Rest is a route or provider held back until a time: after a failure it
// caused, or by hand.
type Rest struct {
	Key Key
	// Until is when the rest ends; the zero time means until lifted, for a
	// pause set by hand.
	Until time.Time
	// Class is the class of the failure that caused the rest: a class that
	// rests (failure.Class.Rests). It means nothing for a Manual rest.
	Class failure.Class
	// Manual marks a pause set by hand: only a hand lifts it.
	Manual bool
	// Reason is a short redacted text for the status page.
	Reason string
	// Since is when the rest started.
	Since time.Time
}

// Active reports whether r still holds at now.
func (r Rest) Active(now time.Time) bool {
	return r.Until.IsZero() || now.Before(r.Until)
}

// Exhausts reports whether r is today's quota spent: an automatic rest for
// a per-day limit.
func (r Rest) Exhausts() bool { return !r.Manual && r.Class == failure.RateDay }

// Label is r's class as the status page, the metrics and the state store
// write it: "paused" for a pause set by hand, else the failure class
// ("rate_day").
func (r Rest) Label() string {
	if r.Manual {
		return classPaused
	}
	return r.Class.String()
}

// record returns r as the store keeps it.
func (r Rest) record() state.Rest {
	return state.Rest{Key: r.Key.String(), Until: r.Until, Class: r.Label(), Reason: r.Reason, Manual: r.Manual, Since: r.Since}
}

// fromRecord reads a stored rest. A class this version does not know (a
// newer instance's) reads as failure.NumClasses, whose label is "unknown".
func fromRecord(s state.Rest) Rest {
	r := Rest{Key: ParseKey(s.Key), Until: s.Until, Manual: s.Manual, Reason: s.Reason, Since: s.Since}
	if !s.Manual {
		c, ok := failure.ParseClass(s.Class)
		if !ok {
			c = failure.NumClasses
		}
		r.Class = c
	}
	return r
}

// Table is the rests in force, by key, as one request or one status
// snapshot reads them. A nil Table holds no rest.
type Table map[Key]Rest

// Load reads the rests active at now. On an error it returns what it could
// read (often nothing) with the error.
func Load(ctx context.Context, st Store, now time.Time) (Table, error) {
	rs, err := st.Rests(ctx, now)
	if err != nil {
		err = fmt.Errorf("rest: reading rests: %w", err)
	}
	t := make(Table, len(rs))
	for _, s := range rs {
		if r := fromRecord(s); !r.Key.IsZero() && r.Active(now) {
			t[r.Key] = r
		}
	}
	return t, err
}

// Put adds r to t; a nil t is left alone.
func (t Table) Put(r Rest) {
	if t != nil && !r.Key.IsZero() {
		t[r.Key] = r
	}
}

// Holding returns the rest that holds rt back at now: its own, else its
// provider's.
func (t Table) Holding(rt *config.Route, now time.Time) (Rest, bool) {
	for _, k := range KeysOf(rt) {
		if r, ok := t[k]; ok && r.Active(now) {
			return r, true
		}
	}
	return Rest{}, false
}

// Ends returns the soonest end after now of an automatic rest of rt or its
// provider: when rt may come back without a hand. It is zero when none
// will.
func (t Table) Ends(rt *config.Route, now time.Time) time.Time {
	var end time.Time
	for _, k := range KeysOf(rt) {
		if r, ok := t[k]; ok && !r.Manual && r.Until.After(now) && (end.IsZero() || r.Until.Before(end)) {
			end = r.Until
		}
	}
	return end
}
