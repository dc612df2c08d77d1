package route

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider/openaicompat"
	"github.com/tollfree/tollfree/rest"
)

// Continuations with the defaults (issue 13): three routes, no
// continuation option anywhere. Groq's routes continue by prefix (Groq
// documents an assistant prefill), Cerebras's by instruct.

const contChains = `
chains:
  pre:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
    idle_timeout: 5s
  ins:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
    idle_timeout: 5s
`

// longAnswer is an answer of more than 40 words, streamed a word a chunk.
const longAnswer = "Tollfree is one OpenAI-compatible endpoint that keeps an AI feature answering on the free tiers of many providers. " +
	"It walks a chain of routes, skips the ones resting or out of budget, hedges a slow one, and when a stream breaks " +
	"halfway it asks the next route to continue the answer, joining it only where the join is proven so that the caller sees one coherent reply from start to end."

// contRoutes are the routes of contChains.
var contRoutes = []string{"groq/llama-3.3-70b-versatile", "groq/llama-3.1-8b-instant", "cerebras/gpt-oss-120b"}

// attemptsOf lists a request's attempts as "route class method part".
func attemptsOf(s *stack, id string) string {
	var out []string
	for _, a := range s.recs.forRequest(id) {
		out = append(out, fmt.Sprintf("%s %s %s %d", a.Route, a.Class, a.Method, a.Part))
	}
	return strings.Join(out, ", ")
}

// wholeAnswer fails the test unless got is the whole answer, once, with
// one finish and a clean end.
func wholeAnswer(t *testing.T, got streamed) {
	t.Helper()
	if got.err != nil {
		t.Fatalf("the stream ended with %v after %q, want the whole answer", got.err, got.text())
	}
	if got.text() != longAnswer {
		t.Fatalf("the caller got\n%q\nwant\n%q", got.text(), longAnswer)
	}
	if f := got.finishes(); len(f) != 1 || f[0] != "stop" {
		t.Errorf("finish reasons %v, want one stop", f)
	}
}

// TestContinueByPrefix: a stream cut after 40 tokens is completed by the
// next route by prefix, by default: the caller gets the whole answer once,
// with its finish; the call log has the cut part and the continuation by
// prefix. Cut mid-word (7-byte chunks) it joins as well.
func TestContinueByPrefix(t *testing.T) {
	for _, tt := range []struct {
		name string
		step emulator.Step
	}{
		{"cut after 40 words", emulator.Step{Kind: emulator.StreamCut, After: 40}},
		{"cut mid-word", emulator.Step{Kind: emulator.StreamCut, After: 30, ChunkBytes: 7}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t, contChains)
			emutest.SameAnswer(s.emu, longAnswer, contRoutes...)
			s.emu.Script("groq", "llama-3.3-70b-versatile", tt.step)
			got, err := s.stream("pre", streamRequest(true))
			if err != nil {
				t.Fatal(err)
			}
			wholeAnswer(t, got)
			want := "groq/llama-3.3-70b-versatile overloaded  0, groq/llama-3.1-8b-instant ok prefix 1"
			if a := attemptsOf(s, got.id); a != want {
				t.Errorf("attempts: %s\nwant %s", a, want)
			}
		})
	}
}

