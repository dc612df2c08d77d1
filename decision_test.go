package tollfree_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// ownThinkingProviders is emulatedProviders with a thinking level of the
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

const answerChain = `
chains:
  answer:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant, gemini/gemini-2.5-flash-lite, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
  gem:
    routes: [gemini/gemini-2.5-flash, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
`

// TestDecisionTable drives every row of DESIGN.md's decision table through
// the real server: the first route fails as scripted, and the test checks
// which route answered, what the caller saw, and what rests, until when.
func TestDecisionTable(t *testing.T) {
	laMidnight := time.Date(2026, 6, 16, 7, 0, 0, 0, time.UTC) // 00:00 PDT after t0
	tests := []struct {
		name       string
		chain      string
		provider   string // the failing first route
		model      string
		step       emulator.Step
		wantStatus int
		wantRoute  string // the route that answered ("" when the caller gets an error)
		wantCode   string // the error code the caller sees
		restKey    string // "" when nothing may rest
		restClass  string
		restFor    time.Duration // from t0
		restUntil  time.Time     // when set, instead of restFor
		notCalled  []string      // provider/model that must not have been called
		providers  string        // the providers block, when not emulatedProviders
	}{
		{name: "ok", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Answer},
			wantStatus: 200, wantRoute: "groq/llama-3.3-70b-versatile", notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "empty", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Empty},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "empty", restFor: 30 * time.Second},
		{name: "malformed body", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Malformed},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "empty", restFor: 30 * time.Second},
		{name: "rate per minute, short retry-after clamped to 20s", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.RateMinute, RetryAfter: 2 * time.Second},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "rate_minute", restFor: 20 * time.Second},
		{name: "rate per minute, retry-after kept", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.RateMinute, RetryAfter: 90 * time.Second},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "rate_minute", restFor: 90 * time.Second},
		{name: "rate per minute, long retry-after clamped to 5m", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.RateMinute, RetryAfter: 7 * time.Minute},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "rate_minute", restFor: 5 * time.Minute},
		{name: "rate per day, Groq names the wait", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.RateDay, RetryAfter: 3 * time.Hour},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "rate_day", restFor: 3 * time.Hour},
		{name: "rate per day, Gemini rests until midnight Pacific despite a short retryDelay", chain: "gem", provider: "gemini", model: "gemini-2.5-flash", step: emulator.Step{Kind: emulator.RateDay},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "gemini/gemini-2.5-flash", restClass: "rate_day", restUntil: laMidnight},
		{name: "auth 401 rests the whole provider", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Unauthorized},
			wantStatus: 200, wantRoute: "gemini/gemini-2.5-flash-lite", restKey: "provider:groq", restClass: "auth", restFor: time.Hour,
			notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "auth 403 rests the whole provider", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Forbidden},
			wantStatus: 200, wantRoute: "gemini/gemini-2.5-flash-lite", restKey: "provider:groq", restClass: "auth", restFor: time.Hour,
			notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "Gemini's bad key is a 400 and still auth", chain: "gem", provider: "gemini", model: "gemini-2.5-flash", step: emulator.Step{Kind: emulator.Unauthorized},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "provider:gemini", restClass: "auth", restFor: time.Hour},
		{name: "gone 404", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.NotFound},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "gone", restFor: 6 * time.Hour},
		{name: "gone decommissioned", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Decommissioned},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "gone", restFor: 6 * time.Hour},
		// The route's own thinking level (its extra), which the emulated 2.5
		// model refuses as Gemini does; the step would say the same.
		{name: "bad config: a thinking level the model refuses", chain: "gem", provider: "gemini", model: "gemini-2.5-flash", step: emulator.Step{Kind: emulator.BadThinking},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "gemini/gemini-2.5-flash", restClass: "bad_config", restFor: 6 * time.Hour,
			providers: ownThinkingProviders},
		{name: "bad request goes back to the caller", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.BadRequest, Text: "'temperature' must be at most 2"},
			wantStatus: 400, wantCode: "bad_request", notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "refused goes back to the caller", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.Refused},
			wantStatus: 400, wantCode: "content_filter", notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "Gemini's refusal (200 with blockReason) goes back to the caller", chain: "gem", provider: "gemini", model: "gemini-2.5-flash", step: emulator.Step{Kind: emulator.Refused},
			wantStatus: 400, wantCode: "content_filter", notCalled: []string{"groq/llama-3.1-8b-instant"}},
		{name: "too large 413 skips the route for this request only", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.TooLarge},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant"},
		{name: "context length 400 skips the route for this request only", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.ContextLength},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant"},
		{name: "overloaded 503", chain: "answer", provider: "groq", model: "llama-3.3-70b-versatile", step: emulator.Step{Kind: emulator.HighDemand},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "groq/llama-3.3-70b-versatile", restClass: "overloaded", restFor: 30 * time.Second},
		{name: "Gemini high demand", chain: "gem", provider: "gemini", model: "gemini-2.5-flash", step: emulator.Step{Kind: emulator.HighDemand},
			wantStatus: 200, wantRoute: "groq/llama-3.1-8b-instant", restKey: "gemini/gemini-2.5-flash", restClass: "overloaded", restFor: 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := harnessOf(t, startStackWith(t, stackOptions{providers: tt.providers, config: answerChain}))
			h.emu.Script(tt.provider, tt.model, tt.step)
			got := h.ask(tt.chain)
			if got.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", got.status, tt.wantStatus, got.body)
			}
			if tt.wantRoute != "" {
				if m := got.json(t)["model"]; m != tt.wantRoute {
					t.Errorf("answered by %v, want %s", m, tt.wantRoute)
				}
				if r := got.header.Get("X-Tollfree-Route"); r != tt.wantRoute {
					t.Errorf("X-Tollfree-Route = %q, want %q", r, tt.wantRoute)
				}
				if c := got.content(t); c == "" {
					t.Errorf("empty answer content")
				}
			}
			if tt.wantCode != "" {
				if c := got.errorCode(t); c != tt.wantCode {
					t.Errorf("error code = %q, want %q; body %s", c, tt.wantCode, got.body)
				}
			}
			for _, nc := range tt.notCalled {
				p, m, _ := strings.Cut(nc, "/")
				if n := h.emu.Calls(p, m); n != 0 {
					t.Errorf("%s was called %d times, want 0", nc, n)
				}
			}
			// What rests: exactly the expected key, or nothing at all.
			rests, err := h.store.Rests(context.Background(), h.clk.Now())
			if err != nil {
				t.Fatal(err)
			}
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
			id := got.header.Get("X-Request-Id")
			if id == "" {
				t.Fatal("no X-Request-Id")
			}
			if n := len(h.recs.forRequest(id)); n == 0 {
				t.Errorf("no attempt recorded under %s", id)
			}
			if tt.restKey == "" || tt.wantStatus != 200 {
				return
			}
			// A resting route is not called again until its rest ends.
			p, m := tt.provider, tt.model
			before := h.emu.Calls(p, m)
			if r := h.ask(tt.chain); r.status != 200 {
				t.Fatalf("second request: status %d: %s", r.status, r.body)
			}
			if n := h.emu.Calls(p, m); n != before {
				t.Errorf("resting route called during its rest: %d calls, want %d", n, before)
			}
			rest, _ := h.rest(tt.restKey)
			h.clk.Set(rest.Until)
			if r := h.ask(tt.chain); r.status != 200 {
				t.Fatalf("after the rest: status %d: %s", r.status, r.body)
			}
			if n := h.emu.Calls(p, m); n != before+1 {
				t.Errorf("after its rest the route got %d calls, want %d", n, before+1)
			}
		})
	}
}

