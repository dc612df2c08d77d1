package emulator

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestMinuteLimit(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "llama-3.1-8b-instant", Limits: Limits{RPM: 30}})
	for i := range 30 {
		if r := v.call(FlavorGroq, "llama-3.1-8b-instant", false); r.status != 200 {
			t.Fatalf("call %d: status %d, want 200", i+1, r.status)
		}
		v.clk.Advance(time.Second)
	}
	// Call 31 comes 30s after the first: the first leaves the window in 30s.
	v.e.Script(FlavorGroq, "llama-3.1-8b-instant", Step{Kind: HighDemand})
	r := v.call(FlavorGroq, "llama-3.1-8b-instant", false)
	if r.status != 429 {
		t.Fatalf("call 31: status %d, want 429", r.status)
	}
	wantMsg := "on requests per minute (RPM): Limit 30, Used 30, Requested 1. Please try again in 30s."
	if !strings.Contains(r.body, wantMsg) || r.header.Get("Retry-After") != "30" {
		t.Errorf("call 31: retry-after %q body %s, want %q", r.header.Get("Retry-After"), r.body, wantMsg)
	}
	if got := v.e.Calls(FlavorGroq, "llama-3.1-8b-instant"); got != 31 {
		t.Errorf("Calls = %d, want 31", got)
	}
	recs := v.e.Records()
	if got := recs[30].Behaviour; got != "limit_rate_minute" {
		t.Errorf("record 31 behaviour %q", got)
	}
	// The minute moves on: the first call leaves the window and the
	// scripted step, untouched by the 429, now runs.
	v.clk.Advance(30 * time.Second)
	if r := v.call(FlavorGroq, "llama-3.1-8b-instant", false); r.status != 503 {
		t.Errorf("after the minute: status %d, want the scripted 503", r.status)
	}
	v.clk.Advance(time.Second)
	if r := v.call(FlavorGroq, "llama-3.1-8b-instant", false); r.status != 200 {
		t.Errorf("after the minute: status %d, want 200", r.status)
	}
}

func TestTokenLimits(t *testing.T) {
	v := newEnv(t)
	// Prompt "Hi" is 1 token; the answer 100 bytes is 25 tokens.
	v.add(FlavorGroq, Model{ID: "m", Answer: strings.Repeat("x", 100), Limits: Limits{TPM: 60}})
	for i := range 2 {
		if r := v.call(FlavorGroq, "m", false); r.status != 200 {
			t.Fatalf("call %d: %d", i+1, r.status)
		}
	}
	r := v.call(FlavorGroq, "m", false)
	if r.status != 429 || !strings.Contains(r.body, "on tokens per minute (TPM): Limit 60, Used 52, Requested 26.") || !strings.Contains(r.body, `"type":"tokens"`) {
		t.Errorf("third call: %d %s", r.status, r.body)
	}
	if got := r.header.Get("x-ratelimit-remaining-tokens"); got != "8" {
		t.Errorf("remaining tokens %q, want 8", got)
	}
	// One request over the TPM on its own is Groq's 413.
	big := `,"messages":[{"role":"user","content":"` + strings.Repeat("y", 400) + `"}]`
	v.clk.Advance(time.Minute)
	r = v.do(t.Context(), "POST", v.e.BaseURL(v.srv.URL, FlavorGroq)+"/chat/completions", `{"model":"m"`+big+`}`)
	if r.status != 413 || !strings.Contains(r.body, "Request too large") {
		t.Errorf("big call: %d %s", r.status, r.body)
	}
}

