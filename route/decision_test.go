package route

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/failure"
)

// ownThinkingProviders is emutest.Providers with a thinking level of the
// route's own on gemini-2.5-flash, which a 2.5 model refuses: the decision
// table's "bad config" (a setting the caller did not send).
const ownThinkingProviders = `
providers:
  groq:     {preset: groq,     base_url: EMU/groq/v1,       api_key: ${GROQ_API_KEY}}
  gemini:
    preset: gemini
    base_url: EMU/gemini/v1beta
    api_key: ${GEMINI_API_KEY}
    models:
      gemini-2.5-flash: {extra: {thinkingConfig: {thinkingLevel: LOW}}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`

const answerChain = emutest.AnswerChain

// TestDecisionTable drives every row of docs/DECISIONS.md's decision table through
// the router: the first route fails as scripted, and the test checks which
// route answered, what the caller got, and what rests, until when. (How
// the HTTP API answers each ending, a route's answer or a CallerError of a
// class, with the route and the request id in its headers, is httpapi's
// TestServerOnlyEncodes.)
func TestDecisionTable(t *testing.T) {
	tests := []struct {
		name      string
		chain     string
		provider  string // the failing first route
		model     string
		step      emulator.Step
		wantErr   failure.Class // the class of the CallerError the caller gets (failure.OK: an answer)
		wantRoute string        // the route that answered ("" when the caller gets an error)
		restKey   string        // "" when nothing may rest
		restClass string
		restFor   time.Duration // from t0
		restUntil time.Time     // when set, instead of restFor
		notCalled []string      // provider/model that must not have been called
		providers string        // the providers block, when not emutest.Providers
	}{
		{name: "ok", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Answer},
			wantRoute: "groq/llama-3.3-70b-versatile", notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "empty", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Empty},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "empty", restFor: 30 * time.Second},
		{name: "malformed body", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Malformed},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "empty", restFor: 30 * time.Second},
		{name: "rate per minute, short retry-after clamped to 20s", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.RateMinute, RetryAfter: 10 * time.Second},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "rate_minute", restFor: 20 * time.Second},
		{name: "rate per minute, retry-after kept", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.RateMinute, RetryAfter: 90 * time.Second},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "rate_minute", restFor: 90 * time.Second},
		{name: "rate per minute, long retry-after clamped to 5m", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.RateMinute, RetryAfter: 7 * time.Minute},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "rate_minute", restFor: 5 * time.Minute},
		{name: "rate per day, Groq names the wait", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.RateDay, RetryAfter: 3 * time.Hour},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "rate_day", restFor: 3 * time.Hour},
		{name: "rate per day, Gemini rests until midnight Pacific despite a short retryDelay", chain: "gem", provider: "gemini", model: "gemini-2.5-flash", step: emulator.Step{Kind: emulator.RateDay},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "gemini/gemini-2.5-flash", restClass: "rate_day", restUntil: emutest.LAMidnight},
		{name: "auth 401 rests the whole provider", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Unauthorized},
			wantRoute: "gemini/gemini-2.5-flash-lite", restKey: "provider:groq", restClass: "auth", restFor: time.Hour,
			notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "auth 403 rests the whole provider", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Forbidden},
			wantRoute: "gemini/gemini-2.5-flash-lite", restKey: "provider:groq", restClass: "auth", restFor: time.Hour,
			notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "Gemini's bad key is a 400 and still auth", chain: "gem", provider: "gemini", model: "gemini-2.5-flash", step: emulator.Step{Kind: emulator.Unauthorized},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "provider:gemini", restClass: "auth", restFor: time.Hour},
		{name: "gone 404", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.NotFound},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "gone", restFor: 6 * time.Hour},
		{name: "gone decommissioned", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Decommissioned},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "gone", restFor: 6 * time.Hour},
		// The route's own thinking level (its extra), which the emulated 2.5
		// model refuses as Gemini does; the step would say the same.
		{name: "bad config: a thinking level the model refuses", chain: "gem", provider: "gemini", model: "gemini-2.5-flash", step: emulator.Step{Kind: emulator.BadThinking},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "gemini/gemini-2.5-flash", restClass: "bad_config", restFor: 6 * time.Hour,
			providers: ownThinkingProviders},
		{name: "bad request goes back to the caller", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.BadRequest, Text: "'temperature' must be at most 2"},
			wantErr: failure.BadRequest, notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "refused goes back to the caller", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Refused},
			wantErr: failure.Refused, notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "Gemini's refusal (200 with blockReason) goes back to the caller", chain: "gem", provider: "gemini", model: "gemini-2.5-flash", step: emulator.Step{Kind: emulator.Refused},
			wantErr: failure.Refused, notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "too large 413 skips the route for this request only", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.TooLarge},
			wantRoute: "groq/llama-3.1-8b-instant"},
		{name: "context length 400 skips the route for this request only", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.ContextLength},
			wantRoute: "groq/llama-3.1-8b-instant"},
		{name: "overloaded 503", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.HighDemand},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "overloaded", restFor: 30 * time.Second},
		{name: "Gemini high demand", chain: "gem", provider: "gemini", model: "gemini-2.5-flash", step: emulator.Step{Kind: emulator.HighDemand},
			wantRoute: "groq/llama-3.1-8b-instant", restKey: "gemini/gemini-2.5-flash", restClass: "overloaded", restFor: 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStackWith(t, stackOptions{providers: tt.providers, chains: answerChain})
			s.emu.Script(tt.provider, tt.model, tt.step)
			got := s.ask(tt.chain)
			if tt.wantErr == failure.OK && got.err != nil {
				t.Fatalf("got %v, want an answer", got)
			}
			if tt.wantErr != failure.OK {
				var ce *CallerError
				if !errors.As(got.err, &ce) || ce.Class != tt.wantErr {
					t.Fatalf("got %v, want a CallerError of class %s", got, tt.wantErr)
				}
			}
			if tt.wantRoute != "" {
				if r := got.route(); r != tt.wantRoute {
					t.Errorf("answered by %v, want %s", r, tt.wantRoute)
				}
				if c := got.content(); c == "" {
					t.Errorf("empty answer content")
				}
			}
			for _, nc := range tt.notCalled {
				p, m, _ := strings.Cut(nc, "/")
				if n := s.emu.Calls(p, m); n != 0 {
					t.Errorf("%s was called %d times, want 0", nc, n)
				}
			}
			// What rests: exactly the expected key, or nothing at all.
			rests := s.rests()
			if tt.restKey == "" {
				if len(rests) != 0 {
					t.Fatalf("rests = %+v, want none", rests)
				}
			} else {
				if len(rests) != 1 || rests[0].Key != tt.restKey {
					t.Fatalf("rests = %+v, want one on %s", rests, tt.restKey)
				}
				want := tt.restUntil
				if want.IsZero() {
					want = t0.Add(tt.restFor)
				}
				if !rests[0].Until.Equal(want) || rests[0].Class != tt.restClass {
					t.Errorf("rest = %s until %s, want %s until %s", rests[0].Class, rests[0].Until, tt.restClass, want)
				}
			}
			// The request id leads to the call log's lines.
			if n := len(s.recs.forRequest(got.id)); n == 0 {
				t.Errorf("no attempt recorded under %s", got.id)
			}
			if tt.restKey == "" || tt.wantErr != failure.OK {
				return
			}
			// A resting route is not called again until its rest ends.
			p, m := tt.provider, tt.model
			before := s.emu.Calls(p, m)
			if r := s.ask(tt.chain); r.err != nil {
				t.Fatalf("second request: %v", r)
			}
			if n := s.emu.Calls(p, m); n != before {
				t.Errorf("resting route called during its rest: %d calls, want %d", n, before)
			}
			rest, _ := s.rest(tt.restKey)
			s.clk.Set(rest.Until)
			if r := s.ask(tt.chain); r.err != nil {
				t.Fatalf("after the rest: %v", r)
			}
			if n := s.emu.Calls(p, m); n != before+1 {
				t.Errorf("after its rest the route got %d calls, want %d", n, before+1)
			}
		})
	}
}

