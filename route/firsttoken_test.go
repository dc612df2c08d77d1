package route

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
)

// The first-token timeout (issue 13, item 3): a stream waits for its first
// token no longer than the chain's first_token_timeout (10 s by default),
// three times that on a thinking route, a reasoning delta counting as a
// first token; a continuation waits as long for its first chunk; a whole
// answer still has the attempt timeout. The chains set nothing: defaults
// only.
const firstTokenChains = `
chains:
  plain:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
  thinking:
    routes: [groq/openai/gpt-oss-120b, groq/llama-3.1-8b-instant]
`

// laterStream is a stream read to its end on another goroutine.
type laterStream struct {
	got streamed
	err error
}

// streamLater streams the tests' question on chain in a goroutine.
func (s *stack) streamLater(chain string) <-chan laterStream {
	done := make(chan laterStream, 1)
	go func() {
		got, err := s.stream(chain, streamRequest(false))
		done <- laterStream{got, err}
	}()
	return done
}

// timerDue waits until a timer of the clock is due at t0+at: the code under
// test has reached that wait.
func (s *stack) timerDue(at time.Duration) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.clk.BlockUntilDeadline(ctx, t0.Add(at)); err != nil {
		s.t.Fatalf("nothing waits until %s: %v", at, err)
	}
}

// failedOverAt checks that the request on chain, whose first route is slow,
// has called next by the time the clock shows at; if not, it lets the slow
// route answer (so that nothing is left waiting on the clock) and fails.
func (s *stack) failedOverAt(at time.Duration, next string) {
	s.t.Helper()
	s.clk.Set(t0.Add(at))
	p, m, _ := strings.Cut(next, "/")
	if !s.callsReach(p, m, 1) {
		s.clk.Advance(10 * time.Minute)
		s.t.Fatalf("at %s the request had not failed over to %s", at, next)
	}
}

func TestFirstTokenTimeout(t *testing.T) {
	tests := []struct {
		name, chain, first string
		delay              time.Duration // the first route's time to its first token
		failover           time.Duration // when it fails over; 0: it answers
		waitsPast          time.Duration // a time it is still waited for at
	}{
		{"an ordinary route slower than 10s fails over at 10s", "plain", "groq/llama-3.3-70b-versatile", 20 * time.Second, 10 * time.Second, 9 * time.Second},
		{"an ordinary route under 10s answers", "plain", "groq/llama-3.3-70b-versatile", 9 * time.Second, 0, 0},
		{"a thinking route is waited for past 10s", "thinking", "groq/openai/gpt-oss-120b", 25 * time.Second, 0, 20 * time.Second},
		{"a thinking route slower than 30s fails over at 30s", "thinking", "groq/openai/gpt-oss-120b", 40 * time.Second, 30 * time.Second, 29 * time.Second},
	}
	const next = "groq/llama-3.1-8b-instant"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t, firstTokenChains)
			p, m, _ := strings.Cut(tt.first, "/")
			s.emu.Script(p, m, emulator.Step{Kind: emulator.Answer, Delay: tt.delay})
			done := s.streamLater(tt.chain)
			s.waitCalls(p, m, 1)
			s.timerDue(tt.delay) // the route's answer
			if tt.waitsPast > 0 {
				s.clk.Set(t0.Add(tt.waitsPast))
				if n := s.emu.Calls("groq", "llama-3.1-8b-instant"); n != 0 {
					t.Fatalf("at %s the request already failed over", tt.waitsPast)
				}
			}
			want := tt.first
			if tt.failover > 0 {
				s.failedOverAt(tt.failover, next)
				want = next
			} else {
				s.clk.Set(t0.Add(tt.delay))
			}
			r := <-done
			if r.err != nil || r.got.err != nil || r.got.route != want || r.got.text() != emutest.Answer(want) {
				t.Fatalf("stream from %q: %q, %v, %v; want %s's whole answer", r.got.route, r.got.text(), r.err, r.got.err, want)
			}
			if tt.failover == 0 {
				if _, ok := s.rest(tt.first); ok {
					t.Errorf("%s rests after answering", tt.first)
				}
				return
			}
			atts := s.recs.forRequest(r.got.id)
			wantErr := "no first token within " + tt.failover.String()
			if len(atts) != 2 || atts[0].Route != tt.first || atts[0].Class.String() != "timeout" || !strings.Contains(atts[0].Error, wantErr) ||
				atts[0].Latency != tt.failover {
				t.Errorf("attempts %+v; want %s logged as a timeout after %s (%q), then %s", atts, tt.first, tt.failover, wantErr, next)
			}
			if rest, ok := s.rest(tt.first); !ok || rest.Class != "timeout" {
				t.Errorf("rest on %s = %+v (%v), want a timeout rest", tt.first, rest, ok)
			}
		})
	}
}

