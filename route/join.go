package route

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Joining a continuation to the answer the caller already has (issue 13).
// A route asked to continue a broken answer may continue it exactly, repeat
// the last few words (or the last partial word) first, start the answer
// over and reproduce it, or start over and word it differently. The start
// of a continuation is therefore held back until it can be judged against
// the text already sent: a repeated tail is trimmed, a reproduced start is
// dropped, and a restart that cannot be trimmed into one coherent answer is
// abandoned, so that the caller never sees repeated or restarted text. A
// restart is told by its text: one that opens as the answer opened, or
// repeats a piece of it; one worded differently from its very first word
// reads as a continuation. This file is the text logic alone, with no
// I/O: stream.go feeds it.

// The joiner's bounds and thresholds.
const (
	// joinHold is the most continuation text held back while it is judged:
	// past it, a continuation that is still reproducing the answer from its
	// start is followed without holding (joinSkipping), and any other is
	// judged on what came.
	joinHold = 2 << 10
	// joinOverlap is the shortest repeated tail trimmed wherever it starts;
	// a shorter one is trimmed only when it starts a word of the sent text
	// (the model started the last word over: "provid" then "providers").
	joinOverlap = 4
	// joinRestart is how much of the answer's own opening a continuation
	// must repeat (or all of the answer, when it is shorter) to be taken
	// for a restart rather than a continuation.
	joinRestart = 12
	// joinRepeat is how much of the answer's middle a continuation must
	// repeat to be taken for a repeat rather than a continuation that
	// happens to share a few words with it.
	joinRepeat = 32
)

// joinState is where a joiner is.
type joinState uint8

const (
	joinJudging  joinState = iota // the start is held back
	joinSkipping                  // a restart reproducing the answer: matched text is dropped
	joinPassing                   // judged: the rest passes as it comes
	joinDiverged                  // a restart that cannot be joined: abandon the continuation
)

// joiner judges one continuation of sent, the answer the caller has. tail
// is how many bytes at the end of sent the continuing route was not shown
// (an instruct continuation is handed the answer up to its last whole
// word, see cutBack): the continuation must reproduce them first, or it
// cannot be joined. It is used by one goroutine.
type joiner struct {
	sent  string
	tail  int
	hold  int // joinHold, smaller in tests
	held  strings.Builder
	skip  int // joinSkipping: how much of sent has been reproduced
	state joinState
}

func newJoiner(sent string, tail int) *joiner {
	j := &joiner{sent: sent, tail: tail, hold: joinHold}
	if sent == "" {
		j.state = joinPassing
	}
	return j
}

// feed takes the next piece of the continuation and returns what may be
// passed on now ("" while the start is held back or reproduces the
// answer). ok is false when the continuation diverged: it must be
// abandoned, and nothing of it was passed on.
func (j *joiner) feed(piece string) (out string, ok bool) {
	switch j.state {
	case joinPassing:
		return piece, true
	case joinDiverged:
		return "", false
	case joinSkipping:
		return j.skipping(piece)
	}
	j.held.WriteString(piece)
	h := j.held.String()
	body := h[leadingSpace(h):]
	switch {
	case body == "":
		return "", true
	case len(h) >= j.hold && reproduces(j.sent, body):
		// A restart that goes on reproducing the answer: follow it
		// without holding it.
		j.state, j.skip = joinSkipping, len(body)
		j.held.Reset()
		return "", true
	case len(h) < j.hold && strings.Contains(j.sent[:len(j.sent)-1], body):
		// It may yet turn out to repeat the answer's tail, or its start:
		// wait for more.
		return "", true
	}
	return j.decide(h, false)
}

// end is called at the continuation's end (its finish, or the clean end
// of its stream): it returns what is still held, judged, with ok false when
// the continuation diverged.
func (j *joiner) end() (out string, ok bool) {
	switch j.state {
	case joinPassing:
		return "", true
	case joinDiverged:
		return "", false
	case joinSkipping:
		// It ended while reproducing what was sent: nothing to add.
		j.state = joinPassing
		return "", true
	}
	h := j.held.String()
	if strings.TrimSpace(h) == "" {
		j.state = joinPassing
		return "", true
	}
	return j.decide(h, true)
}

