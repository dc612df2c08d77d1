package memstore

import (
	"math"
	"math/bits"

	"github.com/tollfree/tollfree/state"
)

// A site with a million visitors a day holds two or more counters for each
// of them all day long (a rolling day's requests and tokens), and almost all
// of them have a single slot: a visitor comes, asks a few questions within
// minutes, and leaves. A map from key string to a counter with a slice of
// slots costs about 250 bytes for each (issue 18: 130,000 callers made the
// process 125 MB). The table below holds such counters in 20 bytes each: the
// key as a 64-bit hash, and the one slot inline. A counter that needs a
// second slot, or a count, slot or expiry too large for 32 bits, moves to
// the Store's map of full counters (promote).
//
// A 64-bit hash can collide: two keys then share one count. With five
// million counters live at once the chance that any two collide is below
// one in a million, and a collision only makes a limit stricter for the two
// counters involved, never looser.

// hashOf is sp.Key's hash: sp.KeyHash when its maker set it (the quota
// package keeps the names it counts on with their hashes), else hashed
// here.
func hashOf(sp *state.Spend) uint64 {
	if sp.KeyHash != 0 {
		return sp.KeyHash
	}
	return state.HashKey(sp.Key)
}

// entry is one single-slot counter: 20 bytes, 4-byte aligned.
type entry struct {
	lo, hi uint32 // the key's hash; both 0 for an empty entry
	n      int32
	slot   int32
	exp    uint32 // unix seconds, rounded up, after which the slot no longer counts; 0 after take
}

func (e *entry) key() uint64 { return uint64(e.hi)<<32 | uint64(e.lo) }

// live reports whether the entry's slot still counts at now (unix
// nanoseconds).
func (e *entry) live(now int64) bool { return int64(e.exp)*1e9 > now }

// expiresAt is the entry's expiry in unix nanoseconds.
func (e *entry) expiresAt() int64 { return int64(e.exp) * 1e9 }

// compactExpiry returns expires (unix nanoseconds) rounded up to a second,
// and whether it fits an entry.
func compactExpiry(expires int64) (uint32, bool) {
	if expires <= 0 {
		return 0, false
	}
	sec := (expires-1)/1e9 + 1
	if sec > math.MaxUint32 {
		return 0, false
	}
	return uint32(sec), true
}

func fits32(v int64) bool { return v == int64(int32(v)) }

// nShards splits the table so that growing, shrinking and sweeping touch a
// 256th of it at a time: no request waits behind a rehash of everything, and
// a table that just grew holds little slack in all.
const nShards = 256

// Load factors: a shard that reaches maxLoad grows to rebuildLoad; a sweep
// keeps its size unless its load fell below minLoad, so the load of a
// busy table stays between rebuildLoad and maxLoad (a heap profile of a
// million callers: resizing to rebuildLoad at every sweep held the average
// at 0.77, keeping the size holds it near 0.82).
const (
	maxLoadNum, maxLoadDen = 9, 10
	rebuildLoad            = 0.75
	minLoad                = 0.45
	minShard               = 8
)

// table holds single-slot counters by key hash, in open-addressed shards
// with linear probing. An entry that expired, or was taken, stays as a
// marker that probes walk past, and is reused by an insert; rebuilds drop
// it. Not safe for concurrent use: the Store's mutex guards it.
type table struct {
	shards [nShards]shard
}

type shard struct {
	e    []entry
	used int    // entries not empty, markers included
	gen  uint32 // changes when entries move (resize), so a located index is stale
}

func (t *table) shard(h uint64) *shard { return &t.shards[h>>56] }

// home is h's first probe in a shard of n entries. The top byte chose the
// shard, so the rest places it.
func home(h uint64, n int) int {
	hi, _ := bits.Mul64(h<<8, uint64(n))
	return int(hi)
}

// find returns the index of h's entry and true, or, when there is none,
// the index an insert should use (the first marker on the way, else the
// empty entry that ended the probe) and false. The shard must have entries.
func (sh *shard) find(h uint64, now int64) (int, bool) {
	n := len(sh.e)
	free := -1
	for i := home(h, n); ; i++ {
		if i == n {
			i = 0
		}
		e := &sh.e[i]
		k := e.key()
		switch {
		case k == h:
			return i, true
		case k == 0:
			if free < 0 {
				free = i
			}
			return free, false
		case free < 0 && !e.live(now):
			free = i
		}
	}
}

// loc is where an entry was found: its index in its shard and the shard's
// generation then. i is -1 when there was no entry.
type loc struct {
	i   int
	gen uint32
}

// locate finds h's entry, for a later at: a Spend looks each counter up
// once for its check and its add.
func (t *table) locate(h uint64, now int64) loc {
	sh := t.shard(h)
	if len(sh.e) == 0 {
		return loc{i: -1}
	}
	i, ok := sh.find(h, now)
	if !ok {
		return loc{i: -1}
	}
	return loc{i: i, gen: sh.gen}
}

// at returns h's entry where l found it, or nil if there was none or it
// may have moved since.
func (t *table) at(h uint64, l loc) *entry {
	if l.i < 0 {
		return nil
	}
	sh := t.shard(h)
	if sh.gen != l.gen || sh.e[l.i].key() != h {
		return nil
	}
	return &sh.e[l.i]
}

