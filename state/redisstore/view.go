package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tollfree/tollfree/state"
)

// The view is what an instance knows of the shared counters: each slot's
// count as Redis last told it (at every script this instance ran on the
// slot's window, and, for windows it used in the last minute, at a refresh
// every second), plus what it spent while Redis was away. It is what keeps
// an outage from spending a cap several times over (issue 10, item 4):
//
//   - While Redis is away, a spend on a window of limit L passes only if
//     what this instance spent since (own) stays within its share of what
//     was left: own + amount <= floor((L − seen) / N), where seen is the
//     window's shared count as last seen and N the number of instances
//     alive when Redis was last reached (alive.go). Together the instances
//     then spend at most what was left.
//   - When Redis returns with its data (the epoch key it was given is still
//     there), what was spent meanwhile is added to it. When it returns
//     empty (the epoch key is gone), every slot the view holds is seeded
//     again as max(Redis's count + own, seen + own), so that it gets back
//     everything this instance knew, not only its outage's spends.
//
// The bound, per window and outage: the instances spend at most L plus U,
// where U is the largest part of the window's count that an instance had
// not seen when it lost Redis: what the others spent since its last script
// or refresh on the window, at most about a second of their spends on a
// window it used in the last minute. A spend whose reply was lost may be
// counted twice, which only errs low. An instance that has not reached
// Redis since it started knows neither the shared counts nor the other
// instances: it holds each cap on its own counts (Local), as N = 1.
//
// The view holds the live slots this instance touched, but not all of
// them: a site with a million visitors a day touches millions of caller
// slots (about 200 bytes each in the view), so past viewCap slots the
// ones used longest ago, with nothing pending, are dropped (issue 18, item
// 4). The windows in use, a route's and its provider's at every request,
// are the newest and stay.
//
// Local mirrors this instance's spends on the slots the view holds (mine),
// and a slot dropped from the view is taken out of Local as well: Local
// keeping every visitor's counts cost what local mode costs, 100 MB a
// million visitors, on top of Redis holding them. For a slot the view
// holds, the share's check in an outage is the stricter (the share's seen
// includes this instance's own spends); Local's mirror matters only to an
// instance restarted during an outage, which starts from its own counts
// of the windows it knew. What a dropped slot costs is only in an outage:
// its window starts from nothing on this instance, so the instance may
// spend floor(L / N) of it on top of whatever was spent before, the bound
// above growing by the window's whole count at the cut (at most L). Once
// Redis is back, those spends are in its count, so the window is refused
// until enough of its slots pass.

// viewCap is how many slots the view keeps before it drops the ones used
// longest ago; it drops down to three quarters of it.
const viewCap = 16384

// refreshRecent is how recently this instance must have used a slot for
// the every-second refresh to read it: the refresh stays cheap when the
// view holds many callers' windows.
const refreshRecent = time.Minute

// viewSlot is what the view knows of one counter slot.
type viewSlot struct {
	// shared is the slot's shared count as last seen, plus pending.
	shared int64
	// pending is what this instance added while Redis was away, not yet in
	// Redis.
	pending int64
	// ttl is the slot's TTL; expires is when its key expires at the latest
	// (last write or read here, plus ttl), on the store's clock.
	ttl     time.Duration
	expires time.Time
	// used is when this instance last spent on or read the slot.
	used time.Time
	// seq changes at every update, so that a refresh read before an update
	// does not overwrite it.
	seq uint64
	// older is the sum of the slots before this one in a window of slots
	// slots, as a script last saw it while this slot was current (the
	// script returns each window's older slots as one sum); 0 if unknown.
	older int64
	slots int
	// mine is what this instance added to Local for the slot: the mirror
	// of its own spends, taken out of Local when the view drops the slot.
	mine int64
}

// slotOf returns the slot of sp's window at index j, the oldest first.
func slotOf(sp state.Spend, j int) int64 { return sp.Slot - int64(sp.Slots) + 1 + int64(j) }

// entryLocked returns the view's slot k, making it if create is set (nil
// otherwise when absent). s.mu must be held.
func (s *Store) entryLocked(k slotKey, create bool) *viewSlot {
	e := s.view[k]
	if e == nil && create {
		if len(s.view) >= viewCap {
			s.dropOldestLocked()
		}
		e = &viewSlot{}
		s.view[k] = e
	}
	return e
}

