package quota

import (
	"context"
	"unicode/utf8"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
)

// The estimate's weights, in hundredths of a token, fitted to the cl100k_base
// counts of testdata/estimate (see estimate_test.go for the measured error).
const (
	wWord     = 110 // an ASCII word (letters), up to longWord letters
	wLongWord = 25  // each letter past longWord: long words split
	wDigits   = 100 // a group of up to three digits
	wPunct    = 60  // an ASCII punctuation or symbol byte; pairs like `",` merge
	wNewline  = 60  // a run of line breaks
	wIndent   = 60  // a run of two or more spaces or tabs (code indentation)
	wCJK      = 100 // a Han or kana rune, CJK punctuation, full-width forms
	wHangul   = 120 // a Hangul rune: cl100k splits more Korean syllables
	wOther    = 49  // any other non-ASCII rune (accents, Cyrillic, Greek)

	longWord = 12
	// perMessage is the chat template's framing of one message (role,
	// separators); perRequest primes the answer.
	perMessage = 4
	perRequest = 3
	// defaultOutput is the answer's expected size when neither the request
	// nor the route caps it.
	defaultOutput = 1024
)

// MaxTokens bounds every token count this package works out or reserves:
// far above any window's limit, so that a request counted at MaxTokens is
// too large for every TPM and TPD, and far below where adding such counts
// could overflow. Token arithmetic saturates here (issue 10: max_tokens
// 2^63-1 wrapped the reservation negative, and the TPM check passed it).
const MaxTokens = 1 << 40

// AddTokens returns a+b saturated at MaxTokens, a negative count counting
// as 0.
func AddTokens(a, b int) int {
	a, b = clampTokens(a), clampTokens(b)
	if a > MaxTokens-b {
		return MaxTokens
	}
	return a + b
}

// clampTokens returns n within 0..MaxTokens.
func clampTokens(n int) int { return min(max(n, 0), MaxTokens) }

// textCounts are the features of a text the estimate weighs.
type textCounts struct {
	words, longChars, digitGroups, punct, newlines, indents, cjk, hangul, other int
}

func (c *textCounts) hundredths() int {
	return c.words*wWord + c.longChars*wLongWord + c.digitGroups*wDigits + c.punct*wPunct +
		c.newlines*wNewline + c.indents*wIndent + c.cjk*wCJK + c.hangul*wHangul + c.other*wOther
}

// Byte classes of countText, for the ASCII bytes.
const (
	clCtrl    = iota // a control byte other than a line break or a tab
	clLetter         // a-z, A-Z
	clDigit          // 0-9
	clNewline        // \n, \r
	clSpace          // ' ', \t
	clPunct          // any other printable ASCII byte
	clHigh           // 0x80 and above: the start or inside of a UTF-8 rune
)

// byteClass is the class of every byte.
var byteClass = func() (t [256]uint8) {
	for b := range 256 {
		switch {
		case 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z':
			t[b] = clLetter
		case '0' <= b && b <= '9':
			t[b] = clDigit
		case b == '\n' || b == '\r':
			t[b] = clNewline
		case b == ' ' || b == '\t':
			t[b] = clSpace
		case b > ' ' && b < 0x7f:
			t[b] = clPunct
		case b >= utf8.RuneSelf:
			t[b] = clHigh
		}
	}
	return t
}()

// countText adds the features of s to c in one pass, without allocating
// (generic so that raw JSON fields need no string copy). A word is a run
// of ASCII letters and a number a run of digits, each read in a loop of
// its own: every request with a token limit pays this pass over its text
// (issue 18, item 2).
func countText[T ~string | ~[]byte](c *textCounts, s T) {
	spaceRun := 0
	inNewline := false
	for i := 0; i < len(s); {
		switch byteClass[s[i]] {
		case clLetter:
			j := i + 1
			for j < len(s) && byteClass[s[j]] == clLetter {
				j++
			}
			c.words++
			if n := j - i; n > longWord {
				c.longChars += n - longWord
			}
			i = j
			spaceRun, inNewline = 0, false
		case clDigit:
			j := i + 1
			for j < len(s) && byteClass[s[j]] == clDigit {
				j++
			}
			c.digitGroups += (j - i + 2) / 3
			i = j
			spaceRun, inNewline = 0, false
		case clNewline:
			if !inNewline {
				c.newlines++
				inNewline = true
			}
			spaceRun = 0
			i++
		case clSpace:
			spaceRun++
			if spaceRun == 2 {
				c.indents++
			}
			i++
		case clPunct:
			c.punct++
			spaceRun, inNewline = 0, false
			i++
		case clCtrl:
			spaceRun, inNewline = 0, false
			i++
		default: // clHigh
			r, size := decodeRune(s, i)
			i += size
			spaceRun, inNewline = 0, false
			switch {
			case isHangul(r):
				c.hangul++
			case isCJK(r):
				c.cjk++
			default:
				c.other++
			}
		}
	}
}

