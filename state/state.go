// Package state declares the Store that holds everything the router must
// remember between requests, and between restarts or instances: budget
// counters, rests, pauses set by hand, and notes (limits and latencies
// learned from answers). Two implementations pass one
// conformance suite (state/storetest): state/memstore, in memory and
// snapshotted under the data folder, and state/redisstore, shared by every
// instance through Redis.
//
// Counters are windows of slots. A per-minute budget is 241 quarter-second
// slots summed (a sliding minute: the current slot has only begun, so 241
// cover the last 60 to 60.25 seconds, never less than a provider's
// minute); a
// per-day budget on a midnight reset is one slot named for the day; a
// rolling day is 25 one-hour slots, for the same reason; an hour is seven
// 10-minute slots, a calendar month one slot named for the month. The
// quota package decides the slots (quota/window.go); a Store only sums, checks and adds,
// atomically.
//
// A Store may have optional abilities, found with Find (through a Store
// that wraps another): SplitSpender checks a caller's limits and a route's
// budget in one call, Deferrer takes the adds made after an answer off the
// caller's path. The Redis store has both, so that a request costs one
// round trip before its call; memstore checks two groups under one hold of
// its lock. A Store without them is asked one call at a time.
package state

import (
	"context"
	"errors"
	"math/bits"
	"time"
)

// Spend is one counter to check and add to.
type Spend struct {
	// Key names the counter ("groq/llama-3.3-70b-versatile|rpm"). It must not
	// contain '{' or '}' (the Redis store wraps it in a hash tag).
	Key string
	// Slot is the index of the current slot (for example unix seconds / 10).
	Slot int64
	// Slots is how many slots, ending at Slot, make the window. At least 1.
	Slots int
	// Limit is the window's cap; 0 means count without checking.
	Limit int64
	// Amount is added to the current slot; negative amounts give back.
	Amount int64
	// TTL is how long a slot must be kept after it was last written; at
	// least the window's length.
	TTL time.Duration
	// Exact asks a Store shared by several instances to check this spend
	// against the shared count every time, never against a share of the
	// window an instance holds (see redisstore's shares): for a counter
	// that another instance may fill at once, as a caller's mute is.
	Exact bool
	// KeyHash is HashKey(Key), or 0 when its maker did not work it out. A
	// Store that names counters by that hash (memstore) uses it rather
	// than hash Key again: the quota package keeps the names it counts on
	// at every request with their hashes. Any other value is a
	// programmer error, and counts on another counter.
	KeyHash uint64
}