// dropOldestLocked drops the slots used longest ago, with nothing pending,
// until the view holds three quarters of viewCap, and takes what it
// mirrored of them out of Local. s.mu must be held.
func (s *Store) dropOldestLocked() {
	type aged struct {
		k    slotKey
		used time.Time
	}
	all := make([]aged, 0, len(s.view))
	for k, e := range s.view {
		if e.pending == 0 {
			all = append(all, aged{k, e.used})
		}
	}
	slices.SortFunc(all, func(a, b aged) int { return a.used.Compare(b.used) })
	var out []state.Spend
	for _, a := range all {
		if len(s.view) <= viewCap*3/4 {
			break
		}
		if e := s.view[a.k]; e.mine != 0 {
			// A TTL of a nanosecond: the give-back never keeps Local's
			// slot longer than its spends did.
			out = append(out, state.Spend{Key: a.k.key, Slot: a.k.slot, Slots: max(e.slots, 1), Amount: -e.mine, TTL: time.Nanosecond})
		}
		delete(s.view, a.k)
	}
	if len(out) > 0 {
		_ = s.local.Add(context.Background(), out)
	}
}

// mirror adds to Local the adds Redis took whose slot the view holds, so
// that an instance restarted during an outage still holds its own counts
// of the windows it knows; the others are left out, as the view left them.
//
// Local counts what this instance added to Redis's counts, as Redis
// does: a share when it is granted (not the spends it covers later, nor
// the adds it absorbs), what is left of it when it is given back, and a
// tally when it is pushed. Mirroring the spends a share covered instead
// left out the requests in flight it took back, and mirrored its return
// though its grant never was: Local counted 2,967 requests in flight
// after 3,000 answers, and an outage refused every caller
// (TestLocalMirrorsGiveBacksToAShare).
func (s *Store) mirror(ctx context.Context, spends []state.Spend) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mirrorLocked(ctx, spends)
}

// mirrorGranted is mirror of spends that were sent with grants, one per
// spend or nil: each is mirrored with the share granted besides it.
func (s *Store) mirrorGranted(ctx context.Context, spends []state.Spend, grants []int64) {
	if slices.ContainsFunc(grants, func(g int64) bool { return g != 0 }) {
		withGrants := slices.Clone(spends)
		for i := range withGrants {
			if i < len(grants) {
				withGrants[i].Amount += grants[i]
			}
		}
		spends = withGrants
	}
	s.mirror(ctx, spends)
}

// mirrorLocked is mirror. s.mu must be held.
func (s *Store) mirrorLocked(ctx context.Context, spends []state.Spend) {
	var kept []state.Spend // nil while every spend so far is kept
	for i := range spends {
		sp := &spends[i]
		var e *viewSlot
		if sp.Amount != 0 {
			e = s.view[slotKey{key: sp.Key, slot: sp.Slot}]
		}
		if e != nil {
			e.mine += sp.Amount
		}
		switch {
		case e != nil && kept != nil:
			kept = append(kept, *sp)
		case e == nil && kept == nil:
			kept = make([]state.Spend, i, len(spends))
			copy(kept, spends[:i])
		}
	}
	if kept == nil {
		kept = spends
	}
	if len(kept) > 0 {
		_ = s.local.Add(ctx, kept)
	}
}

// touchLocked marks e changed and used at now, by a write or read of a
// slot that lives ttl. s.mu must be held.
func (s *Store) touchLocked(e *viewSlot, ttl time.Duration, now time.Time) {
	s.viewSeq++
	e.seq = s.viewSeq
	e.used = now
	e.ttl = max(e.ttl, ttl)
	if exp := now.Add(ttl); exp.After(e.expires) {
		e.expires = exp
	}
}

// learnLocked records what spendScript returned: vals holds, for each
// spend in turn, its current slot's count and the sum of its window's
// older slots. s.mu must be held.
func (s *Store) learnLocked(spends []state.Spend, vals []int64, now time.Time) {
	for i, sp := range spends {
		if 2*i+1 >= len(vals) {
			return
		}
		n, older := vals[2*i], vals[2*i+1]
		e := s.entryLocked(slotKey{key: sp.Key, slot: sp.Slot}, n != 0 || older > 0)
		if e == nil {
			continue
		}
		e.shared = n + e.pending
		if older >= 0 { // -1: an add, which does not sum
			e.older, e.slots = older, sp.Slots
		}
		s.touchLocked(e, sp.TTL, now)
	}
}

