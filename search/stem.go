package search

// stem strips English inflections from a lower-case ASCII word in place:
// steps 1a, 1b, 1c and 5 of Porter's algorithm (plurals, -ed, -ing, a final
// y, a final e and a double l), so "caches", "caching" and "cached" all
// meet "cache" at "cach". Derivational suffixes (-ation, -ness) are kept:
// a keyword fallback needs plurals and tenses to meet, and the whole
// algorithm would merge words a visitor means apart. Words with any byte
// outside a-z, and words of two letters or fewer, are returned unchanged.
func stem(w []byte) []byte {
	if len(w) <= 2 {
		return w
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return w
		}
	}
	w = step1a(w)
	w = step1b(w)
	if len(w) > 1 && w[len(w)-1] == 'y' && hasVowel(w[:len(w)-1]) {
		w[len(w)-1] = 'i'
	}
	// Step 5a: a final e goes when the rest is long enough.
	if n := len(w); n > 1 && w[n-1] == 'e' {
		if m := measure(w[:n-1]); m > 1 || m == 1 && !cvc(w[:n-1]) {
			w = w[:n-1]
		}
	}
	// Step 5b: a double l shrinks on a long stem.
	if n := len(w); n > 2 && w[n-1] == 'l' && w[n-2] == 'l' && measure(w) > 1 {
		w = w[:n-1]
	}
	return w
}

func step1a(w []byte) []byte {
	switch {
	case hasSuffix(w, "sses"), hasSuffix(w, "ies"):
		return w[:len(w)-2]
	case hasSuffix(w, "ss"):
		return w
	case hasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

func step1b(w []byte) []byte {
	switch {
	case hasSuffix(w, "eed"):
		if measure(w[:len(w)-3]) > 0 {
			return w[:len(w)-1]
		}
		return w
	case hasSuffix(w, "ed") && hasVowel(w[:len(w)-2]):
		w = w[:len(w)-2]
	case hasSuffix(w, "ing") && hasVowel(w[:len(w)-3]):
		w = w[:len(w)-3]
	default:
		return w
	}
	// The suffix went: repair the stem. Each append reuses a byte just cut.
	n := len(w)
	switch {
	case hasSuffix(w, "at"), hasSuffix(w, "bl"), hasSuffix(w, "iz"):
		return append(w, 'e')
	case n >= 2 && w[n-1] == w[n-2] && isCons(w, n-1) && w[n-1] != 'l' && w[n-1] != 's' && w[n-1] != 'z':
		return w[:n-1]
	case measure(w) == 1 && cvc(w):
		return append(w, 'e')
	}
	return w
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

// isCons reports whether w[i] is a consonant in Porter's sense: y is one at
// the start of a word or after a vowel.
func isCons(w []byte, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !isCons(w, i-1)
	}
	return true
}

func hasVowel(w []byte) bool {
	for i := range w {
		if !isCons(w, i) {
			return true
		}
	}
	return false
}

// measure counts the vowel-consonant sequences of w (Porter's m).
func measure(w []byte) int {
	m := 0
	vowel := false
	for i := range w {
		if isCons(w, i) {
			if vowel {
				m++
			}
			vowel = false
		} else {
			vowel = true
		}
	}
	return m
}

// cvc reports whether w ends consonant-vowel-consonant, the last not w, x or y.
func cvc(w []byte) bool {
	n := len(w)
	if n < 3 || !isCons(w, n-3) || isCons(w, n-2) || !isCons(w, n-1) {
		return false
	}
	c := w[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}
