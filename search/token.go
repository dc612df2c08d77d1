package search

import (
	"unicode"
	"unicode/utf8"
)

// maxToken caps a token's folded length in bytes. Longer runs of letters are
// base64, hashes or URLs squashed together; they are skipped, so an
// untrusted query cannot make one token expensive.
const maxToken = 64

// scanner walks the tokens of s: maximal runs of Unicode letters and digits,
// lower-cased and with Latin diacritics removed. Han and kana characters are
// tokens of one character each, since those scripts put no spaces between
// words. An apostrophe inside a word is dropped ("don't" is "dont"), a comma
// between digits is dropped ("3,000" is "3000") and a period between digits
// is kept ("1.5"). Combining marks are dropped, so decomposed and precomposed
// accents fold alike. Invalid UTF-8 separates tokens.
//
// The zero value with s set is ready; tok is reused between calls.
type scanner struct {
	s          string
	i          int
	tok        []byte // the current token, folded
	start, end int    // byte offsets of the current token's surface form in s
}

func (t *scanner) next() bool {
	for t.i < len(t.s) {
		r, size := utf8.DecodeRuneInString(t.s[t.i:])
		if !isWordRune(r) || r == utf8.RuneError {
			t.i += size
			continue
		}
		t.tok = t.tok[:0]
		t.start = t.i
		if isIdeograph(r) {
			t.i += size
			t.end = t.i
			t.tok = utf8.AppendRune(t.tok, unicode.ToLower(r))
			return true
		}
		t.scanWord()
		if len(t.tok) > 0 && len(t.tok) <= maxToken {
			return true
		}
	}
	return false
}

// scanWord consumes the word starting at t.i, folding it into t.tok.
func (t *scanner) scanWord() {
	prev := rune(0)
	for t.i < len(t.s) {
		r, size := utf8.DecodeRuneInString(t.s[t.i:])
		switch {
		case r == utf8.RuneError || isIdeograph(r):
			t.end = t.i
			return
		case isWordRune(r):
			if len(t.tok) <= maxToken {
				t.tok = appendFolded(t.tok, r)
			}
		case (r == '\'' || r == '’') && unicode.IsLetter(prev) && t.letterAt(t.i+size):
			// joined: "don't", "user's"
		case (r == ',' || r == '.') && unicode.IsDigit(prev) && t.digitAt(t.i+size):
			if r == '.' {
				t.tok = append(t.tok, '.')
			}
		default:
			t.end = t.i
			t.i += size
			return
		}
		prev = r
		t.i += size
	}
	t.end = t.i
}

func (t *scanner) letterAt(i int) bool {
	r, _ := utf8.DecodeRuneInString(t.s[i:])
	return i < len(t.s) && unicode.IsLetter(r)
}

func (t *scanner) digitAt(i int) bool {
	r, _ := utf8.DecodeRuneInString(t.s[i:])
	return i < len(t.s) && unicode.IsDigit(r)
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func isIdeograph(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r))
}

// appendFolded appends r lower-cased and without its diacritics. Combining
// marks fold to nothing. Latin-1 and Latin Extended-A letters fold to their
// base letters (ß to ss, æ to ae, œ to oe, þ to th).
func appendFolded(dst []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(dst, byte(r))
	}
	if unicode.Is(unicode.Mn, r) {
		return dst
	}
	if f := foldLatin(r); f != "" {
		return append(dst, f...)
	}
	return utf8.AppendRune(dst, unicode.ToLower(r))
}

// latin1 folds U+00C0..U+00FF, one letter per code point; ' ' is not a
// letter. The letters that fold to two are handled in foldLatin first.
const latin1 = "aaaaaaaceeeeiiii" + "dnooooo ouuuuyts" + "aaaaaaaceeeeiiii" + "dnooooo ouuuuyty"

// latinA folds U+0100..U+017F, one letter per code point.
const latinA = "aaaaaa" + "cccccccc" + "dddd" + "eeeeeeeeee" + "gggggggg" + "hhhh" +
	"iiiiiiiiii" + "ij" + "jj" + "kkk" + "llllllllll" + "nnnnnnnnn" + "oooooo" + "oe" +
	"rrrrrr" + "ssssssss" + "tttttt" + "uuuuuuuuuuuu" + "ww" + "yyy" + "zzzzzz" + "s"

func foldLatin(r rune) string {
	switch r {
	case 'Æ', 'æ':
		return "ae"
	case 'Þ', 'þ':
		return "th"
	case 'ß':
		return "ss"
	case 'Ĳ', 'ĳ':
		return "ij"
	case 'Œ', 'œ':
		return "oe"
	}
	var i int
	var table string
	switch {
	case r >= 0xC0 && r <= 0xFF:
		i, table = int(r-0xC0), latin1
	case r >= 0x100 && r <= 0x17F:
		i, table = int(r-0x100), latinA
	default:
		return ""
	}
	if table[i] == ' ' {
		return ""
	}
	return table[i : i+1]
}

// term turns a folded token into the term it is indexed under: nil for a
// stop word, else the token stemmed in place.
func term(tok []byte) []byte {
	if isStop(tok) {
		return nil
	}
	return stem(tok)
}

// isStop reports whether tok is an English stop word, or a conversational
// filler a visitor puts around a question ("please tell me how ...").
func isStop(tok []byte) bool {
	if len(tok) > 10 {
		return false
	}
	switch string(tok) {
	case "a", "about", "above", "after", "again", "all", "am", "an", "and", "any",
		"are", "as", "at", "be", "because", "been", "before", "being", "both", "but",
		"by", "can", "cant", "could", "did", "do", "does", "doing", "dont", "down",
		"each", "few", "for", "from", "further", "had", "has", "have", "having", "he",
		"her", "here", "hers", "him", "his", "how", "i", "id", "if", "im", "in",
		"into", "is", "isnt", "it", "its", "ive", "just", "me", "might", "more",
		"most", "must", "my", "no", "nor", "not", "now", "of", "off", "on", "once",
		"only", "or", "other", "our", "ours", "out", "over", "own", "same", "she",
		"should", "so", "some", "such", "than", "that", "the", "their", "them",
		"then", "there", "these", "they", "this", "those", "through", "to", "too",
		"under", "until", "up", "very", "was", "we", "were", "what", "when", "where",
		"which", "while", "who", "whom", "why", "will", "with", "would", "you",
		"your", "yours", "hi", "hello", "hey", "please", "thanks", "thank", "tell",
		"us", "want", "wont", "also", "yes", "ok", "okay", "get", "way", "s", "t":
		return true
	}
	return false
}
