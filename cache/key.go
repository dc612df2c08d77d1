package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"math"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/tollfree/tollfree/llm"
)

// Key identifies one cached answer: a SHA-256 over the normalised request.
type Key [32]byte

// String returns the key in lower-case hex.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// keyScheme is hashed first; change it whenever the key layout changes, so
// that old entries are never read under a new meaning.
const keyScheme = "tollfree/cache/key/v1"

// Field tags of the key's encoding. Every field is framed (tag, then a
// length or a fixed-size value), so no two requests hash the same bytes.
const (
	tagChain byte = iota + 1
	tagContentVersion
	tagMessage
	tagRole
	tagContent
	tagParts
	tagName
	tagToolCalls
	tagToolCallID
	tagPrefix
	tagMaxTokens
	tagTemperature
	tagTopP
	tagStop
	tagSeed
	tagResponseFormat
	tagReasoningEffort
	tagExtra
)

// KeyFor returns the cache key of req on chain. The key covers:
//
//   - the chain name and contentVersion ("" when unused);
//   - every message: role, content with whitespace normalised (runs of
//     Unicode white space folded to one space, then trimmed; case kept),
//     name, tool calls, tool call id, prefix flag and content parts (raw
//     JSON with insignificant white space removed);
//   - max_tokens, temperature, top_p, stop, seed, response_format,
//     reasoning_effort, and every Extra field (tools, tool_choice...) in
//     sorted key order.
//
// It leaves out stream, stream_options and user, which do not change the
// answer: a streamed request may be served from a non-streamed one's entry.
// KeyFor allocates twice per call (the hash state and its buffer), never per
// character, and is safe for concurrent use.
func KeyFor(chain string, req *llm.Request, contentVersion string) Key {
	w := keyWriter{h: sha256.New()}
	w.str(0, keyScheme)
	w.str(tagChain, chain)
	w.str(tagContentVersion, contentVersion)
	for i := range req.Messages {
		m := &req.Messages[i]
		w.byte(tagMessage)
		w.str(tagRole, m.Role)
		w.text(tagContent, m.Content)
		w.json(tagParts, m.Parts)
		w.str(tagName, m.Name)
		w.json(tagToolCalls, m.ToolCalls)
		w.str(tagToolCallID, m.ToolCallID)
		if m.Prefix {
			w.byte(tagPrefix)
		}
	}
	w.byte(tagMaxTokens)
	w.u64(uint64(int64(req.MaxTokens)))
	w.float(tagTemperature, req.Temperature)
	w.float(tagTopP, req.TopP)
	w.byte(tagStop)
	w.u64(uint64(len(req.Stop)))
	for _, s := range req.Stop {
		w.str(tagStop, s)
	}
	w.byte(tagSeed)
	if req.Seed == nil {
		w.byte(0)
	} else {
		w.byte(1)
		w.u64(uint64(*req.Seed))
	}
	w.json(tagResponseFormat, req.ResponseFormat)
	w.str(tagReasoningEffort, req.ReasoningEffort)
	w.extra(req.Extra)

	w.flush()
	var k Key
	copy(k[:], w.h.Sum(w.buf[:0])) // into buf: k would escape to the heap
	return k
}

// ignoredExtra reports whether an Extra field leaves the answer unchanged.
// The decoder keeps these in their own Request fields; they are skipped
// here too in case a caller put them in Extra.
func ignoredExtra(name string) bool {
	switch name {
	case "stream", "stream_options", "user":
		return true
	}
	return false
}

// keyWriter feeds the hash through a buffer, so that normalised text is
// copied in runs rather than written to the hash a byte at a time.
type keyWriter struct {
	h   hash.Hash
	n   int
	buf [512]byte
}

func (w *keyWriter) flush() {
	if w.n > 0 {
		w.h.Write(w.buf[:w.n])
		w.n = 0
	}
}

func (w *keyWriter) byte(b byte) {
	if w.n == len(w.buf) {
		w.flush()
	}
	w.buf[w.n] = b
	w.n++
}

func (w *keyWriter) raw(s string) {
	for len(s) > 0 {
		if w.n == len(w.buf) {
			w.flush()
		}
		c := copy(w.buf[w.n:], s)
		w.n += c
		s = s[c:]
	}
}

