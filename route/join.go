package route

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Joining a continuation to the answer the caller already has (issues 13
// and 32). The route asked to continue is shown the answer up to the start
// of its last word (cutBack): the rest of what was sent, the hidden tail,
// it must write again, since it was not shown it. The route's own answer is
// then what it was shown followed by what it writes, and the join is
// proven when that answer starts with everything the caller already has.
//
// A route may also repeat some of what it was shown before going on, or
// start over. The joiner therefore reads a continuation as "the end of the
// sent text, from some point no later than where what the route was shown
// ends, then the new text", and keeps every reading that still fits: from
// the hidden tail alone (an exact continuation), from a few words earlier
// (a repeat), from the very start (a restart reproducing the answer). The
// start of the continuation is held back until exactly one reading is
// left that has covered all of the sent text: what follows it is passed
// on, byte for byte. No reading left (a different word, a restart worded
// differently) or more than one at the end (repeated words that could be
// either) means the join cannot be proven: the continuation is abandoned
// for the next method or route, and when none is left the stream ends with
// an error event. Nothing else is ever trimmed or added: whitespace,
// indentation and repeated words are text. This file is the text logic
// alone, with no I/O: stream.go feeds it.

// joinHold is the most continuation text held back while more than one
// reading fits and one of them already passes text: past it the join is
// not proven in time, and the continuation is abandoned. Text that every
// reading still takes for a repeat (a restart reproducing a long answer)
// is not held: it is known to be the sent text.
const joinHold = 2 << 10

// joinState is where a joiner is.
type joinState uint8

const (
	joinJudging  joinState = iota // readings are being told apart
	joinPassing                   // joined: the rest passes as it comes
	joinDiverged                  // no reading proven: abandon the continuation
)

// joiner judges one continuation of sent, the answer the caller has. tail
// is how many bytes at the end of sent the continuing route was not shown
// (cutBack). It is used by one goroutine.
type joiner struct {
	sent  string
	shown int   // how much of sent the route was shown
	hold  int   // joinHold, smaller in tests
	reads []int // the readings that still fit: where in sent the continuation starts
	read  bool  // reads is made (at the first piece)
	n     int   // bytes of the continuation judged
	base  int   // held is the continuation from byte base to n
	held  []byte
	state joinState
}

func newJoiner(sent string, tail int) *joiner {
	j := &joiner{sent: sent, shown: len(sent) - tail, hold: joinHold}
	if sent == "" {
		j.state = joinPassing
	}
	return j
}

// readings makes the readings that the first piece of the continuation
// fits: only those, so that a long answer costs no list of every place.
func (j *joiner) readings(piece string) {
	j.read = true
	for q := 0; q <= j.shown; q++ {
		if (q == len(j.sent) || utf8.RuneStart(j.sent[q])) && fits(j.sent[q:], 0, piece) {
			j.reads = append(j.reads, q)
		}
	}
}

// feed takes the next piece of the continuation and returns what may be
// passed on now ("" while it is held back). ok is false when the
// continuation cannot be joined: it must be abandoned, and nothing of it
// was passed on.
func (j *joiner) feed(piece string) (out string, ok bool) {
	switch j.state {
	case joinPassing:
		return piece, true
	case joinDiverged:
		return "", false
	}
	if piece == "" {
		return "", true
	}
	start := j.n
	j.n += len(piece)
	j.held = append(j.held, piece...)
	if !j.read {
		j.readings(piece)
		return j.decide(false)
	}
	keep := j.reads[:0]
	for _, q := range j.reads {
		if fits(j.sent[q:], start, piece) {
			keep = append(keep, q)
		}
	}
	j.reads = keep
	return j.decide(false)
}

// fits reports whether piece, found at byte at of a continuation, agrees
// with a reading that repeats want before its new text.
func fits(want string, at int, piece string) bool {
	if at >= len(want) {
		return true
	}
	want = want[at:]
	m := min(len(want), len(piece))
	return want[:m] == piece[:m]
}

// end is called at the continuation's end (its finish, or the clean end
// of its stream): it returns what is still held, with ok false when the
// continuation cannot be joined.
func (j *joiner) end() (out string, ok bool) {
	switch j.state {
	case joinPassing:
		return "", true
	case joinDiverged:
		return "", false
	}
	if !j.read {
		j.readings("") // it wrote nothing: every reading, judged at its end
	}
	return j.decide(true)
}

// decide passes what follows the one reading left once it has covered the
// sent text, abandons the continuation when none is left (or, at its end,
// when none or several cover the sent text), and otherwise holds.
func (j *joiner) decide(final bool) (string, bool) {
	if final {
		// A reading whose repeat the continuation did not finish would be
		// an answer that ends inside what was sent: not a continuation.
		keep := j.reads[:0]
		for _, q := range j.reads {
			if len(j.sent)-q <= j.n {
				keep = append(keep, q)
			}
		}
		j.reads = keep
	}
	switch {
	case len(j.reads) == 0:
		return j.diverge()
	case len(j.reads) == 1 && len(j.sent)-j.reads[0] <= j.n:
		j.state = joinPassing
		out := string(j.held[len(j.sent)-j.reads[0]-j.base:])
		j.held = nil
		return out, true
	case final:
		return j.diverge()
	}
	// Drop what every reading takes for a repeat of the sent text.
	least := j.n
	for _, q := range j.reads {
		least = min(least, len(j.sent)-q)
	}
	if least > j.base {
		j.held = append(j.held[:0], j.held[least-j.base:]...)
		j.base = least
	}
	if len(j.held) > j.hold {
		return j.diverge()
	}
	return "", true
}

func (j *joiner) diverge() (string, bool) {
	j.state, j.reads, j.held = joinDiverged, nil, nil
	return "", false
}

// maxCutBack bounds the tail hidden from a continuing route; an answer
// whose last word (with the whitespace after it) is longer, or that has no
// whitespace before its last word, is shown whole.
const maxCutBack = 48

// cutBack splits the answer sent for a continuation: keep, the answer up
// to the start of its last word, is shown to the route; tail, the last word
// (perhaps cut short) and any whitespace after it, is left for the route to
// write again, so that where its continuation joins can be proven (joiner).
func cutBack(sent string) (keep string, tail int) {
	end := strings.LastIndexFunc(sent, func(r rune) bool { return !unicode.IsSpace(r) })
	if end < 0 {
		return sent, 0
	}
	i := strings.LastIndexFunc(sent[:end], unicode.IsSpace)
	if i < 0 || strings.TrimSpace(sent[:i]) == "" {
		return sent, 0
	}
	_, n := utf8.DecodeRuneInString(sent[i:])
	if len(sent)-i-n > maxCutBack {
		return sent, 0
	}
	return sent[:i+n], len(sent) - i - n
}
