package route

import (
	"net/http"
	"regexp"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/rest"
)

// Continuing a broken stream (issue 13, docs/DECISIONS.md): when a stream breaks
// after text reached the caller, the next eligible route continues it by
// the best method it supports (config.Route.Continuation): a prefix
// continuation where the provider honours one, else an instruct
// continuation. A route that refuses a prefix is learned as one that does
// not (rest.NoPrefix, kept with the rests, so every instance and a restart
// know it) and is asked by instruct at once; the refusal is one line of the
// call log, never the caller's error. What a continuation sends is joined
// to what was sent (join.go) only where the join is proven, byte for byte;
// otherwise it is abandoned for the next method or route.

// method is how one attempt takes a broken answer up; its text is
// Attempt.Method.
type method uint8

const (
	// methodFresh takes the request up afresh: no answer text reached the
	// caller yet (only reasoning, or blanks), so any route will do.
	methodFresh method = iota
	// methodPrefix sends the answer so far, up to the start of its last
	// word, as the start of the model's own reply (llm.Message.Prefix),
	// which it continues.
	methodPrefix
	// methodInstruct hands the answer so far back, up to the start of its
	// last word, with a request to continue it (continueInstruction).
	methodInstruct
)

func (m method) String() string {
	switch m {
	case methodPrefix:
		return "prefix"
	case methodInstruct:
		return "instruct"
	}
	return ""
}

// methodSet is a set of methods, one bit each.
type methodSet uint8

const allMethods methodSet = 1<<methodFresh | 1<<methodPrefix | 1<<methodInstruct

func (s methodSet) has(m method) bool { return s&(1<<m) != 0 }

// continueInstruction follows the answer so far in an instruct
// continuation. It goes upstream only: the caller never sees it, and what
// the route writes again of the sent text is trimmed where that is proven
// (joiner).
const continueInstruction = "Your reply above was cut off before it was finished. " +
	"Continue it from exactly where it stops, as if it had never been interrupted: " +
	"do not repeat any of it, do not start over, and write nothing before the continuation " +
	"(no greeting, no note about the interruption). " +
	"If it stops in the middle of a word or a sentence, finish that word or sentence first."

// step says what continueOn does after an attempt.
type step uint8

const (
	tookOver   step = iota // the attempt's route streams the answer now
	nextMethod             // try the route's next method
	nextRoute              // try the next route
)

// continueOn asks the next eligible route, by its best method not tried
// yet, to take the broken answer up: before any answer text, afresh (any
// route); after, by prefix and then instruct, or instruct alone, as the
// route's Continuation says and as learned (rest.NoPrefix). Routes are
// picked as the walk picks them (pick), hedging aside. It returns the first
// chunk of the route that took over. A route that refuses or fails is
// settled like any attempt and the next method or route is tried; none of
// their errors reaches the caller.
func (s *RoutedStream) continueOn() (llm.Chunk, bool) {
	for _, rt := range s.w.order {
		for _, m := range s.methods(rt) {
			if s.pastDeadline() || s.w.parent.Err() != nil {
				return llm.Chunk{}, false
			}
			first, next := s.attempt(rt, m)
			if next == tookOver {
				return first, true
			}
			if next == nextRoute {
				break
			}
		}
	}
	return llm.Chunk{}, false
}

// methods lists the methods rt may still try on this answer, best first:
// none once tool calls went out.
func (s *RoutedStream) methods(rt *config.Route) []method {
	var ms []method
	tried := s.tried[rt]
	switch {
	case !s.answered:
		ms = append(ms, methodFresh)
	case rt.Continuation == config.ContinueOff, s.tools:
		// A route that never continues; tool calls already sent, which no
		// text continuation can finish.
	case rt.Continuation == config.ContinuePrefix && !s.w.rests.Knows(rest.TraitKey(rest.NoPrefix, rt.ID), s.w.r.clock.Now()):
		ms = append(ms, methodPrefix, methodInstruct)
	default:
		ms = append(ms, methodInstruct)
	}
	out := ms[:0]
	for _, m := range ms {
		if !tried.has(m) {
			out = append(out, m)
		}
	}
	return out
}

// attempt asks rt to take the answer up by m, and waits for its first
// chunk. On one, the stream's next part is rt's, judged by a joiner.
func (s *RoutedStream) attempt(rt *config.Route, m method) (llm.Chunk, step) {
	w := s.w
	req, est, sent, tail := s.request(m)
	t, _, why := w.pick(rt, req, est, false)
	switch why {
	case picked:
	case notEligible:
		return llm.Chunk{}, nextRoute
	default:
		return llm.Chunk{}, nextMethod
	}
	s.tried[rt] |= 1 << m
	o := s.launchPart(t, m)
	if o.err != nil {
		v := w.judge(o)
		if m == methodPrefix && refusesPrefix(statusOf(o.err), v) {
			s.learnNoPrefix(o, v)
			return llm.Chunk{}, nextMethod
		}
		w.rests.Put(w.settle(o, v))
		s.tried[rt] = allMethods
		return llm.Chunk{}, nextRoute
	}
	s.takeOver(o)
	if m != methodFresh {
		s.join = newJoiner(sent, tail)
	}
	return o.first, tookOver
}

