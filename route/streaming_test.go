package route

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

// The router's streams against the emulator. What the HTTP API sends for
// the chunks a stream yields (each one event, the finish, the usage chunk,
// [DONE], or the error event of a broken stream) is httpapi's
// TestStreamEncoding and TestStreamBrokenEvent.

const streamChains = `
chains:
  groq:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
    idle_timeout: 5s
  gem:
    routes: [gemini/gemini-2.5-flash, groq/llama-3.3-70b-versatile]
    attempt_timeout: 8s
    deadline: 25s
  or:
    routes: [openrouter/openai/gpt-oss-120b:free, groq/llama-3.3-70b-versatile]
    attempt_timeout: 8s
    deadline: 25s
  cont:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
    idle_timeout: 5s
  nocont:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
    idle_timeout: 5s
  hedge:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
    hedge_delay: 3s
  single:
    routes: [groq/llama-3.3-70b-versatile]
    idle_timeout: 5s
  think:
    routes: [groq/openai/gpt-oss-120b, groq/llama-3.3-70b-versatile]
    attempt_timeout: 8s
    deadline: 60s
    reasoning: pass
  quiet:
    routes: [groq/openai/gpt-oss-120b, groq/llama-3.3-70b-versatile]
    attempt_timeout: 8s
    deadline: 60s
    reasoning: drop
`

// streamRequest is the tests' question as a streamed request; usage asks
// for the usage chunk (stream_options.include_usage).
func streamRequest(usage bool) *llm.Request {
	req := question(emutest.Question)
	req.Stream, req.IncludeUsage = true, usage
	return req
}

// usageOf is the usage of a question and its answer, as the emulator
// counts them.
func usageOf(answer string) llm.Usage {
	q, a := emutest.Tokens(emutest.Question), emutest.Tokens(answer)
	return llm.Usage{PromptTokens: q, CompletionTokens: a, TotalTokens: q + a}
}

// TestStreamQuirks: every streaming quirk of docs/PROVIDERS.md, in each
// dialect, gives the same chunks, piece for piece: keep-alive comments,
// CRLF framing, one malformed event, a missing [DONE], a line over 64 KiB,
// lines split across reads; usage in the last chunk when asked; Gemini's
// streamGenerateContent translated chunk by chunk.
func TestStreamQuirks(t *testing.T) {
	tests := []struct {
		chain, route string
		kind         emulator.Kind
		lastFinish   bool // Gemini sends the finish with the last text
	}{
		{"groq", "groq/llama-3.3-70b-versatile", emulator.Answer, false},
		{"groq", "groq/llama-3.3-70b-versatile", emulator.StreamCRLF, false},
		{"groq", "groq/llama-3.3-70b-versatile", emulator.StreamNoDone, false},
		{"groq", "groq/llama-3.3-70b-versatile", emulator.StreamMalformedEvent, false},
		{"groq", "groq/llama-3.3-70b-versatile", emulator.StreamSplitLines, false},
		{"groq", "groq/llama-3.3-70b-versatile", emulator.StreamLongLine, false}, // over Groq's 12,000 TPM: last
		{"or", "openrouter/openai/gpt-oss-120b:free", emulator.StreamKeepAlive, false},
		{"or", "openrouter/openai/gpt-oss-120b:free", emulator.StreamNoDone, false},
		{"or", "openrouter/openai/gpt-oss-120b:free", emulator.StreamMalformedEvent, false},
		{"gem", "gemini/gemini-2.5-flash", emulator.Answer, true},
		{"gem", "gemini/gemini-2.5-flash", emulator.StreamCRLF, true},
		{"gem", "gemini/gemini-2.5-flash", emulator.StreamKeepAlive, true},
		{"gem", "gemini/gemini-2.5-flash", emulator.StreamMalformedEvent, true},
		{"gem", "gemini/gemini-2.5-flash", emulator.StreamLongLine, true},
		{"gem", "gemini/gemini-2.5-flash", emulator.StreamSplitLines, true},
	}
	s := newStack(t, streamChains)
	for _, tt := range tests {
		for _, usage := range []bool{false, true} {
			name := tt.route + "/" + string(tt.kind)
			if usage {
				name += "/usage"
			}
			t.Run(name, func(t *testing.T) {
				s.clk.Advance(3 * time.Minute) // fresh minutes of the free tiers' budgets
				p, m, _ := strings.Cut(tt.route, "/")
				s.emu.Script(p, m, emulator.Step{Kind: tt.kind})
				got, err := s.stream(tt.chain, streamRequest(usage))
				if err != nil || got.err != nil || got.route != tt.route {
					t.Fatalf("stream: %v, ended with %v, from %q; want %s's whole answer", err, got.err, got.route, tt.route)
				}
				answer := emutest.Answer(tt.route)
				pieces := emutest.Words(answer)
				if tt.kind == emulator.StreamLongLine {
					n := 64<<10/(len(answer)+1) + 1
					answer = strings.TrimSuffix(strings.Repeat(answer+" ", n), " ")
					pieces = []string{answer}
				}
				if ok, diff := sameChunks(got.chunks, emutest.Chunks(pieces, tt.lastFinish)); !ok {
					t.Errorf("chunks differ: %s", diff)
				}
				if usage && (got.usage != usageOf(answer) || !got.exact) {
					t.Errorf("usage %+v (exact %v), want the route's %+v", got.usage, got.exact, usageOf(answer))
				}
			})
		}
	}
	if n := len(s.recs.all()); n != 2*len(tests) {
		t.Errorf("%d attempts recorded, want one per stream (%d)", n, 2*len(tests))
	}
	for _, a := range s.recs.all() {
		if a.Class.String() != "ok" || !a.Stream || a.TokensOut == 0 {
			t.Errorf("attempt %+v, want an ok stream with its usage", a)
		}
	}
}

