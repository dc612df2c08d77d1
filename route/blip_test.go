package route

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/failure"
)

// blipChains are the chains of the blip tests, with the defaults for
// retrying a blip: on, and a 429's wait retried up to 5 s.
const blipChains = `
chains:
  answer:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
  gem:
    routes: [gemini/gemini-2.5-flash, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
  or:
    routes: [openrouter/openai/gpt-oss-120b:free, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
  hedged:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
    hedge_delay: 1s
  off:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
    retry_blips: false
`

// blipWait bounds the real time a test waits for something that needs no
// move of the fake clock (an answer after a failover at once): a hang is a
// failure, not a slow pass.
const blipWait = 10 * time.Second

// within returns the answer on ch, or fails the test when none arrives
// within blipWait of real time while the fake clock stands still.
func within(t *testing.T, ch <-chan answer, what string) answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(blipWait):
		t.Fatalf("%s: no answer while the clock stood still", what)
		return answer{}
	}
}

// blockUntilAt waits until the code under test waits on a timer due at at.
func (s *stack) blockUntilAt(at time.Time) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), blipWait)
	defer cancel()
	if err := s.clk.BlockUntilDeadline(ctx, at); err != nil {
		s.t.Fatalf("no timer due at %s: %v", at.Sub(t0), err)
	}
}

// TestBlipRetriedOnSameRoute: a bare 500 (a 502 from OpenRouter) is
// retried at once on the same route, which answers; the next route is not
// called, nothing rests, and the call log has the blip and the retry,
// marked as such. The same holds for a stream before its first token.
func TestBlipRetriedOnSameRoute(t *testing.T) {
	for _, tt := range []struct {
		name, chain, provider, model string
	}{
		{"groq 500", "answer", "groq", "llama-3.3-70b-versatile"},
		{"gemini 500 INTERNAL", "gem", "gemini", "gemini-2.5-flash"},
		{"openrouter 502", "or", "openrouter", "openai/gpt-oss-120b:free"},
	} {
		for _, stream := range []bool{false, true} {
			name := tt.name
			if stream {
				name += " stream"
			}
			t.Run(name, func(t *testing.T) {
				s := newStack(t, blipChains)
				s.emu.Script(tt.provider, tt.model, emulator.Step{Kind: emulator.ServerError})
				route := tt.provider + "/" + tt.model
				id, got := "", ""
				if stream {
					out, err := s.stream(tt.chain, question(emutest.Question))
					if err != nil || out.err != nil {
						t.Fatalf("stream: %v %v", err, out.err)
					}
					id, got = out.id, out.route
					if out.text() != emutest.Answer(route) {
						t.Errorf("streamed %q, want %q", out.text(), emutest.Answer(route))
					}
				} else {
					a := s.ask(tt.chain)
					if a.err != nil {
						t.Fatalf("got %v", a)
					}
					id, got = a.id, a.route()
					if a.content() != emutest.Answer(route) {
						t.Errorf("answered %q, want %q", a.content(), emutest.Answer(route))
					}
				}
				if got != route {
					t.Errorf("answered by %s, want %s (the retry)", got, route)
				}
				if n := s.emu.Calls(tt.provider, tt.model); n != 2 {
					t.Errorf("%s called %d times, want 2", route, n)
				}
				if n := s.emu.Calls("groq", "llama-3.1-8b-instant"); n != 0 {
					t.Errorf("the next route was called %d times, want 0", n)
				}
				s.noRests()
				atts := s.recs.forRequest(id)
				if len(atts) != 2 {
					t.Fatalf("attempts = %+v, want the blip and its retry", atts)
				}
				if a := atts[0]; a.Route != route || a.Class.String() != "overloaded" || a.Retry || !a.RestUntil.IsZero() {
					t.Errorf("first attempt = %+v, want %s overloaded, no retry, no rest", a, route)
				}
				if a := atts[1]; a.Route != route || a.Class.String() != "ok" || !a.Retry || a.Stream != stream {
					t.Errorf("second attempt = %+v, want %s ok, marked as the retry", a, route)
				}
			})
		}
	}
}