// decodeRune decodes the UTF-8 sequence at s[i] (s[i] >= 0x80) leniently:
// a broken sequence counts as one rune per byte, never an error.
func decodeRune[T ~string | ~[]byte](s T, i int) (rune, int) {
	b := s[i]
	n, r := 0, rune(0)
	switch {
	case b&0xe0 == 0xc0:
		n, r = 2, rune(b&0x1f)
	case b&0xf0 == 0xe0:
		n, r = 3, rune(b&0x0f)
	case b&0xf8 == 0xf0:
		n, r = 4, rune(b&0x07)
	default:
		return utf8.RuneError, 1
	}
	if i+n > len(s) {
		return utf8.RuneError, 1
	}
	for j := 1; j < n; j++ {
		cb := s[i+j]
		if cb&0xc0 != 0x80 {
			return utf8.RuneError, 1
		}
		r = r<<6 | rune(cb&0x3f)
	}
	return r, n
}

// isHangul reports a Korean syllable or jamo.
func isHangul(r rune) bool {
	return r >= 0xac00 && r <= 0xd7af || r >= 0x1100 && r <= 0x11ff || r >= 0x3130 && r <= 0x318f
}

// isCJK reports a rune that cl100k spends about one token on: Han
// ideographs, kana, and their punctuation and full-width forms.
func isCJK(r rune) bool {
	switch {
	case r >= 0x3000 && r <= 0x30ff, // CJK punctuation, hiragana, katakana
		r >= 0x3400 && r <= 0x4dbf,   // Han extension A
		r >= 0x4e00 && r <= 0x9fff,   // Han
		r >= 0xf900 && r <= 0xfaff,   // Han compatibility
		r >= 0xff00 && r <= 0xffef,   // full-width forms
		r >= 0x20000 && r <= 0x2ffff: // Han extensions B+
		return true
	}
	return false
}

// Estimate returns a calibrated estimate of the prompt tokens of req: its
// messages' text, names and tool calls, the chat framing of each message,
// and the tools and response format sent with it. It is not a tokenizer;
// the package doc gives its measured error. It does not allocate. The
// count of a long text is remembered (textcache.go): a prompt, tools or
// history sent again is not counted again. The result is at most
// MaxTokens.
func Estimate(req *llm.Request) int {
	if req == nil {
		return 0
	}
	h := 0 // hundredths of a token
	for i := range req.Messages {
		m := &req.Messages[i]
		h += stringHundredths(m.Content) + stringHundredths(m.Name) + rawHundredths(m.ToolCalls)
	}
	h += rawHundredths(req.ResponseFormat) + rawHundredths(req.Extra["tools"])
	return AddTokens((h+99)/100, perMessage*len(req.Messages)+perRequest)
}

// ExpectedOutput returns the answer tokens a reservation counts: the
// smaller of the request's max_tokens and the route's MaxOutput where set,
// else 1024. A cap is what a provider like Cerebras charges up front, and
// the most the answer can cost; 1024 without one is a typical chat answer,
// long enough that a TPM window is rarely overrun, short enough not to
// starve a 6,000 TPM route. Settle replaces it with the real usage. The
// result is at most MaxTokens, however large max_tokens is.
func ExpectedOutput(maxTokens int, r *config.Route) int {
	out := clampTokens(maxTokens)
	if r != nil && r.MaxOutput > 0 && (out == 0 || r.MaxOutput < out) {
		out = r.MaxOutput
	}
	if out == 0 {
		out = defaultOutput
	}
	return clampTokens(out)
}

// RequestTokens returns the tokens to Reserve for req on route r:
// Estimate(req) + ExpectedOutput(req.MaxTokens, r), saturated at MaxTokens.
func RequestTokens(req *llm.Request, r *config.Route) int {
	n := ExpectedOutput(0, r)
	if req != nil {
		n = AddTokens(Estimate(req), ExpectedOutput(req.MaxTokens, r))
	}
	return n
}

// estimateKey is the context key of a request's estimate (WithEstimate).
type estimateKey struct{}

type estimateNote struct {
	req *llm.Request
	est int
}

// WithEstimate returns ctx noting that Estimate(req) is est, made once by
// the gateway for the caller's tokens and read again by EstimateIn on the
// router's way, instead of counting the text twice.
func WithEstimate(ctx context.Context, req *llm.Request, est int) context.Context {
	return context.WithValue(ctx, estimateKey{}, &estimateNote{req: req, est: est})
}

// WithPassEstimate is WithPass(WithEstimate(ctx, req, est), p) in one
// context value where p is pending: the estimate rides in p, sparing every
// request with caller limits a context value and a note (issue 18, item
// 2: the limits' own allocations).
func WithPassEstimate(ctx context.Context, p *Pass, req *llm.Request, est int) context.Context {
	if p == nil || !p.deferred {
		return WithEstimate(ctx, req, est)
	}
	p.estReq, p.est = req, est
	return WithPass(ctx, p)
}

// EstimateIn is Estimate(req), from ctx when WithEstimate or
// WithPassEstimate noted it for this very request.
func EstimateIn(ctx context.Context, req *llm.Request) int {
	if p := PassFrom(ctx); p != nil && p.estReq == req && req != nil {
		return p.est
	}
	if n, ok := ctx.Value(estimateKey{}).(*estimateNote); ok && n.req == req {
		return n.est
	}
	return Estimate(req)
}