// TestStreamFailoverBeforeFirstToken: until the first token, a stream
// fails over like a whole answer (the attempt timeout is a first-token
// timeout), and the caller sees only the next route's stream.
func TestStreamFailoverBeforeFirstToken(t *testing.T) {
	tests := []struct {
		name      string
		chain     string
		first     string
		step      emulator.Step
		advance   time.Duration // fake time to let pass once the first call arrived
		restClass string
	}{
		{"503", "groq", "groq/llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand}, 0, "overloaded"},
		{"429", "groq", "groq/llama-3.3-70b-versatile", emulator.Step{Kind: emulator.RateMinute, RetryAfter: time.Minute}, 0, "rate_minute"},
		{"no first token within the attempt timeout", "groq", "groq/llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang}, 8 * time.Second, "timeout"},
		{"silent stream before its first token", "groq", "groq/llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamStall}, 8 * time.Second, "timeout"},
		{"cut before its first token", "groq", "groq/llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut}, 0, "overloaded"},
		{"OpenRouter's error event before the first token", "or", "openrouter/openai/gpt-oss-120b:free", emulator.Step{Kind: emulator.StreamErrorEvent}, 0, "overloaded"},
		{"Gemini cut before its first token", "gem", "gemini/gemini-2.5-flash", emulator.Step{Kind: emulator.StreamCut}, 0, "overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t, streamChains)
			p, m, _ := strings.Cut(tt.first, "/")
			s.emu.Script(p, m, tt.step)
			next := s.plan.Chains[tt.chain].Routes[1].ID
			type result struct {
				got streamed
				err error
			}
			done := make(chan result, 1)
			go func() {
				got, err := s.stream(tt.chain, streamRequest(true))
				done <- result{got, err}
			}()
			if tt.advance > 0 {
				s.waitCalls(p, m, 1)
				s.clk.Advance(tt.advance)
			}
			r := <-done
			if r.err != nil || r.got.err != nil || r.got.route != next {
				t.Fatalf("stream: %v, ended with %v, from %q; want %s's whole answer", r.err, r.got.err, r.got.route, next)
			}
			answer := emutest.Answer(next)
			if ok, diff := sameChunks(r.got.chunks, emutest.Chunks(emutest.Words(answer), false)); !ok {
				t.Fatalf("chunks differ: %s", diff)
			}
			if r.got.usage != usageOf(answer) || !r.got.exact {
				t.Errorf("usage %+v (exact %v), want %+v", r.got.usage, r.got.exact, usageOf(answer))
			}
			if rest, ok := s.rest(tt.first); !ok || rest.Class != tt.restClass {
				t.Errorf("rest on %s = %+v (%v), want %s", tt.first, rest, ok, tt.restClass)
			}
		})
	}
}

// TestStreamHedgeRacesForTheFirstToken: a first route slow to its first
// token is raced after the hedge delay; the second route's first token
// wins, the first is cancelled and logged as a silent loser (it had sent no
// token), and one such loss rests nothing.
func TestStreamHedgeRacesForTheFirstToken(t *testing.T) {
	s := newStack(t, streamChains)
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Delay: 6 * time.Second})
	type result struct {
		got streamed
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := s.stream("hedge", streamRequest(false))
		done <- result{got, err}
	}()
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.clk.Advance(3 * time.Second)
	r := <-done
	const winner = "cerebras/gpt-oss-120b"
	if r.err != nil || r.got.err != nil || r.got.route != winner {
		t.Fatalf("stream: %v, ended with %v, from %q; want %s's whole answer", r.err, r.got.err, r.got.route, winner)
	}
	if ok, diff := sameChunks(r.got.chunks, emutest.Chunks(emutest.Words(emutest.Answer(winner)), false)); !ok {
		t.Fatalf("chunks differ: %s", diff)
	}
	s.r.Close()
	var won, lost bool
	for _, a := range s.recs.forRequest(r.got.id) {
		won = won || a.Route == winner && a.Hedge && a.Class.String() == "ok"
		lost = lost || a.Route == "groq/llama-3.3-70b-versatile" && a.Class.String() == "silent_loser"
	}
	if !won || !lost {
		t.Errorf("attempts %+v, want a hedged ok and a silent loser", s.recs.forRequest(r.got.id))
	}
	if _, ok := s.rest("groq/llama-3.3-70b-versatile"); ok {
		t.Error("the loser of the race rests")
	}
}

// TestStreamBreakContinued: a stream that breaks after its first token
// (cut without a finish, silent past the idle timeout, an error event) is
// continued on the next route, by default (Groq honours a prefix), and the
// caller gets one whole answer, chunk for chunk what an unbroken stream
// yields. The call log has both parts, the second by prefix.
func TestStreamBreakContinued(t *testing.T) {
	const answer = "Tollfree keeps an AI feature answering on the free tiers of many providers."
	tests := []struct {
		name  string
		step  emulator.Step
		idle  bool // the break is a stall: the idle timeout must pass
		class string
	}{
		{"cut without a finish", emulator.Step{Kind: emulator.StreamCut, After: 4}, false, "overloaded"},
		{"silent past the idle timeout", emulator.Step{Kind: emulator.StreamStall, After: 4}, true, "timeout"},
		{"an error event", emulator.Step{Kind: emulator.StreamErrorEvent, After: 4}, false, "overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t, streamChains)
			emutest.SameAnswer(s.emu, answer, "groq/llama-3.3-70b-versatile", "groq/llama-3.1-8b-instant")
			s.emu.Script("groq", "llama-3.3-70b-versatile", tt.step)
			id, rs, err := s.openStream(context.Background(), "cont", streamRequest(false))
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			var first []llm.Chunk
			for range 4 {
				c, err := rs.Next()
				if err != nil {
					t.Fatalf("the stream ended before its fourth chunk: %v", err)
				}
				first = append(first, c)
			}
			if tt.idle {
				s.clk.Advance(5 * time.Second)
			}
			got := drain(id, rs)
			if got.err != nil {
				t.Fatalf("the stream ended with %v, want it continued", got.err)
			}
			chunks := append(first, got.chunks...)
			if ok, diff := sameChunks(chunks, emutest.Chunks(emutest.Words(answer), false)); !ok {
				t.Fatalf("chunks differ: %s", diff)
			}
			atts := s.recs.forRequest(id)
			if len(atts) != 2 {
				t.Fatalf("attempts %+v, want the broken part and its continuation", atts)
			}
			if a := atts[0]; a.Route != "groq/llama-3.3-70b-versatile" || a.Part != 0 || a.Class.String() != tt.class {
				t.Errorf("first part %+v, want %s on part 0", a, tt.class)
			}
			if a := atts[1]; a.Route != "groq/llama-3.1-8b-instant" || a.Part != 1 || a.Class.String() != "ok" || !a.Stream || a.Method != "prefix" {
				t.Errorf("continuation %+v, want ok on part 1, by prefix", a)
			}
			if _, ok := s.rest("groq/llama-3.3-70b-versatile"); !ok {
				t.Error("the route whose stream broke does not rest")
			}
		})
	}
}