// learnSlotsLocked records the slot counts read by Sums: vals holds, for
// each spend in turn, its window's slots, the oldest first. s.mu must be
// held.
func (s *Store) learnSlotsLocked(spends []state.Spend, vals []int64, now time.Time) {
	v := 0
	for _, sp := range spends {
		for j := range sp.Slots {
			if v >= len(vals) {
				return
			}
			n := vals[v]
			v++
			k := slotKey{key: sp.Key, slot: slotOf(sp, j)}
			e := s.entryLocked(k, n != 0)
			if e == nil {
				continue
			}
			e.shared = n + e.pending
			s.touchLocked(e, sp.TTL, now)
		}
	}
}

// pendLocked records spends made while Redis is away. s.mu must be held.
func (s *Store) pendLocked(spends []state.Spend, now time.Time) {
	for _, sp := range spends {
		e := s.entryLocked(slotKey{key: sp.Key, slot: sp.Slot}, true)
		e.pending += sp.Amount
		e.shared += sp.Amount
		e.mine += sp.Amount // Local took them all
		s.touchLocked(e, sp.TTL, now)
	}
}

// windowLocked returns what the view knows of sp's window: seen, the
// shared count as last seen, and own, what this instance added since it
// lost Redis. s.mu must be held.
func (s *Store) windowLocked(sp state.Spend, now time.Time) (seen, own int64) {
	// Two readings of the shared count, the higher kept: the slots the
	// view holds, summed; and the newest slot that knows its older slots'
	// sum, with it and the slots since. The second may count slots that
	// have left the window since, which only errs high.
	var newer, withOlder int64
	found := false
	for j := sp.Slots - 1; j >= 0; j-- {
		e := s.view[slotKey{key: sp.Key, slot: slotOf(sp, j)}]
		if e == nil || !now.Before(e.expires) {
			continue
		}
		n := e.shared - e.pending
		seen += n
		own += e.pending
		if !found {
			newer += n
			if e.slots == sp.Slots && (e.older != 0 || e.slots == 1) {
				withOlder, found = newer+e.older, true
			}
		}
	}
	return max(seen, withOlder), own
}

// share is what one of n instances may spend of a window of limit whose
// shared count was seen.
func share(limit, seen int64, n int) int64 {
	return max(limit-seen, 0) / int64(max(n, 1))
}

// localSpend serves Spend while Redis is away: each window's share first
// (see above), then Local's check of this instance's own counts, which is
// all an instance that never reached Redis has.
func (s *Store) localSpend(ctx context.Context, spends []state.Spend) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for i, sp := range spends {
		if sp.Limit <= 0 || sp.Amount <= 0 {
			continue
		}
		seen, own := s.windowLocked(sp, now)
		if own+sp.Amount > share(sp.Limit, seen, s.instances) {
			return i, nil
		}
	}
	failed, err := s.local.Spend(ctx, spends)
	if err != nil {
		return -1, fmt.Errorf("redisstore: spend: %w: %w", state.ErrUnavailable, err)
	}
	if failed < 0 {
		s.pendLocked(spends, now)
	}
	return failed, nil
}