func TestAccountLimits(t *testing.T) {
	v := newEnv(t)
	v.addProvider(Provider{Name: "or", Flavor: FlavorOpenRouter, Limits: Limits{RPM: 20, RPD: 50}},
		Model{ID: "a:free"}, Model{ID: "b:free"})
	for i := range 20 {
		id := []string{"a:free", "b:free"}[i%2]
		if r := v.chat("or", id, ""); r.status != 200 {
			t.Fatalf("call %d: %d", i+1, r.status)
		}
	}
	r := v.chat("or", "a:free", "")
	if r.status != 429 || !strings.Contains(r.body, "free-models-per-min") {
		t.Fatalf("call 21: %d %s", r.status, r.body)
	}
	// Half an hour later the minute is free; 30 more calls spend the day.
	v.clk.Advance(30 * time.Minute)
	for i := range 30 {
		if i%20 == 0 && i > 0 {
			v.clk.Advance(time.Minute)
		}
		if r := v.chat("or", "b:free", ""); r.status != 200 {
			t.Fatalf("day call %d: %d %s", i+21, r.status, r.body)
		}
	}
	v.clk.Advance(time.Minute)
	r = v.chat("or", "a:free", "")
	// 12:32 UTC: the day resets at the next UTC midnight.
	want := `{"error":{"message":"Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day","code":429,"metadata":{"headers":{"X-RateLimit-Limit":"50","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"1779321600000"},"provider_name":null}},"user_id":"` + openRouterUID + `"}`
	if r.status != 429 || r.body != want {
		t.Errorf("call 51: %d\n got %s\nwant %s", r.status, r.body, want)
	}
	v.clk.Set(time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC))
	if r := v.chat("or", "a:free", ""); r.status != 200 {
		t.Errorf("after UTC midnight: %d", r.status)
	}
}

func TestModelLimitOnOpenRouterNamesTheModel(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorOpenRouter, Model{ID: "qwen/qwen3-coder:free", Limits: Limits{RPM: 1}})
	v.chat(FlavorOpenRouter, "qwen/qwen3-coder:free", "")
	r := v.chat(FlavorOpenRouter, "qwen/qwen3-coder:free", "")
	want := "High demand for qwen/qwen3-coder:free on OpenRouter - limited to 1 requests per minute. Please retry shortly."
	if r.status != 429 || !strings.Contains(r.body, want) || !strings.Contains(r.body, "limit_rpm/qwen/qwen3-coder/") {
		t.Errorf("got %d %s", r.status, r.body)
	}
}

// TestGeminiDayAcrossDST spends a 2-a-day Gemini model on the day daylight
// saving starts in Los Angeles (2026-03-08, 23 hours long): the day ends at
// the next local midnight, not 24 hours after the last one.
func TestGeminiDayAcrossDST(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	v := newEnvAt(t, time.Date(2026, 3, 7, 23, 30, 0, 0, la))
	v.add(FlavorGemini, Model{ID: "gemini-2.5-flash", Limits: Limits{RPD: 2}})
	call := func() reply { return v.gemini(FlavorGemini, "gemini-2.5-flash", false, "") }
	for i := range 2 {
		if r := call(); r.status != 200 {
			t.Fatalf("call %d: %d", i+1, r.status)
		}
	}
	if r := call(); r.status != 429 || !strings.Contains(r.body, "GenerateRequestsPerDayPerProjectPerModel-FreeTier") {
		t.Fatalf("call 3 on Mar 7: %d %s", r.status, r.body)
	}
	v.clk.Set(time.Date(2026, 3, 8, 0, 0, 1, 0, la))
	for i := range 2 {
		if r := call(); r.status != 200 {
			t.Fatalf("Mar 8 call %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := call()
	if r.status != 429 || !strings.Contains(r.body, `"retryDelay": "59s"`) {
		t.Fatalf("Mar 8 call 3: %d %s (want a short retryDelay)", r.status, r.body)
	}
	// 23:59:59 PDT on Mar 8 is still the same day.
	v.clk.Set(time.Date(2026, 3, 8, 23, 59, 59, 0, la))
	if r := call(); r.status != 429 {
		t.Errorf("Mar 8 23:59:59: %d, want 429", r.status)
	}
	// Midnight PDT comes 23 hours after midnight PST.
	v.clk.Set(time.Date(2026, 3, 9, 0, 0, 0, 0, la))
	if r := call(); r.status != 200 {
		t.Errorf("Mar 9 00:00 PDT: %d, want 200", r.status)
	}
}

func TestRollingDay(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "m", Limits: Limits{RPD: 2}})
	v.call(FlavorGroq, "m", false)
	v.clk.Advance(time.Hour)
	v.call(FlavorGroq, "m", false)
	r := v.call(FlavorGroq, "m", false)
	if r.status != 429 || !strings.Contains(r.body, "requests per day (RPD): Limit 2, Used 2, Requested 1. Please try again in 23h0m0s.") {
		t.Fatalf("call 3: %d %s", r.status, r.body)
	}
	v.clk.Advance(23 * time.Hour)
	if r := v.call(FlavorGroq, "m", false); r.status != 200 {
		t.Errorf("a rolling day later: %d", r.status)
	}
}

func TestResetClearsUsage(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorCerebras, Model{ID: "m", Limits: Limits{RPM: 1}})
	v.e.Script(FlavorCerebras, "m", Step{Kind: HighDemand}, Step{Kind: HighDemand})
	v.call(FlavorCerebras, "m", false)
	v.e.Reset()
	if got := v.e.Calls(FlavorCerebras, "m"); got != 0 || len(v.e.Records()) != 0 {
		t.Fatalf("after Reset: calls %d records %d", got, len(v.e.Records()))
	}
	if r := v.call(FlavorCerebras, "m", false); r.status != 200 {
		t.Errorf("after Reset: %d, want 200 (no limit used, no script left)", r.status)
	}
}