func (w *keyWriter) rawBytes(b []byte) {
	for len(b) > 0 {
		if w.n == len(w.buf) {
			w.flush()
		}
		c := copy(w.buf[w.n:], b)
		w.n += c
		b = b[c:]
	}
}

func (w *keyWriter) u64(v uint64) {
	if len(w.buf)-w.n < 8 {
		w.flush()
	}
	binary.LittleEndian.PutUint64(w.buf[w.n:], v)
	w.n += 8
}

// str writes a tag, the length, then s verbatim.
func (w *keyWriter) str(tag byte, s string) {
	w.byte(tag)
	w.u64(uint64(len(s)))
	w.raw(s)
}

func (w *keyWriter) float(tag byte, f *float64) {
	w.byte(tag)
	if f == nil {
		w.byte(0)
		return
	}
	w.byte(1)
	w.u64(math.Float64bits(*f + 0)) // +0 folds -0 into 0
}

// text writes a tag, s with white space normalised, then the normalised
// length (after the text: it is not known before).
func (w *keyWriter) text(tag byte, s string) {
	w.byte(tag)
	if normalized(s) {
		// The usual case: one copy rather than one per word.
		w.raw(s)
		w.u64(uint64(len(s)))
		return
	}
	n := 0
	pending := false
	for i := 0; i < len(s); {
		j := wordEnd(s, i)
		if j > i {
			if pending && n > 0 {
				w.byte(' ')
				n++
			}
			w.raw(s[i:j])
			n += j - i
		}
		i = spaceEnd(s, j)
		pending = i > j
	}
	w.u64(uint64(n))
}

// normalized reports whether text already reads as text would write it:
// no white space but single ASCII spaces between words.
func normalized(s string) bool {
	if len(s) == 0 {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	space := false
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			// Eight bytes at a time while they are printable ASCII and
			// single spaces.
			x := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
			if plainWord(x, space) {
				space = x>>56 == ' '
				i += 8
				continue
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == ' ':
				if space {
					return false
				}
				space = true
			case asciiSpace(c):
				return false
			default:
				space = false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			return false
		}
		space = false
		i += size
	}
	return true
}

// SWAR constants: every byte 0x01, 0x20, 0x7f, 0x80.
const (
	lo8   = 0x0101010101010101
	sp8   = 0x20 * lo8
	low7  = 0x7f * lo8
	high8 = 0x80 * lo8
)

// plainWord reports whether the eight bytes of x (first byte lowest) are
// all printable ASCII or single spaces, with no space following a space
// (prevSpace: the byte before x was one).
func plainWord(x uint64, prevSpace bool) bool {
	if x&high8 != 0 {
		return false // a non-ASCII byte
	}
	if (x-sp8)&^x&high8 != 0 {
		return false // a byte below 0x20 (x is ASCII here, so this is exact)
	}
	v := x ^ sp8 // spaces become zero bytes
	spaces := ^(((v & low7) + low7) | v) & high8
	if spaces&(spaces<<8) != 0 {
		return false // two spaces in a row
	}
	return !prevSpace || spaces&0x80 == 0
}

// wordEnd returns the index of the first white space in s at or after i,
// or len(s).
func wordEnd(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace(c) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			return i
		}
		i += size
	}
	return i
}

// spaceEnd returns the index of the first non-space in s at or after i, or
// len(s).
func spaceEnd(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !asciiSpace(c) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			return i
		}
		i += size
	}
	return i
}

// asciiSpace reports whether c is ASCII white space (as unicode.IsSpace).
func asciiSpace(c byte) bool {
	return c <= ' ' && (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r')
}

// json writes a tag, the JSON value b without white space outside strings,
// then its length. A nil or empty b writes only the tag and a zero length.
func (w *keyWriter) json(tag byte, b json.RawMessage) {
	w.byte(tag)
	n := 0
	inString, escaped := false, false
	start := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			w.rawBytes(b[start:i])
			n += i - start
			start = i + 1
		}
	}
	w.rawBytes(b[start:])
	n += len(b) - start
	w.u64(uint64(n))
}

// extra writes the Extra fields in sorted key order.
func (w *keyWriter) extra(m map[string]json.RawMessage) {
	w.byte(tagExtra)
	var small [16]string
	names := small[:0]
	for name := range m {
		if !ignoredExtra(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	w.u64(uint64(len(names)))
	for _, name := range names {
		w.str(tagExtra, name)
		w.json(tagExtra, m[name])
	}
}