// TestStreamBreakNotContinued: where no route can continue, a broken
// stream ends, after the chunks it had sent and no finish, with a
// BrokenError naming the break; a continuation that fails does not
// replace the real error, and is logged as the next part.
func TestStreamBreakNotContinued(t *testing.T) {
	tests := []struct {
		name     string
		chain    string
		fails    bool // the continuing route fails with a 400 about the request
		wantText string
	}{
		{"no route can continue", "nocont", false, "stream ended before it finished"},
		{"the continuing route fails", "cont", true, "stream ended before it finished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStackWith(t, stackOptions{providers: emutest.LimitedProviders, chains: streamChains})
			s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 3})
			if tt.fails {
				s.emu.Script("groq", "llama-3.1-8b-instant", emulator.Step{Kind: emulator.BadRequest, Text: "max_tokens must be at most 8192"})
			}
			got, err := s.stream(tt.chain, streamRequest(true))
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			var be *BrokenError
			if !errors.As(got.err, &be) || be.Route != "groq/llama-3.3-70b-versatile" || be.Class != failure.Overloaded || be.Message != tt.wantText || be.Deadline {
				t.Fatalf("the stream ended with %#v, want a BrokenError: groq/llama-3.3-70b-versatile, overloaded, %q", got.err, tt.wantText)
			}
			want := emutest.Chunks(emutest.Words(emutest.Answer("groq/llama-3.3-70b-versatile"))[:3], false)
			if ok, diff := sameChunks(got.chunks, want[:3]); !ok {
				t.Fatalf("chunks differ: %s", diff)
			}
			atts := s.recs.forRequest(got.id)
			if tt.fails {
				if len(atts) != 2 || atts[1].Part != 1 || atts[1].Class.String() != "bad_request" || atts[1].Method != "prefix" {
					t.Errorf("attempts %+v, want the failed prefix continuation logged as part 1", atts)
				}
				if _, ok := s.rest("groq/llama-3.1-8b-instant"); ok {
					t.Error("a continuation refused for the request rests its route")
				}
			}
		})
	}
}