// TestContinuePrefixRefused: a route that refuses the prefix continuation
// (a 400 about the trailing assistant message) is asked again at once by
// instruct, and completes the answer; the refusal is one line of the call
// log, rests nothing, and is learned: the next request, and a new router
// on the same store, go to instruct on it straight away.
func TestContinuePrefixRefused(t *testing.T) {
	s := newStack(t, contChains)
	emutest.SameAnswer(s.emu, longAnswer, contRoutes...)
	s.emu.AddModel("groq", emulator.Model{ID: "llama-3.1-8b-instant", Answer: longAnswer, RefusePrefill: true})
	cut := emulator.Step{Kind: emulator.StreamCut, After: 40}

	s.emu.Script("groq", "llama-3.3-70b-versatile", cut)
	got, err := s.stream("pre", streamRequest(false))
	if err != nil {
		t.Fatal(err)
	}
	wholeAnswer(t, got)
	want := "groq/llama-3.3-70b-versatile overloaded  0, groq/llama-3.1-8b-instant unsupported prefix 1, groq/llama-3.1-8b-instant ok instruct 1"
	if a := attemptsOf(s, got.id); a != want {
		t.Fatalf("attempts: %s\nwant %s", a, want)
	}
	refused := s.recs.forRequest(got.id)[1]
	if refused.Status != http.StatusBadRequest || !strings.Contains(refused.Error, "prefix") {
		t.Errorf("the refusal is logged as %d %q", refused.Status, refused.Error)
	}
	if _, ok := s.rest("groq/llama-3.1-8b-instant"); ok {
		t.Error("the route that refused a prefix rests")
	}
	if r, ok := s.rest(rest.TraitKey(rest.NoPrefix, "groq/llama-3.1-8b-instant").String()); !ok || !r.Until.Equal(t0.Add(rest.TraitTTL)) {
		t.Errorf("learned %+v (%v), want noprefix for a week", r, ok)
	}

	again := func(r *Router, label string) {
		t.Helper()
		s.clk.Advance(time.Minute) // the cut route's rest is over
		s.emu.Script("groq", "llama-3.3-70b-versatile", cut)
		id := s.nextID()
		rs, err := r.Stream(context.Background(), s.chain("pre"), id, streamRequest(false))
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		wholeAnswer(t, drain(id, rs))
		want := "groq/llama-3.3-70b-versatile overloaded  0, groq/llama-3.1-8b-instant ok instruct 1"
		if a := attemptsOf(s, id); a != want {
			t.Errorf("%s: attempts: %s\nwant %s", label, a, want)
		}
	}
	again(s.r, "the next request")
	r2, err := New(Options{Plan: s.plan, Upstreams: upstreams(s.plan, &http.Client{Transport: openaicompat.NewTransport()}), Store: s.store, Clock: s.clk, Recorder: s.recs})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	again(r2, "a new router on the same store")
	n := 0
	for _, rec := range s.emu.Records() {
		if rec.Model == "llama-3.1-8b-instant" && rec.Behaviour == "prefill_refused" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the route was asked for a prefix %d times, want once", n)
	}
}

// TestContinueByInstruct: a route that continues by instruct (Cerebras's,
// by default) completes the answer however it answers: exactly, repeating
// the last words first, or starting over and reproducing the answer (the
// repeated text is trimmed, and a cut mid-word joins on its word); one
// that starts over and words it differently cannot be joined: it is
// abandoned, and the next route completes the answer.
func TestContinueByInstruct(t *testing.T) {
	tests := []struct {
		name string
		mode emulator.Continuation
		cut  emulator.Step
		want string // the attempts
	}{
		{"exact", emulator.ContinueExact, emulator.Step{Kind: emulator.StreamCut, After: 40},
			"cerebras/gpt-oss-120b ok instruct 1"},
		{"exact, cut mid-word", emulator.ContinueExact, emulator.Step{Kind: emulator.StreamCut, After: 30, ChunkBytes: 7},
			"cerebras/gpt-oss-120b ok instruct 1"},
		{"overlap", emulator.ContinueOverlap, emulator.Step{Kind: emulator.StreamCut, After: 40},
			"cerebras/gpt-oss-120b ok instruct 1"},
		{"overlap, cut mid-word", emulator.ContinueOverlap, emulator.Step{Kind: emulator.StreamCut, After: 30, ChunkBytes: 7},
			"cerebras/gpt-oss-120b ok instruct 1"},
		{"restart reproduced", emulator.ContinueRestart, emulator.Step{Kind: emulator.StreamCut, After: 40},
			"cerebras/gpt-oss-120b ok instruct 1"},
		{"restart diverging", emulator.ContinueRestartDiverge, emulator.Step{Kind: emulator.StreamCut, After: 40},
			"cerebras/gpt-oss-120b unsupported instruct 1, groq/llama-3.1-8b-instant ok prefix 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t, contChains)
			emutest.SameAnswer(s.emu, longAnswer, contRoutes...)
			s.emu.AddModel("cerebras", emulator.Model{ID: "gpt-oss-120b", Answer: longAnswer, Continue: tt.mode})
			s.emu.Script("groq", "llama-3.3-70b-versatile", tt.cut)
			got, err := s.stream("ins", streamRequest(true))
			if err != nil {
				t.Fatal(err)
			}
			wholeAnswer(t, got)
			if a, want := attemptsOf(s, got.id), "groq/llama-3.3-70b-versatile overloaded  0, "+tt.want; a != want {
				t.Errorf("attempts: %s\nwant %s", a, want)
			}
			if _, ok := s.rest("cerebras/gpt-oss-120b"); ok {
				t.Error("the continuing route rests")
			}
			if got.usage.CompletionTokens == 0 || got.parts < 2 {
				t.Errorf("usage %+v over %d parts", got.usage, got.parts)
			}
		})
	}
}