// addAt is add for an entry located by at: it adds amount in place when
// the entry is live, holds slot and the sum fits, and reports whether it
// did.
func addAt(e *entry, slot, amount, expires, now int64) bool {
	if e == nil || !e.live(now) || int64(e.slot) != slot {
		return false
	}
	n := int64(e.n) + amount
	if !fits32(n) {
		return false
	}
	if expires > e.expiresAt() { // a division only when the expiry moves
		exp, ok := compactExpiry(expires)
		if !ok {
			return false
		}
		e.exp = exp
	}
	e.n = int32(n)
	return true
}

// get returns h's entry if its slot is live at now.
func (t *table) get(h uint64, now int64) (entry, bool) {
	sh := t.shard(h)
	if len(sh.e) == 0 {
		return entry{}, false
	}
	i, ok := sh.find(h, now)
	if !ok || !sh.e[i].live(now) {
		return entry{}, false
	}
	return sh.e[i], true
}

// add adds amount to h's slot, keeping it until expires (unix nanoseconds),
// and reports whether it could: false when h holds a live other slot, or a
// value does not fit 32 bits; then nothing changed and the counter belongs
// in the map of full counters.
func (t *table) add(h uint64, slot, amount, expires, now int64) bool {
	exp, ok := compactExpiry(expires)
	if !ok || !fits32(slot) {
		return false
	}
	sh := t.shard(h)
	if len(sh.e) == 0 {
		sh.rebuild(now, minShard)
	}
	i, found := sh.find(h, now)
	if found && sh.e[i].live(now) {
		e := &sh.e[i]
		n := int64(e.n) + amount
		if int64(e.slot) != slot || !fits32(n) {
			return false
		}
		e.n, e.exp = int32(n), max(e.exp, exp)
		return true
	}
	if !fits32(amount) {
		return false
	}
	if !found && sh.e[i].key() == 0 {
		// A new entry in an empty place: grow first if that passes the
		// load, so that a probe always ends at an empty entry.
		if (sh.used+1)*maxLoadDen > len(sh.e)*maxLoadNum {
			sh.rebuild(now, sh.liveCount(now)+1)
			i, _ = sh.find(h, now)
		}
		if sh.e[i].key() == 0 {
			sh.used++
		}
	}
	sh.e[i] = entry{lo: uint32(h), hi: uint32(h >> 32), n: int32(amount), slot: int32(slot), exp: exp}
	return true
}

// put sets h's entry as loaded from a file, replacing any. The values must
// fit (compactExpiry, fits32).
func (t *table) put(h uint64, e entry, now int64) {
	t.take(h, now)
	if !e.live(now) {
		return
	}
	if !t.add(h, int64(e.slot), int64(e.n), e.expiresAt(), now) {
		panic("memstore: put of an entry that does not fit")
	}
}

// take removes h's entry and returns it if it was live.
func (t *table) take(h uint64, now int64) (entry, bool) {
	sh := t.shard(h)
	if len(sh.e) == 0 {
		return entry{}, false
	}
	i, ok := sh.find(h, now)
	if !ok {
		return entry{}, false
	}
	e := sh.e[i]
	sh.e[i].exp = 0 // a marker: probes walk past it, an insert reuses it
	return e, e.live(now)
}

func (sh *shard) liveCount(now int64) int {
	n := 0
	for i := range sh.e {
		if sh.e[i].key() != 0 && sh.e[i].live(now) {
			n++
		}
	}
	return n
}

// rebuild copies the shard's live entries into a new array sized for want
// entries at rebuildLoad, dropping expired entries and markers: it grows
// a full shard and shrinks one that emptied.
func (sh *shard) rebuild(now int64, want int) {
	sh.resize(now, max(minShard, int(float64(want)/rebuildLoad)+1))
}

// resize copies the shard's live entries into a new array of size entries.
func (sh *shard) resize(now int64, size int) {
	old := sh.e
	sh.e = make([]entry, size)
	sh.used = 0
	sh.gen++
	for i := range old {
		e := &old[i]
		if e.key() == 0 || !e.live(now) {
			continue
		}
		j := home(e.key(), size)
		for sh.e[j].key() != 0 {
			if j++; j == size {
				j = 0
			}
		}
		sh.e[j] = *e
		sh.used++
	}
}

// sweep rebuilds shard i if it holds expired entries or markers, so that
// expired counters leave memory; an emptied shard is freed.
func (t *table) sweep(i int, now int64) {
	sh := &t.shards[i]
	if len(sh.e) == 0 {
		return
	}
	live := sh.liveCount(now)
	switch {
	case live == 0:
		sh.e, sh.used = nil, 0
	case float64(live) < minLoad*float64(len(sh.e)):
		sh.rebuild(now, live)
	case live < sh.used:
		sh.resize(now, len(sh.e))
	}
}

// each calls fn with every live entry of shard i, in an order that jumps
// across the shard. In the order of the array, entries come sorted by
// their place, and a load that inserts them so into a shard still
// growing piles them all into one cluster at its start: each insert then
// walks the whole cluster (the file of a million visitors took 44 s to
// load in array order, 7 s in this one).
func (t *table) each(i int, now int64, fn func(h uint64, e entry)) {
	es := t.shards[i].e
	n := len(es)
	if n == 0 {
		return
	}
	step := n*5/8 | 1
	for gcd(step, n) != 1 {
		step += 2
	}
	for j, at := 0, 0; j < n; j++ {
		if e := es[at]; e.key() != 0 && e.live(now) {
			fn(e.key(), e)
		}
		if at += step; at >= n {
			at -= n
		}
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// len returns how many live entries the table holds.
func (t *table) len(now int64) int {
	n := 0
	for i := range t.shards {
		n += t.shards[i].liveCount(now)
	}
	return n
}