// TestStreamReasoning: reasoning deltas come through as reasoning, and
// <think>…</think> text in the content is moved to the reasoning, also
// when the tags are split across chunks (three bytes a chunk here): no tag
// is left, and there is one finish. Passing the reasoning on or dropping
// it, per chain, is the HTTP API's (httpapi's TestStreamReasoning).
func TestStreamReasoning(t *testing.T) {
	const text = "<think>Two and two.</think>\n\nThe answer is 4 😀."
	for _, chain := range []string{"think", "quiet"} {
		t.Run(chain, func(t *testing.T) {
			s := newStack(t, streamChains)
			s.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: text, Reasoning: "first, then ", ChunkBytes: 3})
			got, err := s.stream(chain, streamRequest(false))
			if err != nil || got.err != nil {
				t.Fatalf("stream: %v, ended with %v", err, got.err)
			}
			for _, c := range got.chunks {
				if strings.Contains(c.Content+c.Reasoning, "think>") || strings.Contains(c.Content+c.Reasoning, "<think") {
					t.Errorf("a think tag came through: %+v", c)
				}
			}
			if got.text() != "The answer is 4 😀." || got.reasoning() != "first, then Two and two." {
				t.Errorf("content %q, reasoning %q; want %q and %q", got.text(), got.reasoning(), "The answer is 4 😀.", "first, then Two and two.")
			}
			if strings.Join(got.finishes(), ",") != "stop" {
				t.Errorf("finish reasons %v, want one stop", got.finishes())
			}
		})
	}
}

// TestStreamReasoningRouteWaitsLonger: a thinking route without a timeout
// of its own waits three times the chain's attempt timeout for its first
// token (8s here: 24s), where another route would have failed over.
func TestStreamReasoningRouteWaitsLonger(t *testing.T) {
	s := newStack(t, streamChains)
	s.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Delay: 20 * time.Second})
	type result struct {
		got streamed
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := s.stream("quiet", streamRequest(false))
		done <- result{got, err}
	}()
	s.waitCalls("groq", "openai/gpt-oss-120b", 1)
	s.clk.Advance(8 * time.Second)
	select {
	case r := <-done:
		t.Fatalf("8s: the stream already ended: %+v, %v", r.got, r.err)
	default:
	}
	if n := s.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 0 {
		t.Fatalf("failed over after the chain's 8s: %d calls to the next route", n)
	}
	s.clk.Advance(12 * time.Second)
	r := <-done
	if r.err != nil || r.got.route != "groq/openai/gpt-oss-120b" || r.got.text() != emutest.Answer("groq/openai/gpt-oss-120b") {
		t.Fatalf("route %q, content %q, err %v", r.got.route, r.got.text(), r.err)
	}
}

