package redisstore

import (
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/tollfree/tollfree/state"
)

// Shares take the round trip off most requests (issue 18: a round trip
// per request made Redis mode cost half of local mode, and a loopback
// round trip alone is more than the 0.15 ms a request may add).
//
// When the script adds a spend on a window this instance spends on again
// and again, it adds a few more units besides, granted to this instance:
// its share of the window. Later spends on that window in the same slot
// are taken from the share in memory, without a round trip, when every
// checked spend of the call is covered by a share (else the whole call
// goes to Redis, as without shares). A share's units are counted in
// Redis from the moment they are granted, so the instances together still
// never pass a limit; what a share costs is that the other instances see
// the window that much fuller until it is spent or given back. So a
// share is small and soon returned:
//
//   - it is asked for only from this instance's second spend on a window
//     within a second or two (a visitor seen once holds nothing), only
//     when every checked spend of the call can be shared, and never for
//     a spend marked Exact (a caller's mute, which another instance sets
//     with one add);
//   - it is asked for only where min(maxShare × amount, limit / 32) is
//     at least minShare (16) amounts: a window of requests from a limit
//     of 512, never a minute of 30;
//   - the script grants at most that, at most a quarter of what the
//     window has left after the amount, divided by the instances alive,
//     nothing under the amount, and nothing once less than an eighth of
//     the limit is left, unless what is left is still at least eight
//     grants for each instance alive: in the last eighth of its limit (or
//     of those eight grants, for a limit far above its spends) every
//     spend goes to Redis, exactly as without shares. A share therefore
//     holds at most 1/32 of a limit, within the default 5 % margin a
//     chain keeps from a provider's own count. (With the eighth alone, a
//     day of a billion tokens was asked about at every request for its
//     last 125 million: Redis mode ran at 0.55 of its rate for the last
//     hours of a busy day);
//   - what is left of it is given back (a negative add to its slot,
//     queued like AddLater's) when its window's slot moves on, when this
//     instance has not spent on it for a tick of the maintenance loop (a
//     second), when Redis goes away (then to Local, pending, pushed when
//     Redis returns), and at Close.
//
// The adds made after an answer to a window held here (a request in
// flight given back, tokens settled or corrected by a header) go to the
// share, not to Redis: its units are in Redis's count already. Sums
// subtracts what this instance holds, so that a reading of a window
// (Observe's, a refusal's retry time, the status page) counts what was
// spent, not what was set aside.
//
// A window without a limit (a route's tokens per minute that no header
// has taught yet: counted, never checked) is tallied the same way: the
// adds this instance makes to it are summed here and pushed to Redis at
// every tick of the maintenance loop (a second), when its slot moves on,
// when Redis goes away and at Close, instead of a round trip each. Nobody
// is refused by such a window; the cost is that the other instances see
// this instance's last second of it late, which Sums, here, does not.

// maxShare bounds a grant: so many spends of the same amount.
const maxShare = 128

// shareDiv is the part of a limit a grant may hold at most: 1/shareDiv.
const shareDiv = 32

// minShare is the fewest spends a window's largest grant must cover for
// it to be shared at all: a smaller share would spare few round trips
// for what it sets aside. So a window of requests is shared from a limit
// of 512 (a day of 1,000 requests, not a minute of 30).
const minShare = 16

// held is what this instance holds of one window's current slot.
type held struct {
	slot  int64
	slots int
	ttl   time.Duration
	left  int64  // units granted and not yet spent here
	owed  int64  // adds to a window without a limit, not yet in Redis
	used  uint64 // the tick of the last spend
	// granted is set once a share of slot was granted: only then do the
	// adds after an answer go to it.
	granted bool
	// checked is set once a spend checked the window here: an add to it
	// is never tallied, since another instance may check it next.
	checked bool
	// most is the largest grant of slot: give-backs of spends Redis made
	// (before this share, or past it) grow the share, and what passes
	// twice this is given back, so that a share stays about a grant.
	most int64
}

// add is an add of amount to sh's slot of the window key.
func (sh *held) add(key string, amount int64) state.Spend {
	return state.Spend{Key: key, Slot: sh.slot, Slots: sh.slots, Amount: amount, TTL: sh.ttl}
}