// TestContinueAbandonedRestart: where no route is left after a
// continuation that cannot be joined, the stream ends with the original
// break (a BrokenError naming the cut route), after the text sent before
// it and nothing of the restart.
func TestContinueAbandonedRestart(t *testing.T) {
	const chains = `
chains:
  two:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
`
	s := newStack(t, chains)
	emutest.SameAnswer(s.emu, longAnswer, contRoutes...)
	s.emu.AddModel("cerebras", emulator.Model{ID: "gpt-oss-120b", Answer: longAnswer, Continue: emulator.ContinueRestartDiverge})
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 40})
	got, err := s.stream("two", streamRequest(false))
	if err != nil {
		t.Fatal(err)
	}
	var be *BrokenError
	if !errors.As(got.err, &be) || be.Route != "groq/llama-3.3-70b-versatile" || be.Class != failure.Overloaded {
		t.Fatalf("the stream ended with %v, want the cut route's BrokenError", got.err)
	}
	if want := strings.Join(emutest.Words(longAnswer)[:40], ""); got.text() != want || len(got.finishes()) != 0 {
		t.Errorf("the caller got %q with finishes %v, want the 40 words sent and no finish", got.text(), got.finishes())
	}
}

// TestContinuationRequests: what a continuation sends. Prefix: the
// conversation, then the answer so far up to the start of its last word as
// the assistant's own message, marked Prefix. Instruct: the same text as
// the assistant's message, then the request to continue it; a trailing
// assistant message of the caller's (a prefill) is the start of it.
func TestContinuationRequests(t *testing.T) {
	w := &walk{req: &llm.Request{Messages: []llm.Message{{Role: "user", Content: "Hi"}, {Role: "assistant", Content: "Well, "}}}}
	s := &RoutedStream{w: w}
	s.text.WriteString("tollfree keeps an AI feat")
	req, _, sent, tail := s.request(methodPrefix)
	if n := len(req.Messages); n != 2 || !reflect.DeepEqual(req.Messages[1], llm.Message{Role: "assistant", Content: "Well, tollfree keeps an AI ", Prefix: true}) || sent != "Well, tollfree keeps an AI feat" || tail != 4 {
		t.Errorf("prefix: %+v, sent %q, tail %d", req.Messages, sent, tail)
	}
	req, _, sent, tail = s.request(methodInstruct)
	if n := len(req.Messages); n != 3 || !reflect.DeepEqual(req.Messages[1], llm.Message{Role: "assistant", Content: "Well, tollfree keeps an AI "}) ||
		!reflect.DeepEqual(req.Messages[2], llm.Message{Role: "user", Content: continueInstruction}) || sent != "Well, tollfree keeps an AI feat" || tail != 4 {
		t.Errorf("instruct: %+v, sent %q, tail %d", req.Messages, sent, tail)
	}
	if len(w.req.Messages) != 2 || w.req.Messages[1].Content != "Well, " {
		t.Errorf("the caller's request was changed: %+v", w.req.Messages)
	}
}

// TestRefusesPrefix: which failures of a prefix continuation refuse the
// method (learned, the route asked by instruct) and which are the
// route's or the request's as usual.
func TestRefusesPrefix(t *testing.T) {
	tests := []struct {
		status int
		v      failure.Verdict
		want   bool
	}{
		{400, failure.Verdict{Class: failure.BadRequest, Message: "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant"}, true},
		{400, failure.Verdict{Class: failure.BadRequest, Message: "Requests ending with a model turn are not supported."}, true},
		{400, failure.Verdict{Class: failure.BadRequest, Message: "This model does not support assistant message prefill. The conversation must end with a user message."}, true},
		{400, failure.Verdict{Class: failure.BadRequest, Message: "Conversation roles must alternate user/assistant/user/assistant/..."}, true},
		{400, failure.Verdict{Class: failure.Unsupported, Param: "prefix", Message: "property 'prefix' is unsupported"}, true},
		{422, failure.Verdict{Class: failure.Unsupported, Param: "body.messages.1.prefix", Message: "Extra inputs are not permitted"}, true},
		{400, failure.Verdict{Class: failure.Unsupported, Param: "logit_bias", Message: "property 'logit_bias' is unsupported"}, false},
		{400, failure.Verdict{Class: failure.BadRequest, Message: "max_tokens must be at most 8192"}, false},
		{400, failure.Verdict{Class: failure.TooLarge, Message: "Please reduce the length of the messages"}, false},
		{503, failure.Verdict{Class: failure.Overloaded, Message: "prefix service unavailable"}, false},
		{429, failure.Verdict{Class: failure.RateMinute, Message: "Rate limit reached"}, false},
	}
	for _, tt := range tests {
		if got := refusesPrefix(tt.status, tt.v); got != tt.want {
			t.Errorf("%d %s %q: %v, want %v", tt.status, tt.v.Class, tt.v.Message, got, tt.want)
		}
	}
}