// TestBlip429WaitsTheAskedWait: a 429 asking 2 s is retried on the same
// route, never sooner than 2 s on the router's clock; the request waits
// for the clock, and the route answers. The same holds for a stream.
func TestBlip429WaitsTheAskedWait(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "chat"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			s := newStack(t, blipChains)
			s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 2 * time.Second})
			done := make(chan answer, 1)
			id := s.nextID()
			go func() {
				a := answer{id: id}
				if stream {
					rs, err := s.r.Stream(context.Background(), s.chain("answer"), id, question(emutest.Question))
					if err == nil {
						out := drain(id, rs)
						a.err = out.err
						a.res = &Result{Route: rs.Route}
					} else {
						a.err = err
					}
				} else {
					a.res, a.err = s.r.Chat(context.Background(), s.chain("answer"), id, question(emutest.Question))
				}
				done <- a
			}()
			s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
			s.blockUntilAt(t0.Add(2 * time.Second))
			s.clk.Advance(2*time.Second - time.Millisecond)
			noAnswer(t, done, "1.999 s")
			if n := s.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 1 {
				t.Fatalf("retried before the asked wait: %d calls", n)
			}
			s.clk.Advance(time.Millisecond)
			got := within(t, done, "after the wait")
			if got.err != nil || got.route() != "groq/llama-3.3-70b-versatile" {
				t.Fatalf("got %v, want the first route's answer", got)
			}
			var times []time.Time
			for _, r := range s.emu.Records() {
				if r.Model == "llama-3.3-70b-versatile" {
					times = append(times, r.Time)
				}
			}
			if len(times) != 2 || times[1].Sub(times[0]) < 2*time.Second {
				t.Errorf("calls of the route at %v, want two, 2 s or more apart", times)
			}
			if n := s.emu.Calls("groq", "llama-3.1-8b-instant"); n != 0 {
				t.Errorf("the next route was called %d times, want 0", n)
			}
			s.noRests()
			if atts := s.recs.forRequest(id); len(atts) != 2 || atts[0].Class.String() != "rate_minute" || !atts[1].Retry {
				t.Errorf("attempts = %+v, want a rate_minute and its retry", atts)
			}
		})
	}
}

// TestNoBlip: what is no blip fails over at once, as its class says: a
// 429 asking more than blip_wait (40 s), a 503 "high demand", a second
// 500 on the retry, and any 500 on a chain with retry_blips: false.
func TestNoBlip(t *testing.T) {
	const first, next = "groq/llama-3.3-70b-versatile", "groq/llama-3.1-8b-instant"
	for _, tt := range []struct {
		name      string
		chain     string
		steps     []emulator.Step
		calls     int // of the first route
		restClass string
		restFor   time.Duration
	}{
		{"429 asking 40s", "answer", []emulator.Step{{Kind: emulator.RateMinute, RetryAfter: 40 * time.Second}}, 1, "rate_minute", 40 * time.Second},
		{"503 high demand", "answer", []emulator.Step{{Kind: emulator.HighDemand}}, 1, "overloaded", 30 * time.Second},
		{"a second 500 on the retry", "answer", []emulator.Step{{Kind: emulator.ServerError}, {Kind: emulator.ServerError}}, 2, "overloaded", 30 * time.Second},
		{"retry_blips: false", "off", []emulator.Step{{Kind: emulator.ServerError}}, 1, "overloaded", 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t, blipChains)
			s.emu.Script("groq", "llama-3.3-70b-versatile", tt.steps...)
			got := within(t, s.askAsync(tt.chain), tt.name)
			if got.err != nil || got.route() != next {
				t.Fatalf("got %v, want %s's answer", got, next)
			}
			if n := s.emu.Calls("groq", "llama-3.3-70b-versatile"); n != tt.calls {
				t.Errorf("%s called %d times, want %d", first, n, tt.calls)
			}
			rest, ok := s.rest(first)
			if !ok || rest.Class != tt.restClass || !rest.Until.Equal(t0.Add(tt.restFor)) {
				t.Errorf("rest = %+v (found %v), want %s until t0+%s", rest, ok, tt.restClass, tt.restFor)
			}
			atts := s.recs.forRequest(got.id)
			if len(atts) != tt.calls+1 {
				t.Fatalf("attempts = %+v, want %d", atts, tt.calls+1)
			}
			if retried := atts[len(atts)-2]; retried.Retry != (tt.calls == 2) || retried.RestUntil.IsZero() {
				t.Errorf("last failed attempt = %+v, want retry %v, with its rest", retried, tt.calls == 2)
			}
		})
	}
}

// TestBlipRetryIsPicked: the retry goes through pick like any launch: a
// route whose budget the blip spent is not called again, and the walk
// fails over; the blip rests nothing.
func TestBlipRetryIsPicked(t *testing.T) {
	s := newStackWith(t, stackOptions{chains: blipChains, providers: `
providers:
  groq:
    preset: groq
    base_url: EMU/groq/v1
    api_key: ${GROQ_API_KEY}
    models:
      llama-3.3-70b-versatile: {rpm: 1}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`})
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.ServerError})
	got := within(t, s.askAsync("answer"), "a spent budget")
	if got.err != nil || got.route() != "groq/llama-3.1-8b-instant" {
		t.Fatalf("got %v, want the next route's answer", got)
	}
	if n := s.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 1 {
		t.Errorf("the spent route was called %d times, want 1", n)
	}
	s.noRests()
}