// TestTooLargeDoesNotRest: a prompt too large for one route goes to the
// next, and the first route is tried again on the next request.
func TestTooLargeDoesNotRest(t *testing.T) {
	h := newHarness(t, answerChain)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.TooLarge})
	if r := h.ask("answer"); r.json(t)["model"] != "groq/llama-3.1-8b-instant" {
		t.Fatalf("first request answered by %v", r.json(t)["model"])
	}
	if r := h.ask("answer"); r.json(t)["model"] != "groq/llama-3.3-70b-versatile" {
		t.Fatalf("second request answered by %v, want the first route again", r.json(t)["model"])
	}
}

// TestTimeoutRestsAndFailsOver: a route that hangs is cut at its attempt
// timeout (a fake clock moves), the next route answers, and the hung route
// rests 30 s.
func TestTimeoutRestsAndFailsOver(t *testing.T) {
	h := newHarness(t, answerChain)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	done := h.askAsync("answer")
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	h.clk.Advance(8 * time.Second)
	got := <-done
	if got.status != 200 || got.json(t)["model"] != "groq/llama-3.1-8b-instant" {
		t.Fatalf("got %d %s", got.status, got.body)
	}
	rest, ok := h.rest("groq/llama-3.3-70b-versatile")
	if !ok || rest.Class != "timeout" || !rest.Until.Equal(t0.Add(8*time.Second+30*time.Second)) {
		t.Fatalf("rest = %+v (found %v), want timeout until t0+38s", rest, ok)
	}
}

// TestCallerGoneRestsNothing: a caller that hangs up while a route is
// silent rests nothing; the attempt is logged as cancelled.
func TestCallerGoneRestsNothing(t *testing.T) {
	h := newHarness(t, answerChain)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"answer","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		_, err := http.DefaultClient.Do(req)
		errc <- err
	}()
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	cancel()
	<-errc
	// Once the handler has returned, Close waits for the attempt it wound
	// down (calling Close while the handler may still start that wait
	// would race on the router's WaitGroup).
	h.waitIdle()
	h.gw.Router().Close()
	var found bool
	for _, a := range h.recs.all() {
		if a.Route == "groq/llama-3.3-70b-versatile" && a.Class.String() == "cancelled" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no cancelled attempt recorded: %+v", h.recs.all())
	}
	if rs, _ := h.store.Rests(context.Background(), h.clk.Now()); len(rs) != 0 {
		t.Fatalf("rests = %+v, want none", rs)
	}
	if n := h.emu.Calls("groq", "llama-3.1-8b-instant"); n != 0 {
		t.Errorf("the next route was called %d times after the caller left", n)
	}
}