// TestTooLargeDoesNotRest: a prompt too large for one route goes to the
// next, and the first route is tried again on the next request.
func TestTooLargeDoesNotRest(t *testing.T) {
	s := newStack(t, answerChain)
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.TooLarge})
	if r := s.ask("answer"); r.route() != "groq/llama-3.1-8b-instant" {
		t.Fatalf("first request answered by %v", r)
	}
	if r := s.ask("answer"); r.route() != "groq/llama-3.3-70b-versatile" {
		t.Fatalf("second request answered by %v, want the first route again", r)
	}
}

// TestTimeoutRestsAndFailsOver: a route that hangs is cut at its attempt
// timeout (a fake clock moves), the next route answers, and the hung route
// rests 30 s.
func TestTimeoutRestsAndFailsOver(t *testing.T) {
	s := newStack(t, answerChain)
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	done := s.askAsync("answer")
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.clk.Advance(8 * time.Second)
	got := <-done
	if got.err != nil || got.route() != "groq/llama-3.1-8b-instant" {
		t.Fatalf("got %v", got)
	}
	rest, ok := s.rest("groq/llama-3.3-70b-versatile")
	if !ok || rest.Class != "timeout" || !rest.Until.Equal(t0.Add(8*time.Second+30*time.Second)) {
		t.Fatalf("rest = %+v (found %v), want timeout until t0+38s", rest, ok)
	}
}

// TestCallerGoneRestsNothing: a caller that hangs up while a route is
// silent rests nothing; the attempt is logged as cancelled.
func TestCallerGoneRestsNothing(t *testing.T) {
	s := newStack(t, answerChain)
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan answer, 1)
	go func() { done <- s.chat(ctx, "answer", question("hi")) }()
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	cancel()
	if got := <-done; !errors.Is(got.err, context.Canceled) {
		t.Errorf("got %v, want the caller's cancellation", got)
	}
	// Once Chat has returned, Close waits for the attempt it wound down.
	s.r.Close()
	var found bool
	for _, a := range s.recs.all() {
		if a.Route == "groq/llama-3.3-70b-versatile" && a.Class.String() == "cancelled" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no cancelled attempt recorded: %+v", s.recs.all())
	}
	if rs := s.rests(); len(rs) != 0 {
		t.Fatalf("rests = %+v, want none", rs)
	}
	if n := s.emu.Calls("groq", "llama-3.1-8b-instant"); n != 0 {
		t.Errorf("the next route was called %d times after the caller left", n)
	}
}