// HashKey returns the 64-bit hash of a counter's key that a Store may name
// it by (memstore does, in memory and in its counters file): 8 bytes at a
// time, then a finalizer, never 0. It is part of memstore's file format:
// changing it loses the single-slot counts of a running site at the next
// upgrade.
func HashKey(key string) uint64 {
	const k1, k2 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F
	h := uint64(len(key)) * k1
	word := func(i int) uint64 {
		return uint64(key[i]) | uint64(key[i+1])<<8 | uint64(key[i+2])<<16 | uint64(key[i+3])<<24 |
			uint64(key[i+4])<<32 | uint64(key[i+5])<<40 | uint64(key[i+6])<<48 | uint64(key[i+7])<<56
	}
	i := 0
	for ; i+8 <= len(key); i += 8 {
		h = bits.RotateLeft64((h^word(i))*k1, 31) * k2
	}
	if i < len(key) {
		var w uint64
		if len(key) >= 8 {
			w = word(len(key) - 8) // the last 8 bytes, overlapping the ones before
		} else {
			for j := len(key) - 1; j >= 0; j-- {
				w = w<<8 | uint64(key[j])
			}
		}
		h = bits.RotateLeft64((h^w)*k1, 31) * k2
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	if h == 0 {
		h = 1
	}
	return h
}

// Rest is a route or provider skipped until a time, as a Store keeps it.
// Package rest reads and writes it with typed keys and classes; here it is
// the stored record. Its JSON form is the one every Store writes (memstore's
// rests.json, Redis values and events): the tags are a file format shared
// with other instances and older versions, so they never change.
type Rest struct {
	// Key is a route ID ("groq/llama-3.3-70b-versatile") or "provider:groq"
	// (rest.Key's text).
	Key string `json:"key"`
	// Until is when the rest ends. The zero time means "until lifted", for
	// pauses set by hand.
	Until time.Time `json:"until"`
	// Class is the failure class that caused it ("rate_day"), or "paused".
	Class string `json:"class"`
	// Reason is a short redacted text for the status page.
	Reason string `json:"reason,omitempty"`
	// Manual marks a pause set by hand: only a hand lifts it.
	Manual bool `json:"manual,omitempty"`
	// Since is when the rest started.
	Since time.Time `json:"since"`
}

// Active reports whether r still rests at now.
func (r Rest) Active(now time.Time) bool {
	return r.Until.IsZero() || now.Before(r.Until)
}

// Store is the router's memory. All methods are safe for concurrent use and
// take a ctx that bounds any I/O. A Store keeps nothing of the spends it is
// given once a call returns (nor does a Deferrer's AddLater): the caller
// may use the slice again.
type Store interface {
	// Spend checks every spend's window (window sum + Amount <= Limit, where
	// Limit > 0) and only if all pass adds every Amount. It returns -1 when
	// all were added, or the index of the first spend that failed, in which
	// case nothing was added. Atomic: two instances never together pass a
	// limit.
	Spend(ctx context.Context, spends []Spend) (failed int, err error)
	// Add adds every Amount without checking (failed calls still count;
	// reconciling an estimate with the reported usage).
	Add(ctx context.Context, spends []Spend) error
	// Sums returns each spend's window sum, Amount and Limit ignored.
	Sums(ctx context.Context, spends []Spend) ([]int64, error)

	// SetRest records a rest, replacing any rest of the same key unless the
	// existing one is Manual and r is not (a hand's pause wins).
	SetRest(ctx context.Context, r Rest) error
	// ClearRest removes the rest of key. With manual false it removes only an
	// automatic rest (a probe that succeeded); with manual true any rest.
	ClearRest(ctx context.Context, key string, manual bool) error
	// Rests returns every rest still active at now.
	Rests(ctx context.Context, now time.Time) ([]Rest, error)

	// SetNote keeps value under key for ttl (> 0), replacing any note of the
	// same key. Notes are small facts the router learned (a limit read from
	// rate-limit headers, a route's latency) that a restart, a config reload
	// and every other instance should know. They are written and read off
	// the request path: a note change is rare, or a periodic snapshot.
	SetNote(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Notes returns every note still kept whose key starts with prefix.
	Notes(ctx context.Context, prefix string) (map[string][]byte, error)
}

// ErrUnavailable is wrapped by a Store that cannot reach its backend; the
// caller carries on with local state.
var ErrUnavailable = errors.New("state store unavailable")

// ErrNotPersisted is wrapped by a Store whose change took effect (every
// reader of the Store sees it) but could not be written to disk yet, a full
// disk say. The Store keeps retrying the write; until one succeeds, a crash
// would lose the change. A caller treats the change as made and may warn.
var ErrNotPersisted = errors.New("state change in effect but not yet written to disk")

// SplitSpender is a Store that checks two groups of spends in one call: a
// caller's limits and a route's budget in one round trip (issue 18). A
// Store without it is asked with two Spends.
type SplitSpender interface {
	// SpendSplit checks spends[:must] as Spend does, all or nothing, and
	// only if they were added checks and adds spends[must:] the same way.
	// It returns -1 when every spend was added; the index of the first
	// spend that failed otherwise: below must, nothing was added; must or
	// above, spends[:must] were added and spends[must:] were not. Atomic
	// like Spend.
	SpendSplit(ctx context.Context, spends []Spend, must int) (failed int, err error)
}

// Deferrer is a Store that takes adds off the caller's path: the
// corrections made after an answer (usage settled, a request in flight
// given back, a header's correction), which nothing waits for.
type Deferrer interface {
	// AddLater queues an Add, applied within a few milliseconds together
	// with the others queued meanwhile, and at the latest when the Store
	// is closed. It never fails: an add the backend cannot take is applied
	// as Add applies it when the backend is away. A spend's Limit, which
	// Add ignores, says how near its window is to refusing: a Store may
	// apply a give-back (a negative Amount) to a window near its Limit at
	// once, so that every instance sees it before the caller asks again.
	AddLater(spends []Spend)
	// Flush returns once every add queued before it is applied.
	Flush(ctx context.Context)
}

// Unwrapper is a Store wrapping another (a Store that scrubs what it
// keeps, say): Find looks through it for an optional ability.
type Unwrapper interface {
	Unwrap() Store
}

// Find returns s, or the first Store s wraps (Unwrapper), that has the
// optional ability T.
func Find[T any](s Store) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		u, ok := s.(Unwrapper)
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	var zero T
	return zero, false
}