// appendOwed appends to back the add that pushes sh's tally, if it has
// one, and empties the tally.
func (sh *held) appendOwed(back []state.Spend, key string) []state.Spend {
	if sh.owed == 0 {
		return back
	}
	back = append(back, sh.add(key, sh.owed))
	sh.owed = 0
	return back
}

// shares are the windows this instance holds a share of, tallies, or
// spent on in the last tick or two (a grant is asked at the next spend).
type shares struct {
	mu sync.Mutex
	m  map[string]*held
	// seen are the windows checked here in the last tick or two that
	// could not be shared (a limit too small: every caller's hour, day,
	// tokens and requests at once), by a hash of their key, with the tick
	// of their last spend: all that is kept of them is that an add to
	// them is not tallied (held.checked). A record in m, with its key and
	// slot, cost about 130 bytes a window, four a visitor, for every
	// visitor of the last second or two (issue 18, item 4). Two keys
	// whose hashes collide only send an add to Redis that could have been
	// tallied.
	seen map[uint64]uint64
	tick uint64 // bumped by every sweep
}

// seed hashes the keys of shares.seen.
var seed = maphash.MakeSeed()

// checkedLocked reports whether a spend checked key's window here lately;
// sh is its entry in m, nil if none. h.mu must be held.
func (h *shares) checkedLocked(key string, sh *held) bool {
	if sh != nil && sh.checked {
		return true
	}
	if len(h.seen) == 0 {
		return false
	}
	_, ok := h.seen[maphash.String(seed, key)]
	return ok
}

// shareable reports whether a share of sp's window may be asked for: its
// largest grant covers at least minShare spends of its amount.
func shareable(sp *state.Spend) bool {
	return min(maxShare*sp.Amount, sp.Limit/shareDiv) >= minShare*sp.Amount
}

// checked reports whether a spend is checked against its limit.
func checked(sp *state.Spend) bool { return sp.Limit > 0 && sp.Amount > 0 }

// takeShares serves spends from the shares held when every checked spend
// is covered by a share of its window's current slot, and reports whether
// it did, and every unchecked add among them can go to a share or a
// tally (addLocked). Nothing is mirrored into Local: a share was
// mirrored whole when it was granted, and a tally is when it is pushed.
func (s *Store) takeShares(ctx context.Context, spends []state.Spend) bool {
	h := &s.shares
	var buf [16]*held
	hs := buf[:0]
	if len(spends) > len(buf) {
		hs = make([]*held, 0, len(spends))
	}
	h.mu.Lock()
	if len(h.m) == 0 {
		h.mu.Unlock()
		return false
	}
	for i := range spends {
		sp := &spends[i]
		sh := h.m[sp.Key]
		if checked(sp) && (sp.Exact || sh == nil || !sh.granted || sh.slot != sp.Slot || sh.left < sp.Amount) ||
			!checked(sp) && !h.canAddLocked(sp, sh) {
			h.mu.Unlock()
			return false
		}
		hs = append(hs, sh)
	}
	var back []state.Spend
	for i := range spends {
		sp := &spends[i]
		if checked(sp) {
			hs[i].left -= sp.Amount
			hs[i].used = h.tick
			continue
		}
		h.addLocked(sp, &back)
	}
	h.mu.Unlock()
	if len(back) > 0 {
		s.enqueue(back)
	}
	return true
}

// canAddLocked reports whether addLocked takes sp, whose window's entry
// is sh (nil if none): an add to a window with a share of its slot goes
// to the share (a give-back, a correction); an add without a limit
// (tokens counted, or corrected by the usage reported), to a window no
// spend checked here, goes to its tally. h.mu must be held.
func (h *shares) canAddLocked(sp *state.Spend, sh *held) bool {
	switch {
	case sp.Amount == 0:
		return true
	case sp.Limit > 0 || sp.Exact || h.checkedLocked(sp.Key, sh):
		return sh != nil && sh.granted && sh.slot == sp.Slot && sh.left >= sp.Amount
	default:
		return sh == nil || sh.slot <= sp.Slot
	}
}

