package rest

import (
	"context"
	"fmt"
	"time"
)

// Pause holds key back by hand from now until until (the zero time: until
// resumed). Only Resume lifts it: no failure, probe or rest of the router
// replaces it. note is the operator's reason, already cleaned for the
// status page ("" for none). The pause is returned even when the store's
// error is state.ErrNotPersisted (in effect, not yet on disk); any other
// error means it did not take effect.
func Pause(ctx context.Context, st Store, key Key, now, until time.Time, note string) (Rest, error) {
	r := Rest{Key: key, Until: until, Manual: true, Since: now, Reason: "paused by hand"}
	if note != "" {
		r.Reason += ": " + note
	}
	if err := st.SetRest(ctx, r.record()); err != nil {
		return r, fmt.Errorf("rest: pausing %s: %w", key, err)
	}
	return r, nil
}

// Resume lifts any rest of key, a pause set by hand or an automatic rest.
func Resume(ctx context.Context, st Store, key Key) error {
	if err := st.ClearRest(ctx, key.String(), true); err != nil {
		return fmt.Errorf("rest: resuming %s: %w", key, err)
	}
	return nil
}