// request is what an attempt by m sends, and its estimate; sent is the
// answer as the joiner judges the continuation against (the caller's own
// trailing assistant message, if any, and the answer so far), tail how
// much of its end the route is not shown (cutBack): by either method, the
// route writes the last word again, which proves where it joins (join.go).
func (s *RoutedStream) request(m method) (req *llm.Request, est int, sent string, tail int) {
	w := s.w
	if m == methodFresh {
		return w.req, w.est, "", 0
	}
	msgs := append([]llm.Message(nil), w.req.Messages...)
	var own string // a trailing assistant message of the caller's: its prefill
	if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" && msgs[n-1].Parts == nil && msgs[n-1].ToolCalls == nil {
		own = msgs[n-1].Content
		msgs = msgs[:n-1]
	}
	sent = own + s.text.String()
	shown, tail := cutBack(sent)
	msgs = append(msgs, llm.Message{Role: "assistant", Content: shown, Prefix: m == methodPrefix})
	if m == methodInstruct {
		msgs = append(msgs, llm.Message{Role: "user", Content: continueInstruction})
	}
	cont := *w.req
	cont.Messages = msgs
	return &cont, quota.Estimate(&cont), sent, tail
}

// launchPart launches t as the next part of the answer, by m, and waits
// for its first chunk. The part's first-token timeout is clipped to what
// is left of the chain's deadline, as every attempt's is (open).
func (s *RoutedStream) launchPart(t ticket, m method) *outcome {
	w := s.w
	w.results = make(chan *outcome, 1)
	w.launch(t, false)
	o := <-w.results
	delete(w.inflight, t.route)
	o.part, o.method = s.parts+1, m.String()
	return o
}

// takeOver makes o, which answered, the stream's current part.
func (s *RoutedStream) takeOver(o *outcome) {
	o.timer.Stop()
	s.parts++
	s.done = append(s.done, s.part)
	s.part = partUsage{}
	s.o = o
	s.setPart(o.cancel)
}

// prefillRe matches a provider's refusal of a prefix continuation: Mistral
// "Expected last role User or Tool (or Assistant with prefix True) for
// serving but got assistant", Gemini "Requests ending with a model turn are
// not supported", Anthropic behind a proxy "This model does not support
// assistant message prefill. The conversation must end with a user
// message.", a chat template's "Conversation roles must alternate", Groq
// and Cerebras "property 'prefix' is unsupported".
var prefillRe = regexp.MustCompile(`(?i)prefix|prefill|model turn|last role|must alternate|must end with a user`)

// refusesPrefix reports whether a prefix continuation's failure (its
// status and verdict) refuses the method, not the request: a 400 or 422
// about the request whose words are about the trailing assistant message,
// or an unsupported field that is the prefix flag itself.
func refusesPrefix(status int, v failure.Verdict) bool {
	if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity {
		return false
	}
	switch v.Class {
	case failure.Unsupported:
		leaf := leafName(v.Param)
		return leaf == "prefix" || leaf == "" && prefillRe.MatchString(v.Message)
	case failure.BadRequest:
		return prefillRe.MatchString(v.Message)
	}
	return false
}

// learnNoPrefix settles a prefix continuation that rt refused: the method
// is refused, not the route, so nothing rests and the caller never gets
// the refusal; it is written down (rest.NoPrefix) for every instance, so
// that later requests go to instruct at once.
func (s *RoutedStream) learnNoPrefix(o *outcome, v failure.Verdict) {
	w := s.w
	now := w.r.clock.Now()
	key := rest.TraitKey(rest.NoPrefix, o.route.ID)
	r, err := rest.Learn(w.background(), w.r.store, key, v.Class, now, now.Add(rest.TraitTTL), v.LogText())
	if err != nil {
		w.r.log.Warn("state store: recording that a route refuses a prefix continuation failed", "route", o.route.ID, "err", err)
	}
	w.rests.Put(r)
	w.r.log.Info("route refuses a prefix continuation: continuing by instruct on it", "route", o.route.ID, "until", r.Until)
	w.settle(o, failure.Verdict{Class: failure.Unsupported, Scope: failure.ScopeRequest, Param: "prefix",
		Message: "refused a prefix continuation: " + v.Message})
}
