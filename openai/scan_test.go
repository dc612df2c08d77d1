package openai

import (
	"strings"
	"testing"
)

// FuzzPlainEnd holds plainEnd and asciiEnd, eight bytes at a time, to a
// byte-at-a-time loop, from every starting index of any text.
func FuzzPlainEnd(f *testing.F) {
	for _, s := range []string{
		"", `plain text, no stop`, `a "quoted" word`, `back\slash`, "tab\there", "\x00\x01\x1f\x20",
		"héllo wörld 日本", strings.Repeat("x", 15) + `"`, strings.Repeat("\x01\x21", 9), "\x7f\x80\xff\x1f\"\\",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i := 0; i <= len(s); i++ {
			if got, want := plainEnd(s, i), byteLoop(s, i, false); got != want {
				t.Fatalf("plainEnd(%q, %d) = %d, want %d", s, i, got, want)
			}
			if got, want := plainEnd([]byte(s), i), byteLoop(s, i, false); got != want {
				t.Fatalf("plainEnd([]byte(%q), %d) = %d, want %d", s, i, got, want)
			}
			if got, want := asciiEnd(s, i), byteLoop(s, i, true); got != want {
				t.Fatalf("asciiEnd(%q, %d) = %d, want %d", s, i, got, want)
			}
		}
	})
}

// TestPlainEndEveryByte: each of the 256 byte values, alone at each of
// the eight places of a block and after a block of plain text, stops the
// scan exactly where a byte loop does.
func TestPlainEndEveryByte(t *testing.T) {
	for c := range 256 {
		for at := range 16 {
			b := []byte(strings.Repeat("a", 24))
			b[at] = byte(c)
			s := string(b)
			if got, want := plainEnd(s, 0), byteLoop(s, 0, false); got != want {
				t.Errorf("plainEnd with byte %#x at %d = %d, want %d", c, at, got, want)
			}
			if got, want := asciiEnd(s, 0), byteLoop(s, 0, true); got != want {
				t.Errorf("asciiEnd with byte %#x at %d = %d, want %d", c, at, got, want)
			}
		}
	}
}

func byteLoop(s string, i int, stopHigh bool) int {
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || stopHigh && c >= 0x80 {
			return i
		}
	}
	return i
}