// addLocked applies sp to what is held if canAddLocked says so, and
// reports whether it did. A tally or share of an older slot is appended
// to back, to be given back. h.mu must be held.
func (h *shares) addLocked(sp *state.Spend, back *[]state.Spend) bool {
	sh := h.m[sp.Key]
	if !h.canAddLocked(sp, sh) {
		return false
	}
	switch {
	case sp.Amount == 0:
		return true
	case sp.Limit > 0 || sp.Exact || h.checkedLocked(sp.Key, sh):
		sh.left -= sp.Amount // a give-back (negative) adds to the share
		if sh.left > 2*sh.most {
			*back = append(*back, sh.add(sp.Key, sh.most-sh.left))
			sh.left = sh.most
		}
		return true
	}
	if sh == nil {
		if h.m == nil {
			h.m = make(map[string]*held)
		}
		sh = &held{slot: sp.Slot, slots: sp.Slots, ttl: sp.TTL, used: h.tick}
		h.m[sp.Key] = sh
	}
	if sh.slot < sp.Slot {
		*back = appendGiveBack(*back, sp.Key, sh)
		sh.slot, sh.left, sh.owed, sh.granted, sh.most = sp.Slot, 0, 0, false, 0
	}
	sh.slots, sh.ttl = max(sh.slots, sp.Slots), max(sh.ttl, sp.TTL)
	sh.owed += sp.Amount
	return true
}

// owedOf takes the tallies of the windows of spends, to be applied before
// them: a window tallied until now and checked from now on (a limit just
// learned) is checked with what this instance counted.
func (s *Store) owedOf(spends []state.Spend) []state.Spend {
	h := &s.shares
	var out []state.Spend
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.m) == 0 {
		return nil
	}
	for i := range spends {
		sp := &spends[i]
		if sh := h.m[sp.Key]; sh != nil {
			out = sh.appendOwed(out, sp.Key)
		}
	}
	return out
}

// takeCovered takes from the shares held the checked spends they cover,
// when the call as a whole goes to Redis, so that Redis is not asked for
// what it counted already: a share whose window went to Redis anyway (for
// another window's sake) would otherwise grow with every give-back of a
// spend Redis made, until the shares alone filled the window. It returns
// a copy of spends with the amounts taken set to 0, and their indexes
// (nil, nil when none was covered); putBack returns what was not spent.
func (s *Store) takeCovered(spends []state.Spend) ([]state.Spend, []int) {
	h := &s.shares
	var out []state.Spend
	var taken []int
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.m) == 0 {
		return nil, nil
	}
	for i := range spends {
		sp := &spends[i]
		if !checked(sp) || sp.Exact {
			continue
		}
		sh := h.m[sp.Key]
		if sh == nil || !sh.granted || sh.slot != sp.Slot || sh.left < sp.Amount {
			continue
		}
		if out == nil {
			out = slices.Clone(spends)
		}
		sh.left -= sp.Amount
		sh.used = h.tick
		out[i].Amount = 0
		taken = append(taken, i)
	}
	return out, taken
}

// putBack returns to the shares what takeCovered took from spends at the
// indexes taken from index from on: the spends Redis did not add. A share
// whose slot moved on meanwhile was given back without them: they are
// given back to their slot.
func (s *Store) putBack(spends []state.Spend, taken []int, from int) {
	h := &s.shares
	var back []state.Spend
	h.mu.Lock()
	for _, i := range taken {
		if i < from {
			continue
		}
		sp := spends[i]
		if sh := h.m[sp.Key]; sh != nil && sh.granted && sh.slot == sp.Slot {
			sh.left += sp.Amount
			continue
		}
		sp.Amount, sp.Limit = -sp.Amount, 0
		back = append(back, sp)
	}
	h.mu.Unlock()
	if len(back) > 0 {
		s.enqueue(back)
	}
}

// shareAsks returns the share to ask for with each spend, or nil when
// none is: a spend not checked asks for nothing, and when a checked spend
// cannot be shared (Exact, a limit too small, a window not spent on
// lately) the call will come back to Redis anyway, so no window of it asks.
func (s *Store) shareAsks(spends []state.Spend) []int64 {
	h := &s.shares
	n := 0
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range spends {
		sp := &spends[i]
		if !checked(sp) {
			continue
		}
		if sp.Exact || !shareable(sp) || h.m[sp.Key] == nil {
			return nil
		}
		n++
	}
	if n == 0 {
		return nil
	}
	asks := make([]int64, len(spends))
	for i := range spends {
		if sp := &spends[i]; checked(sp) {
			asks[i] = min(maxShare*sp.Amount, sp.Limit/shareDiv)
		}
	}
	return asks
}

