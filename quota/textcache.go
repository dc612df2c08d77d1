package quota

import (
	"encoding/json"
	"hash/maphash"
	"sync/atomic"
)

// The counts of long texts, remembered by their hash: a site assistant
// sends the same system prompt and tool definitions with every request, and
// a chat resends its history with every turn, so most of a request's text
// was counted before. Hashing it (maphash, AES-based where the CPU has it)
// costs a tenth of counting it: chat.lua's 1.45 KB of text costs 0.16-0.20
// µs remembered, 1.7-2.0 counted (BenchmarkEstimate).
//
// The table is direct-mapped, each slot one atomic word: a 32-bit tag from
// the hash and the text's hundredths of a token. Readers and writers take
// no lock; a slot holds the last text that hashed to it. A new text
// overwrites a slot, so a stream of unique questions only evicts, and a
// prompt evicted is counted again on its next request. The seed is random
// each run, so that no caller can aim a text at another's slot; two texts
// of one slot with the same tag (odds about 1 in 2^31 a miss) share a
// count, which is an estimate anyway, and which Settle corrects.
const (
	// cachedText is the shortest text remembered: below it, counting
	// costs about what hashing does.
	cachedText  = 256
	textSlots   = 4096 // 32 KB
	maxCachedCt = 1<<32 - 1
)

var texts struct {
	seed  maphash.Seed
	slots [textSlots]atomic.Uint64 // tag<<32 | hundredths; 0 is empty
}

func init() { texts.seed = maphash.MakeSeed() }

// stringHundredths is the estimate of s, in hundredths of a token.
func stringHundredths(s string) int {
	if len(s) < cachedText {
		return counted(s)
	}
	return remembered(maphash.String(texts.seed, s), s)
}

// rawHundredths is the estimate of the JSON text b, in hundredths of a
// token.
func rawHundredths(b json.RawMessage) int {
	if len(b) < cachedText {
		return counted(b)
	}
	return remembered(maphash.Bytes(texts.seed, b), b)
}

// counted counts s.
func counted[T ~string | ~[]byte](s T) int {
	var c textCounts
	countText(&c, s)
	return c.hundredths()
}

// remembered returns s's count from its slot when the slot holds text of
// hash h, else counts s and keeps its count there.
func remembered[T ~string | ~[]byte](h uint64, s T) int {
	slot := &texts.slots[h%textSlots]
	tag := h>>32 | 1 // never 0, the empty slot's tag
	if v := slot.Load(); v>>32 == tag {
		return int(uint32(v))
	}
	n := counted(s)
	if n <= maxCachedCt {
		slot.Store(tag<<32 | uint64(n))
	}
	return n
}