// localSums serves Sums while Redis is away: the higher of the view's
// shared count and Local's.
func (s *Store) localSums(ctx context.Context, spends []state.Spend) ([]int64, error) {
	out, err := s.local.Sums(ctx, spends)
	if err != nil {
		return nil, fmt.Errorf("redisstore: sums: %w: %w", state.ErrUnavailable, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for i, sp := range spends {
		if i >= len(out) {
			break
		}
		seen, own := s.windowLocked(sp, now)
		out[i] = max(out[i], seen+own)
	}
	return out, nil
}

// parseCounts parses a script's comma-separated counts.
func parseCounts(v string) ([]int64, error) {
	if v == "" {
		return nil, nil
	}
	out := make([]int64, 0, strings.Count(v, ",")+1)
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("counter value %q is not a number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// pushItem is one slot written back to Redis when it returns.
type pushItem struct {
	k       slotKey
	pending int64
	shared  int64
	pttl    time.Duration
}

// pushItems lists the view's live slots to write back: every one when seed
// is set, else those with spends pending. Expired slots leave the view.
func (s *Store) pushItems(seed bool) []pushItem {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	var out []pushItem
	for k, e := range s.view {
		left := e.expires.Sub(now)
		if left <= 0 {
			delete(s.view, k)
			continue
		}
		if e.pending == 0 && (!seed || e.shared == 0) {
			continue
		}
		out = append(out, pushItem{k: k, pending: e.pending, shared: e.shared, pttl: left})
	}
	return out
}

// pushCounts writes the view back to Redis, maxPush slots per script (see
// pushScript): what was spent locally is added, and with seed set (Redis
// came back empty) every live slot is seeded again. A slot pushed has
// nothing pending any more but what was spent locally meanwhile. On error
// the slots not yet pushed keep their pending spends, for the next
// attempt. It returns how many slots were written.
func (s *Store) pushCounts(ctx context.Context, seed bool) (int, error) {
	items := s.pushItems(seed)
	mode := "add"
	if seed {
		mode = "seed"
	}
	pushed := 0
	for len(items) > 0 {
		batch := items[:min(len(items), maxPush)]
		items = items[len(batch):]
		keys := make([]string, 2*len(batch))
		args := make([]any, 0, 1+3*len(batch))
		args = append(args, mode)
		for i, it := range batch {
			keys[i] = s.counterKey(it.k.key, it.k.slot)
			keys[len(batch)+i] = s.sumKey(it.k.key)
			args = append(args, it.pending, it.shared, max(it.pttl.Milliseconds(), 1))
		}
		octx, cancel := s.opContext(ctx)
		reply, err := pushScript.Run(octx, s.client, keys, args...).Text()
		cancel()
		if err != nil {
			return pushed, fmt.Errorf("push local counts: %w", err)
		}
		vals, err := parseCounts(reply)
		if err != nil || len(vals) != len(batch) {
			return pushed, fmt.Errorf("push local counts: a reply of %d values for %d slots (%v)", len(vals), len(batch), err)
		}
		s.mu.Lock()
		now := s.clock.Now()
		for i, it := range batch {
			e := s.entryLocked(it.k, true)
			e.pending -= it.pending
			e.shared = vals[i] + e.pending
			s.touchLocked(e, 0, now)
		}
		s.mu.Unlock()
		pushed += len(batch)
	}
	return pushed, nil
}

// redisLost reports whether Redis lost its data since this instance last
// reached it: the epoch key this instance saw is gone or replaced. The
// first contact counts as lost, which only makes pushCounts seed what the
// view holds (nothing, or spends made before Redis was ever reached).
func (s *Store) redisLost(ctx context.Context) (lost bool, epoch string, err error) {
	octx, cancel := s.opContext(ctx)
	defer cancel()
	epoch, err = epochScript.Run(octx, s.client, []string{s.tag + ":epoch"}, newInstanceID()).Text()
	if err != nil {
		return false, "", fmt.Errorf("read epoch: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return epoch != s.epoch, epoch, nil
}

// refreshView reads from Redis every live slot of the view used in the last
// refreshRecent, so that the share an outage leaves this instance starts
// from counts at most a refresh old. A slot updated while the read was
// under way keeps the update. It reports whether some slot still has
// spends pending (made locally while the store was switching back to
// Redis), for the caller to push.
func (s *Store) refreshView(ctx context.Context) (pending bool) {
	type read struct {
		k   slotKey
		seq uint64
	}
	s.mu.Lock()
	now := s.clock.Now()
	var reads []read
	for k, e := range s.view {
		switch {
		case !now.Before(e.expires):
			delete(s.view, k)
		case e.pending != 0:
			pending = true
		case now.Sub(e.used) < refreshRecent:
			reads = append(reads, read{k, e.seq})
		}
	}
	s.mu.Unlock()
	for len(reads) > 0 {
		batch := reads[:min(len(reads), 1000)]
		reads = reads[len(batch):]
		keys := make([]string, len(batch))
		for i, r := range batch {
			keys[i] = s.counterKey(r.k.key, r.k.slot)
		}
		octx, cancel := s.opContext(ctx)
		vals, err := s.client.MGet(octx, keys...).Result()
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				s.failed(err)
			}
			return false
		}
		s.mu.Lock()
		for i, r := range batch {
			e := s.view[r.k]
			if e == nil || e.seq != r.seq || i >= len(vals) {
				continue
			}
			var n int64
			if str, ok := vals[i].(string); ok {
				n, _ = strconv.ParseInt(str, 10, 64)
			}
			e.shared = n + e.pending
		}
		s.mu.Unlock()
	}
	return pending
}
