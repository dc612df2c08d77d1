package rest

import (
	"context"
	"fmt"
	"time"

	"github.com/tollfree/tollfree/failure"
)

// TraitTTL is how long a learned trait is kept (NoPrefix): long enough
// that a route is not asked again request after request, short enough that
// a provider that starts to honour a prefix is used so again within the
// week.
const TraitTTL = 7 * 24 * time.Hour

// Learn records, in the store every instance shares, that the route of key
// (a TraitKey) has its trait from now until until; class is the class of
// the answer that taught it, reason its redacted short text. It returns
// the trait as a Rest, for the learning request's Table. A trait holds
// nothing back and is never shown as a rest: it rides with the rests only
// so that every request, which reads them anyway (Load), knows it without
// another round trip. The trait is returned even when the store failed.
func Learn(ctx context.Context, st Store, key Key, class failure.Class, now, until time.Time, reason string) (Rest, error) {
	r := Rest{Key: key, Until: until, Class: class, Reason: reason, Since: now}
	if _, _, ok := key.Trait(); !ok {
		return Rest{}, fmt.Errorf("rest: learning %s: not a trait's key", key)
	}
	if err := st.SetRest(ctx, r.record()); err != nil {
		return r, fmt.Errorf("rest: learning %s: %w", key, err)
	}
	return r, nil
}

// Knows reports whether t holds the trait key (a TraitKey) at now.
func (t Table) Knows(key Key, now time.Time) bool {
	r, ok := t[key]
	return ok && r.Active(now)
}