// TestCountRefusals: where a provider counts its refusals, each 429 of a
// busy minute spends one of the day's requests, so a client that keeps
// knocking runs out of its day early; a 503 counts one request wherever.
// Without CountRefusals the same calls leave the day alone.
func TestCountRefusals(t *testing.T) {
	for _, counts := range []bool{true, false} {
		v := newEnv(t)
		v.addProvider(Provider{Name: "gemini", Flavor: FlavorGemini, CountRefusals: counts},
			Model{ID: "gemini-3.1-flash-lite", Limits: Limits{RPM: 2, RPD: 6}})
		status := func() int { return v.call(FlavorGemini, "gemini-3.1-flash-lite", false).status }
		// Minute 1: two answers, two refusals (counted or not).
		got := []int{status(), status(), status(), status()}
		// Minute 2: a 503, then one answer.
		v.clk.Advance(time.Minute)
		v.e.Script("gemini", "gemini-3.1-flash-lite", Step{Kind: HighDemand})
		got = append(got, status(), status())
		// Minute 3: the day holds 6 requests if refusals count (2 answers,
		// 2 refusals, a 503, an answer), 4 if they do not.
		v.clk.Advance(time.Minute)
		r := v.call(FlavorGemini, "gemini-3.1-flash-lite", false)
		got = append(got, r.status)
		want := []int{200, 200, 429, 429, 503, 200, 200}
		if counts {
			want[6] = 429
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("CountRefusals %v: statuses %v, want %v", counts, got, want)
		}
		if counts && !strings.Contains(r.body, "PerDay") {
			t.Errorf("CountRefusals: the last 429 does not name the day: %s", r.body)
		}
	}
}

// TestDayAcrossASkippedMidnight: where daylight saving skips midnight
// (America/Santiago, 2026-09-06: 00:00 becomes 01:00), a midnight reset's
// day starts at 01:00 of that date and the day before ends there, never
// before the instant it is worked out from.
func TestDayAcrossASkippedMidnight(t *testing.T) {
	scl, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	r := Reset{Location: scl}
	sat := time.Date(2026, 9, 5, 23, 30, 0, 0, scl)
	want := time.Date(2026, 9, 6, 1, 0, 0, 0, scl)
	if got := r.nextMidnight(sat); !got.Equal(want) || !got.After(sat) {
		t.Errorf("nextMidnight(%v) = %v, want %v", sat, got, want)
	}
	sun := time.Date(2026, 9, 6, 1, 30, 0, 0, scl)
	if got := r.dayStart(sun); !got.Equal(want) {
		t.Errorf("dayStart(%v) = %v, want %v", sun, got, want)
	}
}