// decide judges the held start h of the continuation: trim a repeated
// tail, drop a reproduced start, abandon a restart, or pass it as it is.
func (j *joiner) decide(h string, final bool) (string, bool) {
	j.held.Reset()
	lead := leadingSpace(h)
	body := h[lead:]
	k, at := overlap(j.sent, h), 0
	if k == 0 && lead > 0 {
		k, at = overlap(j.sent, body), lead
	}
	switch {
	case k > 0 && k >= j.tail:
		j.state = joinPassing
		return j.joinSpace(h[at+k:]), true
	case k > 0:
		// It did not write again what it was not shown.
		return j.diverge()
	case final && reproduces(j.sent, body):
		// The whole continuation repeats the answer's start: the route's
		// own answer ends within what was sent, and adds nothing.
		j.state = joinPassing
		return "", true
	case j.tail > 0, restarts(j.sent, body), repeats(j.sent, body):
		return j.diverge()
	}
	j.state = joinPassing
	return j.joinSpace(h), true
}

func (j *joiner) diverge() (string, bool) {
	j.state = joinDiverged
	return "", false
}

// skipping follows a restart past what it reproduces of sent, and passes
// on what comes after; one that departs from sent before its end diverged.
func (j *joiner) skipping(piece string) (string, bool) {
	rest := j.sent[j.skip:]
	if len(piece) <= len(rest) {
		if !strings.HasPrefix(rest, piece) {
			return j.diverge()
		}
		j.skip += len(piece)
		return "", true
	}
	if !strings.HasPrefix(piece, rest) {
		return j.diverge()
	}
	j.state = joinPassing
	return j.joinSpace(piece[len(rest):]), true
}

// joinSpace fixes the whitespace at the join: after sent text that ends in
// a space or tab, the continuation's own leading spaces and tabs are
// dropped (a route asked to continue often starts with one).
func (j *joiner) joinSpace(s string) string {
	if j.sent == "" {
		return s
	}
	if last := j.sent[len(j.sent)-1]; last == ' ' || last == '\t' {
		return strings.TrimLeft(s, " \t")
	}
	return s
}

// overlap returns the length of the longest tail of sent that h starts
// with and that may be trimmed: one of at least joinOverlap bytes, one
// that starts a word of sent (the model started its last word over), or
// all of sent (it started the answer over). 0 when none.
func overlap(sent, h string) int {
	for k := min(len(sent), len(h)); k > 0; k-- {
		i := len(sent) - k
		if !utf8.RuneStart(sent[i]) || sent[i:] != h[:k] {
			continue
		}
		if k >= joinOverlap || i == 0 || startsWord(sent, i) {
			return k
		}
	}
	return 0
}

// reproduces reports whether h is the start of sent, shorter than it: a
// continuation that may be the answer started over.
func reproduces(sent, h string) bool {
	return h != "" && len(h) < len(sent) && strings.HasPrefix(sent, h)
}

// restarts reports whether h opens as sent opens, for at least joinRestart
// bytes (or all of sent): the answer started over.
func restarts(sent, h string) bool {
	sent = strings.TrimLeftFunc(sent, unicode.IsSpace)
	n := 0
	for n < len(sent) && n < len(h) && sent[n] == h[n] {
		n++
	}
	return n > 0 && n >= min(joinRestart, len(sent))
}

// repeats reports whether h opens with at least joinRepeat bytes found in
// sent: a piece of the answer said again.
func repeats(sent, h string) bool {
	return len(h) >= joinRepeat && strings.Contains(sent, h[:joinRepeat])
}

// startsWord reports whether a word starts at s[i]: a letter or digit
// after a space or punctuation.
func startsWord(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	p, _ := utf8.DecodeLastRuneInString(s[:i])
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && (unicode.IsSpace(p) || unicode.IsPunct(p))
}

// leadingSpace is the length of s's leading whitespace.
func leadingSpace(s string) int {
	return len(s) - len(strings.TrimLeftFunc(s, unicode.IsSpace))
}

// maxCutBack bounds how much of the answer's last word is held back from
// an instruct continuation; an answer without a space that near its end
// (a long token, text without spaces) is handed back whole.
const maxCutBack = 48

// cutBack splits the answer sent for an instruct continuation: keep, the
// answer up to and including its last whitespace, is handed back to the
// route; tail, the last word after it (perhaps cut mid-word), is left for
// the route to write again, so that its continuation starts at a word and
// the join needs no guess about a missing space (the joiner trims it).
func cutBack(sent string) (keep string, tail int) {
	i := strings.LastIndexFunc(sent, unicode.IsSpace)
	if i < 0 || len(sent)-i > maxCutBack || strings.TrimSpace(sent[:i]) == "" {
		return sent, 0
	}
	_, n := utf8.DecodeRuneInString(sent[i:])
	return sent[:i+n], len(sent) - i - n
}