// granted records the spends Redis added (the first ones of a call) and
// the shares it granted with them: a window spent on is known from now
// on, and a share or tally of an older slot is given back.
func (s *Store) granted(spends []state.Spend, grants []int64) {
	h := &s.shares
	var back []state.Spend
	h.mu.Lock()
	if h.m == nil {
		h.m = make(map[string]*held)
	}
	for i := range spends {
		sp := &spends[i]
		if !checked(sp) || sp.Exact {
			continue
		}
		sh := h.m[sp.Key]
		if sh == nil && !shareable(sp) {
			if h.seen == nil {
				h.seen = make(map[uint64]uint64)
			}
			h.seen[maphash.String(seed, sp.Key)] = h.tick
			continue
		}
		if sh == nil {
			sh = &held{slot: sp.Slot}
			h.m[sp.Key] = sh
		}
		if sh.slot < sp.Slot {
			back = appendGiveBack(back, sp.Key, sh)
			sh.slot, sh.left, sh.owed, sh.granted, sh.most = sp.Slot, 0, 0, false, 0
		}
		sh.slots, sh.ttl, sh.used, sh.checked = max(sh.slots, sp.Slots), max(sh.ttl, sp.TTL), h.tick, true
		if i < len(grants) && grants[i] > 0 && sh.slot == sp.Slot {
			sh.left += grants[i]
			sh.granted = true
			sh.most = max(sh.most, grants[i])
		}
	}
	h.mu.Unlock()
	if len(back) > 0 {
		s.enqueue(back)
	}
}

// appendGiveBack appends to back the add that returns what is left of
// sh's share and pushes its tally, if anything is.
func appendGiveBack(back []state.Spend, key string, sh *held) []state.Spend {
	if n := sh.owed - sh.left; n != 0 {
		back = append(back, sh.add(key, n))
	}
	return back
}

// absorb applies to what is held the adds among spends that it can take
// (see addLocked), and returns the others (spends itself when none was
// absorbed).
func (s *Store) absorb(spends []state.Spend) []state.Spend {
	h := &s.shares
	var back, rest []state.Spend
	h.mu.Lock()
	for i := range spends {
		if h.addLocked(&spends[i], &back) {
			if rest == nil {
				rest = make([]state.Spend, i, len(spends))
				copy(rest, spends[:i])
			}
			continue
		}
		if rest != nil {
			rest = append(rest, spends[i])
		}
	}
	h.mu.Unlock()
	if len(back) > 0 {
		s.enqueue(back)
	}
	if rest == nil {
		return spends
	}
	return rest
}

// heldIn returns what this instance holds of sp's window: the share left
// of one of its slots, and its tally.
func (s *Store) heldIn(sp state.Spend) (left, owed int64) {
	h := &s.shares
	h.mu.Lock()
	defer h.mu.Unlock()
	sh := h.m[sp.Key]
	if sh == nil || sh.slot > sp.Slot || sh.slot <= sp.Slot-int64(sp.Slots) {
		return 0, 0
	}
	return sh.left, sh.owed
}

// pushTallies queues every tally, for Flush.
func (s *Store) pushTallies() {
	h := &s.shares
	var back []state.Spend
	h.mu.Lock()
	for key, sh := range h.m {
		back = sh.appendOwed(back, key)
	}
	h.mu.Unlock()
	if len(back) > 0 {
		s.enqueue(back)
	}
}

// sweepShares pushes every tally, gives back the shares not spent on
// since the last sweep and forgets their windows; all of them with all
// set (Redis went away, Close).
func (s *Store) sweepShares(all bool) {
	h := &s.shares
	var back []state.Spend
	h.mu.Lock()
	for key, sh := range h.m {
		if all || sh.used != h.tick {
			back = appendGiveBack(back, key, sh)
			delete(h.m, key)
			continue
		}
		back = sh.appendOwed(back, key)
	}
	for k, tick := range h.seen {
		if all || tick != h.tick {
			delete(h.seen, k)
		}
	}
	h.tick++
	h.mu.Unlock()
	if len(back) > 0 {
		s.enqueue(back)
	}
}