// TestStreamEmptyAnswerFailsOver (issue 10, item 7): a stream that sends
// its role, a finish_reason and [DONE] with no content is an empty answer,
// not a finished one: the caller gets the next route's answer, and the
// empty route rests 30 s. A whole (non-streamed) empty answer is treated
// alike. (That the cache never keeps the empty answer: the end-to-end
// TestEmptyAnswerNeverCached.)
func TestStreamEmptyAnswerFailsOver(t *testing.T) {
	const empty, next = "groq/llama-3.3-70b-versatile", "cerebras/gpt-oss-120b"
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			s := newStack(t, streamChains)
			s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Empty})
			var id string
			if stream {
				got, err := s.stream("nocont", streamRequest(false))
				if err != nil || got.err != nil || got.route != next {
					t.Fatalf("stream: %v, ended with %v, from %q; want %s's answer", err, got.err, got.route, next)
				}
				if ok, diff := sameChunks(got.chunks, emutest.Chunks(emutest.Words(emutest.Answer(next)), false)); !ok {
					t.Fatalf("chunks differ: %s", diff)
				}
				id = got.id
			} else {
				got := s.ask("nocont")
				if got.err != nil || got.content() != emutest.Answer(next) {
					t.Fatalf("got %v, want %s's answer", got, next)
				}
				id = got.id
			}
			var classes []string
			for _, a := range s.recs.forRequest(id) {
				classes = append(classes, a.Route+" "+a.Class.String())
			}
			if got, want := strings.Join(classes, ", "), empty+" empty, "+next+" ok"; got != want {
				t.Errorf("attempts: %s, want %s", got, want)
			}
			if r, ok := s.rest(empty); !ok || r.Class != "empty" || !r.Until.Equal(t0.Add(30*time.Second)) {
				t.Errorf("rest = %+v (found %v), want empty until t0+30s", r, ok)
			}
		})
	}
}

// TestStreamReasoningOnlyIsEmpty: reasoning is a first token, but a stream
// that ends with reasoning and no content is empty: the route rests, and
// the request is answered afresh by the next route (there is no answer
// text to continue, so any route will do); where no route is left, the
// stream ends with a BrokenError of class empty (which the HTTP API sends
// as an error event, never [DONE]).
func TestStreamReasoningOnlyIsEmpty(t *testing.T) {
	t.Run("the next route answers", func(t *testing.T) {
		s := newStack(t, streamChains)
		s.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Empty, Reasoning: "let me think "})
		got, err := s.stream("think", streamRequest(false))
		const next = "groq/llama-3.3-70b-versatile"
		if err != nil || got.err != nil || got.text() != emutest.Answer(next) || got.reasoning() != "let me think " || strings.Join(got.finishes(), ",") != "stop" {
			t.Fatalf("stream: %v, ended with %v: content %q, reasoning %q, finishes %v", err, got.err, got.text(), got.reasoning(), got.finishes())
		}
		var parts []string
		for _, a := range s.recs.forRequest(got.id) {
			parts = append(parts, fmt.Sprintf("%s %s part %d", a.Route, a.Class, a.Part))
		}
		if got, want := strings.Join(parts, ", "), "groq/openai/gpt-oss-120b empty part 0, "+next+" ok part 1"; got != want {
			t.Errorf("attempts: %s, want %s", got, want)
		}
		if r, ok := s.rest("groq/openai/gpt-oss-120b"); !ok || r.Class != "empty" {
			t.Errorf("rest = %+v (found %v), want an empty rest", r, ok)
		}
	})
	t.Run("no route is left", func(t *testing.T) {
		s := newStack(t, streamChains)
		s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Empty, Reasoning: "let me think "})
		got, err := s.stream("single", streamRequest(false))
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		var be *BrokenError
		if !errors.As(got.err, &be) || be.Class != failure.Empty || len(got.finishes()) != 0 {
			t.Fatalf("the stream ended with %v after finishes %v, want a BrokenError of class empty and no finish", got.err, got.finishes())
		}
		if r, ok := s.rest("groq/llama-3.3-70b-versatile"); !ok || r.Class != "empty" {
			t.Errorf("rest = %+v (found %v), want an empty rest", r, ok)
		}
	})
}
