package quota

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/maphash"
	"strings"
	"sync/atomic"

	"github.com/tollfree/tollfree/state"
)

// The counters of a caller scope are named from a hash of its raw ids (a
// caller's address or key is not written to the Store), one name per kind
// of window. Making them costs a sha256 and five string concatenations,
// on every request with caller limits: the callers seen lately keep their
// names in a small cache instead (issue 18, item 2: budgets nearly free).
// The cache is direct-mapped and bounded (namesSlots entries, a few
// hundred bytes each), so a million distinct visitors cost it nothing
// more than a few: a visitor whose slot another took makes its names
// again.

// scopeNames are the counter names of one scope of one caller.
type scopeNames struct {
	// what they were made for: the scope's prefix and its ids
	prefix, id, id2 string

	base                                 string // prefix and the ids' hash
	mute, burst, conc, hour, day, tokens string // base and each window's suffix
	// each name's state.HashKey, for Spend.KeyHash
	hMute, hBurst, hConc, hHour, hDay, hTokens uint64
}

// namesSlots is the number of scopes nameCache keeps: a power of two.
const namesSlots = 512

// nameCache holds the names of the scopes used lately. Safe for
// concurrent use; lookups take no lock.
type nameCache struct {
	seed  maphash.Seed
	slots [namesSlots]atomic.Pointer[scopeNames]
}

func newNameCache() *nameCache { return &nameCache{seed: maphash.MakeSeed()} }

// of returns the names of the scope prefix (callerPrefix, chainPrefix,
// keyPrefix) of the ids id and id2 (for chainPrefix, the chain and the
// caller; id2 is "" for the others).
func (c *nameCache) of(prefix, id, id2 string) *scopeNames {
	h := maphash.String(c.seed, id)
	if id2 != "" {
		h = h*31 + maphash.String(c.seed, id2)
	}
	h += uint64(len(prefix))
	slot := &c.slots[h&(namesSlots-1)]
	if n := slot.Load(); n != nil && n.id == id && n.id2 == id2 && n.prefix == prefix {
		return n
	}
	n := makeNames(prefix, id, id2)
	slot.Store(n)
	return n
}

// The prefixes of the scopes' names: a caller's own, a caller's within a
// chain, a gateway key's. The names are the Store's keys: they outlive a
// restart and are shared with other instances, so they never change.
const (
	callerPrefix = "caller:"
	chainPrefix  = "chain:"
	keyPrefix    = "key:"
)

// makeNames makes the names of one scope: the hash of its ids, written
// once, and every window's name cut from one string.
func makeNames(prefix, id, id2 string) *scopeNames {
	h := sha256.New()
	h.Write([]byte(id))
	if prefix == chainPrefix {
		// A caller within a chain: the chain's name, a NUL, the caller.
		h.Write([]byte{0})
		h.Write([]byte(id2))
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	var hx [32]byte
	hex.Encode(hx[:], sum[:16])
	base := prefix + string(hx[:])

	suffixes := [...]string{"|mute", "|burst", "|conc", "|hour", "|day", "|tokens"}
	var b strings.Builder
	b.Grow(len(suffixes)*len(base) + 32)
	var ends [len(suffixes)]int
	for i, s := range suffixes {
		b.WriteString(base)
		b.WriteString(s)
		ends[i] = b.Len()
	}
	all := b.String()
	cut := func(i int) string {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		return all[start:ends[i]]
	}
	n := &scopeNames{
		prefix: prefix, id: id, id2: id2, base: base,
		mute: cut(0), burst: cut(1), conc: cut(2), hour: cut(3), day: cut(4), tokens: cut(5),
	}
	n.hMute, n.hBurst, n.hConc = state.HashKey(n.mute), state.HashKey(n.burst), state.HashKey(n.conc)
	n.hHour, n.hDay, n.hTokens = state.HashKey(n.hour), state.HashKey(n.day), state.HashKey(n.tokens)
	return n
}
