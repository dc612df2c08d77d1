package cache

import (
	"context"
	"errors"
	"time"
)

// Tiered is a Backend that reads Fast first, then Slow, copying a Slow hit
// into Fast, and writes both. The usual pair is a Memory in front of a Disk
// or a Redis backend. It is as safe for concurrent use as its tiers.
type Tiered struct {
	Fast, Slow Backend
	// PromoteTTL is how long a Slow hit is kept in Fast when Slow cannot say
	// how long the entry has left (it does not implement TTLGetter). Zero
	// means 5 minutes.
	PromoteTTL time.Duration
}

var _ Backend = Tiered{}

// defaultPromoteTTL bounds how stale a promoted copy can be when Slow does
// not report remaining lifetimes.
const defaultPromoteTTL = 5 * time.Minute

// Get returns the value of k from Fast, or else from Slow. A failing Fast is
// skipped; an error is returned only when neither tier could answer.
func (t Tiered) Get(ctx context.Context, k Key) ([]byte, bool, error) {
	v, ok, ferr := t.Fast.Get(ctx, k)
	if ferr == nil && ok {
		return v, true, nil
	}
	var (
		left time.Duration
		serr error
	)
	if tg, isTG := t.Slow.(TTLGetter); isTG {
		v, left, ok, serr = tg.GetTTL(ctx, k)
	} else {
		v, ok, serr = t.Slow.Get(ctx, k)
		left = t.PromoteTTL
		if left <= 0 {
			left = defaultPromoteTTL
		}
	}
	if serr != nil {
		return nil, false, errors.Join(ferr, serr)
	}
	if !ok {
		return nil, false, ferr
	}
	if ferr == nil {
		// A failed promotion only costs a later slow read.
		_ = t.Fast.Set(ctx, k, v, left)
	}
	return v, true, nil
}

// Set writes v to both tiers, Slow first, and returns their errors joined.
func (t Tiered) Set(ctx context.Context, k Key, v []byte, ttl time.Duration) error {
	serr := t.Slow.Set(ctx, k, v, ttl)
	ferr := t.Fast.Set(ctx, k, v, ttl)
	return errors.Join(serr, ferr)
}