// TestCerebrasChargesMaxTokensUpFront: Cerebras counts a request against
// its tokens a minute as its prompt plus max_completion_tokens when it
// arrives, whatever the answer then costs (docs/PROVIDERS.md, "Cerebras");
// without max_tokens the emulator charges the answer.
func TestCerebrasChargesMaxTokensUpFront(t *testing.T) {
	v := newEnv(t)
	// Prompt "Hi" is 1 token; the answer 100 bytes is 25 tokens.
	v.add(FlavorCerebras, Model{ID: "m", Answer: strings.Repeat("x", 100), Limits: Limits{TPM: 1000}})
	r := v.chat(FlavorCerebras, "m", `,"max_completion_tokens":400`)
	if r.status != 200 {
		t.Fatalf("first call: %d %s", r.status, r.body)
	}
	if got := r.header.Get("x-ratelimit-remaining-tokens-minute"); got != "599" {
		t.Errorf("after a call of 1 prompt token and max_completion_tokens 400 answered in 25: remaining tokens %q, want 599 (1,000 less 401 charged up front)", got)
	}
	r = v.chat(FlavorCerebras, "m", `,"max_tokens":400`)
	if r.status != 200 {
		t.Fatalf("second call: %d %s", r.status, r.body)
	}
	// 802 charged: a third asking 400 would pass 1,000 though its answer
	// (25) would not.
	if r := v.chat(FlavorCerebras, "m", `,"max_tokens":400`); r.status != 429 {
		t.Errorf("third call asking 400 with 198 left: status %d, want 429", r.status)
	}
	if r := v.chat(FlavorCerebras, "m", ""); r.status != 200 || r.header.Get("x-ratelimit-remaining-tokens-minute") != "172" {
		t.Errorf("a call without max_tokens: status %d, remaining %q; want 200 and 172 (its 26 tokens charged)", r.status, r.header.Get("x-ratelimit-remaining-tokens-minute"))
	}
}

// TestGroqAdmitsByMaxTokens: Groq admits a request by its prompt and
// max_tokens against its tokens a minute, then counts what the answer cost
// (the emulator's checksMaxTokens): a call whose answer would fit is
// refused when its max_tokens does not, and one asking more than the whole
// minute is too large.
func TestGroqAdmitsByMaxTokens(t *testing.T) {
	v := newEnv(t)
	// Prompt "Hi" is 1 token; the answer 100 bytes is 25 tokens.
	v.add(FlavorGroq, Model{ID: "m", Answer: strings.Repeat("x", 100), Limits: Limits{TPM: 1000}})
	r := v.chat(FlavorGroq, "m", `,"max_tokens":400`)
	if r.status != 200 {
		t.Fatalf("first call: %d %s", r.status, r.body)
	}
	if got := r.header.Get("x-ratelimit-remaining-tokens"); got != "974" {
		t.Errorf("after a call of 1 prompt token answered in 25: remaining tokens %q, want 974 (the answer counted, not max_tokens)", got)
	}
	if r := v.chat(FlavorGroq, "m", `,"max_tokens":980`); r.status != 429 || !strings.Contains(r.body, "tokens per minute") {
		t.Errorf("a call asking 980 with 974 left, whose 25-token answer would fit: %d %s, want a 429 on tokens per minute", r.status, r.body)
	}
	if r := v.chat(FlavorGroq, "m", `,"max_tokens":2000`); r.status == 200 || !strings.Contains(r.body, "too large") {
		t.Errorf("a call asking 2,000 of a 1,000-token minute: %d %s, want refused as too large", r.status, r.body)
	}
	if r := v.chat(FlavorGroq, "m", `,"max_tokens":900`); r.status != 200 || r.header.Get("x-ratelimit-remaining-tokens") != "948" {
		t.Errorf("a call asking 900 with 974 left: %d, remaining %q; want 200 and 948", r.status, r.header.Get("x-ratelimit-remaining-tokens"))
	}
}

// TestGeminiCountsInputTokens: Gemini's tokens a minute count a call's
// input alone (the emulator's countsInputOnly): ten calls of a 1-token
// prompt fit a limit of 10 whatever their 100-token answers, and the
// eleventh is refused on the input-token metric.
func TestGeminiCountsInputTokens(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGemini, Model{ID: "gemma-3-27b-it", Answer: strings.Repeat("x", 400), Limits: Limits{TPM: 10}})
	for i := range 10 {
		if r := v.gemini(FlavorGemini, "gemma-3-27b-it", false, ""); r.status != 200 {
			t.Fatalf("call %d of a 1-token prompt answered in 100 under 10 input tokens a minute: %d %s", i+1, r.status, r.body)
		}
	}
	r := v.gemini(FlavorGemini, "gemma-3-27b-it", false, "")
	if r.status != 429 || !strings.Contains(r.body, "generate_content_free_tier_input_token_count") {
		t.Errorf("call 11: %d %s, want a 429 on the input-token metric", r.status, r.body)
	}
}