// TestBlipWaitEndsWithTheCaller: a caller that goes away while a retry
// waits ends the walk at once, without the retry, and leaves no timer
// behind; nothing rests.
func TestBlipWaitEndsWithTheCaller(t *testing.T) {
	s := newStack(t, blipChains)
	// The store's flusher waits on a timer of its own.
	ctx0, cancel0 := context.WithTimeout(context.Background(), blipWait)
	defer cancel0()
	if err := s.clk.BlockUntil(ctx0, 1); err != nil {
		t.Fatal(err)
	}
	before := s.clk.Waiters()
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 3 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan answer, 1)
	go func() { done <- s.chat(ctx, "answer", question(emutest.Question)) }()
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.blockUntilAt(t0.Add(3 * time.Second))
	cancel()
	got := within(t, done, "the caller gone")
	if !errors.Is(got.err, context.Canceled) {
		t.Fatalf("got %v, want the caller's cancellation", got)
	}
	if n := s.clk.Waiters(); n != before {
		t.Errorf("%d timers pending after the walk ended, want %d as before it", n, before)
	}
	s.clk.Advance(3 * time.Second)
	if s.callsReach("groq", "llama-3.3-70b-versatile", 2) {
		t.Errorf("the route was retried for a caller that had gone")
	}
	s.noRests()
}

// TestNoHedgeDuringBlipWait: while a retry waits, no hedge starts (nothing
// is silent; the retry is the next launch), even past the hedge delay;
// the retry answers.
func TestNoHedgeDuringBlipWait(t *testing.T) {
	s := newStack(t, blipChains)
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 2 * time.Second})
	done := s.askAsync("hedged")
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.blockUntilAt(t0.Add(2 * time.Second))
	s.clk.Advance(1500 * time.Millisecond) // past the hedge delay of 1 s
	if s.callsReach("groq", "llama-3.1-8b-instant", 1) {
		t.Fatalf("a hedge started while the retry waited")
	}
	s.clk.Advance(500 * time.Millisecond)
	got := within(t, done, "after the wait")
	if got.err != nil || got.route() != "groq/llama-3.3-70b-versatile" {
		t.Fatalf("got %v, want the retry's answer", got)
	}
}

// TestWhatIsABlip sorts failures as the walk does: a bare 500 or 502 and
// a short per-minute 429 that fits the deadline are blips; a body naming
// an overload, a 503, a 504, a 429 asking no wait, a daily 429, and a wait
// past blip_wait or the deadline are not.
func TestWhatIsABlip(t *testing.T) {
	s := newStack(t, blipChains)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	const bare = `{"error":{"message":"The server had an error processing your request.","type":"server_error"}}`
	for _, tt := range []struct {
		name     string
		status   int
		header   http.Header
		body     string
		deadline time.Duration // from now; default the chain's
		want     bool
		wait     time.Duration
	}{
		{name: "bare 500", status: 500, body: bare, want: true},
		{name: "bare 502", status: 502, body: `{"error":{"message":"Network connection lost.","code":502}}`, want: true},
		{name: "500 naming an overload", status: 500, body: `{"error":{"message":"The server is overloaded. Please try again later.","type":"server_error"}}`},
		{name: "502 naming capacity", status: 502, body: `{"error":{"message":"No capacity for this model right now","code":502}}`},
		{name: "503", status: 503, body: bare},
		{name: "504", status: 504, body: bare},
		{name: "429 asking 2s", status: 429, header: hdr("Retry-After", "2"), body: `{"error":{"message":"Rate limit exceeded"}}`, want: true, wait: 2 * time.Second},
		{name: "429 asking 2.5s in its body", status: 429, body: `{"error":{"message":"Rate limit reached for requests per minute (RPM). Please try again in 2.5s."}}`, want: true, wait: 2500 * time.Millisecond},
		{name: "429 asking no wait", status: 429, body: `{"error":{"message":"Rate limit exceeded"}}`},
		{name: "429 per day asking 2s", status: 429, header: hdr("Retry-After", "2"), body: `{"error":{"message":"Rate limit reached for requests per day (RPD)"}}`},
		{name: "429 asking past blip_wait", status: 429, header: hdr("Retry-After", "6"), body: `{"error":{"message":"Rate limit exceeded"}}`},
		{name: "429 asking past the deadline", status: 429, header: hdr("Retry-After", "3"), body: `{"error":{"message":"Rate limit exceeded"}}`, deadline: 3 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := s.r.walkOn(context.Background(), s.chain("answer"), "req", question(emutest.Question), false)
			if tt.deadline > 0 {
				w.deadline = s.clk.Now().Add(tt.deadline)
			}
			err := &failure.UpstreamError{Provider: "groq", Flavor: "groq", Status: tt.status, Header: tt.header, Body: []byte(tt.body)}
			o := &outcome{route: w.order[0], ctx: context.Background(), err: err}
			wait, ok := w.blipWait(o, failure.Classify(err, s.clk.Now()))
			if ok != tt.want || ok && wait != tt.wait {
				t.Errorf("blip %v after %s, want %v after %s", ok, wait, tt.want, tt.wait)
			}
		})
	}
}
