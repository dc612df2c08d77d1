package openai

import "math/bits"

// The byte loops over a request's text (checking a string, skipping it,
// encoding it again for the upstream) each pass over every byte of the
// prompt, on every request. plainEnd and asciiEnd find the next byte such
// a loop must look at eight bytes at a time: word arithmetic on a uint64
// ("SIMD within a register"), which is exact as a test, so that a block
// without such a byte is passed whole, and the lowest flagged byte of one
// with is the first.

const (
	ones = 0x0101010101010101 // 0x01 in every byte
	high = 0x8080808080808080 // bit 7 of every byte
)

// plainEnd returns the index of the first byte of s from i on that is '"',
// '\\' or below 0x20, the bytes a JSON string's plain run ends at; len(s)
// when there is none.
func plainEnd[T ~string | ~[]byte](s T, i int) int {
	for ; i+8 <= len(s); i += 8 {
		if m := special(load64(s, i)); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// asciiEnd is plainEnd that also stops at a byte of 0x80 or above, where
// a UTF-8 sequence starts or goes on.
func asciiEnd[T ~string | ~[]byte](s T, i int) int {
	for ; i+8 <= len(s); i += 8 {
		w := load64(s, i)
		if m := special(w) | w&high; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

// special marks (bit 7) the bytes of w that are '"', '\\' or below 0x20.
// A zero byte z is found by (z-1) &^ z: its borrow sets bit 7 where z is 0
// and, running on, may mark bytes above a true mark, never below one; a
// byte below 0x20 by w-0x20 the same way.
func special(w uint64) uint64 {
	q := w ^ '"'*ones
	b := w ^ '\\'*ones
	return ((q-ones)&^q | (b-ones)&^b | (w-0x20*ones)&^w) & high
}

// load64 reads s[i:i+8] as a little-endian word.
func load64[T ~string | ~[]byte](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