// TestFirstTokenReasoningDeltaCounts: a route that thinks aloud first
// (a reasoning delta at 7 s) has given its first token, although its first
// word of answer comes at 21 s, past the 10 s first-token timeout: it is
// not failed over.
func TestFirstTokenReasoningDeltaCounts(t *testing.T) {
	const tick = 7 * time.Second
	const answer = "Tollfree keeps answering."
	s := newStack(t, firstTokenChains)
	s.emu.AddModel("groq", emulator.Model{ID: "llama-3.3-70b-versatile", ChunkDelay: tick, Answer: answer})
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Reasoning: "Thinking it over"})
	type opened struct {
		id  string
		rs  *RoutedStream
		err error
	}
	open := make(chan opened, 1)
	go func() {
		id, rs, err := s.openStream(context.Background(), "plain", streamRequest(false))
		open <- opened{id, rs, err}
	}()
	// The reasoning at 7, 14 and 21 s; the answer's words at 21, 28 and
	// 35 s; its finish at 42 s.
	s.timerDue(tick)
	s.clk.Set(t0.Add(tick))
	var o opened
	select {
	case o = <-open:
	case <-time.After(10 * time.Second): // a real bound: the stream opens on another goroutine
		s.clk.Advance(10 * time.Minute)
		t.Fatal("the first reasoning delta did not open the stream")
	}
	if o.err != nil {
		t.Fatalf("stream: %v", o.err)
	}
	// The test reads the stream itself, one chunk per tick once the clock
	// shows it: a reader on another goroutine can fall behind the clock,
	// and a stream left unread for 30 s of clock time looks silent (the
	// idle timeout), which is not what this test is about.
	got := streamed{id: o.id, route: o.rs.Route.ID}
	read := func() {
		t.Helper()
		for {
			c, err := o.rs.Next()
			if err != nil {
				t.Fatalf("stream broke after %q (reasoning %q): %v", got.text(), got.reasoning(), err)
			}
			if c.Content != "" || c.Reasoning != "" {
				got.chunks = append(got.chunks, c)
				return
			}
		}
	}
	read() // the first reasoning delta, held since the stream opened
	for at := 2 * tick; at <= 5*tick; at += tick {
		s.timerDue(at)
		s.clk.Set(t0.Add(at))
		read()
	}
	s.timerDue(6 * tick)
	s.clk.Set(t0.Add(6 * tick))
	rest := drain(o.id, o.rs)
	got.chunks, got.err = append(got.chunks, rest.chunks...), rest.err
	if got.err != nil || got.route != "groq/llama-3.3-70b-versatile" || got.text() != answer || got.reasoning() != "Thinking it over" {
		t.Fatalf("stream from %q: %q (reasoning %q), %v; want the thinking route's answer", got.route, got.text(), got.reasoning(), got.err)
	}
	if n := s.emu.Calls("groq", "llama-3.1-8b-instant"); n != 0 {
		t.Errorf("%d calls to the next route: the reasoning did not count as a first token", n)
	}
}

// TestFirstTokenNotForWholeAnswers: a whole (not streamed) answer still has
// the attempt timeout, 20 s by default: a route answering at 15 s is not
// failed over at 10 s.
func TestFirstTokenNotForWholeAnswers(t *testing.T) {
	s := newStack(t, firstTokenChains)
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Delay: 15 * time.Second})
	done := s.askAsync("plain")
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.timerDue(15 * time.Second)
	s.clk.Set(t0.Add(15 * time.Second))
	if a := <-done; a.err != nil || a.route() != "groq/llama-3.3-70b-versatile" {
		t.Fatalf("%v; want the first route's answer at 15s", a)
	}
	if n := s.emu.Calls("groq", "llama-3.1-8b-instant"); n != 0 {
		t.Errorf("%d calls to the next route", n)
	}
}

// TestFirstTokenContinuation: the continuation of a broken stream waits
// for its first chunk as long as a first attempt waits for its first
// token: a continuing route 20 s late is a timeout at 10 s, and the stream
// ends with the break, where it used to wait the whole attempt timeout.
func TestFirstTokenContinuation(t *testing.T) {
	const answer = "Tollfree keeps an AI feature answering on the free tiers of many providers."
	s := newStackWith(t, stackOptions{providers: emutest.Providers, chains: firstTokenChains})
	emutest.SameAnswer(s.emu, answer, "groq/llama-3.3-70b-versatile", "groq/llama-3.1-8b-instant")
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 3})
	s.emu.Script("groq", "llama-3.1-8b-instant", emulator.Step{Kind: emulator.Answer, Delay: 20 * time.Second})
	done := s.streamLater("plain")
	s.waitCalls("groq", "llama-3.1-8b-instant", 1)
	s.clk.Set(t0.Add(10 * time.Second))
	var r laterStream
	select {
	case r = <-done:
	case <-time.After(10 * time.Second): // a real bound: the stream ends on other goroutines
		s.clk.Advance(10 * time.Minute)
		t.Fatal("at 10s the stream still waits for its continuation")
	}
	var be *BrokenError
	if r.err != nil || !errors.As(r.got.err, &be) || be.Route != "groq/llama-3.3-70b-versatile" {
		t.Fatalf("stream: %v, ended with %v; want the first route's break", r.err, r.got.err)
	}
	atts := s.recs.forRequest(r.got.id)
	if len(atts) != 2 || atts[1].Route != "groq/llama-3.1-8b-instant" || atts[1].Part != 1 || atts[1].Class.String() != "timeout" ||
		!strings.Contains(atts[1].Error, "no first token within 10s") {
		t.Errorf("attempts %+v; want the continuation logged as a timeout at 10s", atts)
	}
}
