package emulator

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tollfree/tollfree/internal/clock"
)

// raw is a server whose lifetime the test controls, for leak checks.
func raw(t *testing.T) (*Emulator, *clock.Fake, *httptest.Server) {
	t.Helper()
	clk := clock.NewFake(start)
	e := New(Options{Clock: clk})
	e.AddProvider(Provider{Name: FlavorGroq, Flavor: FlavorGroq})
	e.AddModel(FlavorGroq, Model{ID: "m", Answer: "one two three four"})
	return e, clk, httptest.NewServer(e)
}

func post(ctx context.Context, t *testing.T, srv *httptest.Server, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, BaseURL(srv.URL, FlavorGroq)+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return srv.Client().Do(req)
}

func TestHangReturnsWhenClientLeaves(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e, clk, srv := raw(t)
	e.Script(FlavorGroq, "m", Step{Kind: Hang})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		resp, err := post(ctx, t, srv, `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if err := clk.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if got := e.Calls(FlavorGroq, "m"); got != 1 {
		t.Errorf("Calls while hanging = %d, want 1", got)
	}
	cancel()
	if err := <-done; err == nil {
		t.Errorf("request ended without error, want the cancellation")
	}
	srv.Close() // waits for the handler
	if n := clk.Waiters(); n != 0 {
		t.Errorf("%d timers left after the hang", n)
	}
	if recs := e.Records(); len(recs) != 1 || recs[0].Status != 0 || recs[0].Behaviour != "hang" {
		t.Errorf("records = %+v", recs)
	}
}

func TestHangEndsWhenTheClockPassesItsDelay(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e, clk, srv := raw(t)
	defer srv.Close()
	e.Script(FlavorGroq, "m", Step{Kind: Hang, Delay: 5 * time.Minute})
	done := make(chan error, 1)
	go func() {
		resp, err := post(t.Context(), t, srv, `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if err := clk.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Minute)
	if err := <-done; err == nil {
		t.Errorf("request got an answer, want a dropped connection")
	}
	srv.Close()
}

func TestStallKeepsStreamOpenUntilClientLeaves(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e, clk, srv := raw(t)
	e.Script(FlavorGroq, "m", Step{Kind: StreamStall, After: 2})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp, err := post(ctx, t, srv, `{"model":"m","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	var text string
	for n := 0; n < 3 && sc.Scan(); {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			n++
			var c struct {
				Choices []struct {
					Delta struct{ Content string } `json:"delta"`
				} `json:"choices"`
			}
			json.Unmarshal([]byte(d), &c)
			text += c.Choices[0].Delta.Content
		}
	}
	if text != "one two " {
		t.Errorf("text before the stall %q, want %q", text, "one two ")
	}
	if err := clk.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	srv.Close()
	if n := clk.Waiters(); n != 0 {
		t.Errorf("%d timers left after the stall", n)
	}
}

func TestLatencyAndChunkDelayRunOnTheClock(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "m", Answer: "a b c", Latency: 2 * time.Second, ChunkDelay: time.Second})
	done := make(chan reply, 1)
	go func() { done <- v.chat(FlavorGroq, "m", `,"stream":true`) }()
	if err := v.clk.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		t.Fatalf("answered before the latency passed: %d", r.status)
	default:
	}
	v.clk.Advance(2 * time.Second)
	// Three chunk delays: between a, b, c and before the finish.
	for range 3 {
		if err := v.clk.BlockUntil(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		v.clk.Advance(time.Second)
	}
	r := <-done
	data, _ := events(r.body)
	if text, _, _ := contentOf(data); r.status != 200 || text != "a b c" {
		t.Errorf("got %d %q", r.status, text)
	}
}

func TestContinuation(t *testing.T) {
	v := newEnv(t)
	full := "one two three four five"
	v.add(FlavorMistral, Model{ID: "m", Answer: full})
	v.add(FlavorGemini, Model{ID: "gemini-3-flash", Answer: full})

	v.e.Script(FlavorMistral, "m", Step{Kind: StreamCut, After: 2})
	data, _ := events(v.chat(FlavorMistral, "m", `,"stream":true`).body)
	part, _, _ := contentOf(data)
	if part != "one two " {
		t.Fatalf("cut stream gave %q", part)
	}
	prefixed := func(prefix string) reply {
		body := `{"model":"m","messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":` + quote(prefix) + `,"prefix":true}]}`
		return v.do(t.Context(), "POST", v.e.BaseURL(v.srv.URL, FlavorMistral)+"/chat/completions", body)
	}
	tests := []struct{ prefix, want string }{
		{part, "three four five"},
		{"", full},
		{"something else", full},
		{full, ""},
	}
	for _, tt := range tests {
		r := prefixed(tt.prefix)
		var resp struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(r.body), &resp); err != nil {
			t.Fatalf("prefix %q: %v", tt.prefix, err)
		}
		if got := resp.Choices[0].Message.Content; got != tt.want {
			t.Errorf("prefix %q: content %q, want %q", tt.prefix, got, tt.want)
		}
	}

	body := `{"contents":[{"role":"user","parts":[{"text":"Hi"}]},{"role":"model","parts":[{"text":"one two "}]}]}`
	r := v.gemini(FlavorGemini, "gemini-3-flash", false, body)
	if !strings.Contains(r.body, `"text": "three four five"`) {
		t.Errorf("gemini continuation: %s", r.body)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestGeminiRequestChecks(t *testing.T) {
	tests := []struct {
		name, model, body string
		status            int
		message           string
	}{
		{"assistant role", "gemini-3-flash", `{"contents":[{"role":"assistant","parts":[{"text":"Hi"}]}]}`, 400, "Please use a valid role: user, model."},
		{"system role", "gemini-3-flash", `{"contents":[{"role":"system","parts":[{"text":"Hi"}]}]}`, 400, "Please use a valid role: user, model."},
		{"level on 2.5", "gemini-2.5-flash", `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingLevel":"LOW"}}}`, 400, "Thinking level is not supported for this model."},
		{"snake level on 2.5", "gemini-2.5-flash", `{"contents":[{"parts":[{"text":"Hi"}]}],"generation_config":{"thinking_config":{"thinking_level":"LOW"}}}`, 400, "Thinking level is not supported for this model."},
		{"level and budget", "gemini-3-flash", `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingLevel":"LOW","thinkingBudget":10}}}`, 400, "You can only set only one of thinking budget and thinking level."},
		{"unknown field", "gemini-3-flash", `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"store":true}`, 400, `Invalid JSON payload received. Unknown name "store": Cannot find field.`},
		{"unknown config field", "gemini-3-flash", `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"generationConfig":{"max_tokens":5}}`, 400, `Invalid JSON payload received. Unknown name "max_tokens" at 'generation_config': Cannot find field.`},
		{"no contents", "gemini-3-flash", `{}`, 400, "* GenerateContentRequest.contents: contents is not specified\n"},
		{"level on 3", "gemini-3-flash", `{"systemInstruction":{"parts":[{"text":"Be terse."}]},"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingLevel":"LOW"}}}`, 200, ""},
		{"budget on 2.5", "gemini-2.5-flash", `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":1024}}}`, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			v.add(FlavorGemini, Model{ID: tt.model})
			r := v.gemini(FlavorGemini, tt.model, false, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.status == 200 {
				return
			}
			var e struct {
				Error struct {
					Message, Status string
				}
			}
			if err := json.Unmarshal([]byte(r.body), &e); err != nil {
				t.Fatal(err)
			}
			if e.Error.Message != tt.message || e.Error.Status != "INVALID_ARGUMENT" {
				t.Errorf("error %+v, want %q", e.Error, tt.message)
			}
			if recs := v.e.Records(); len(recs) != 1 || recs[0].Behaviour != "invalid" || v.e.Calls(FlavorGemini, tt.model) != 1 {
				t.Errorf("records %+v", recs)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	v := newEnv(t)
	v.addProvider(Provider{Name: "g", Flavor: FlavorGemini, Key: "AIza-good"}, Model{ID: "gemini-3-flash"})
	v.addProvider(Provider{Name: "q", Flavor: FlavorGroq, Key: "gsk_good"}, Model{ID: "m"})
	tests := []struct {
		name   string
		r      func() reply
		status int
	}{
		{"gemini header", func() reply { return v.gemini("g", "gemini-3-flash", false, "", "x-goog-api-key", "AIza-good") }, 200},
		{"gemini query", func() reply {
			return v.do(t.Context(), "POST", v.e.BaseURL(v.srv.URL, "g")+"/models/gemini-3-flash:generateContent?key=AIza-good", `{"contents":[{"parts":[{"text":"Hi"}]}]}`)
		}, 200},
		{"gemini wrong", func() reply { return v.gemini("g", "gemini-3-flash", false, "", "x-goog-api-key", "AIza-bad") }, 400},
		{"groq bearer", func() reply { return v.chat("q", "m", "", "Authorization", "Bearer gsk_good") }, 200},
		{"groq wrong", func() reply { return v.chat("q", "m", "", "Authorization", "Bearer gsk_bad") }, 401},
		{"groq none", func() reply { return v.chat("q", "m", "") }, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := tt.r(); r.status != tt.status {
				t.Errorf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
		})
	}
	for _, rec := range v.e.Records() {
		if (rec.Status == 200) == (rec.Behaviour == "auth") {
			t.Errorf("record %+v", rec)
		}
	}
}

func TestRecordsAndTokens(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "m", Answer: "12345678"})
	body := `{"model":"m","stream":true,"messages":[{"role":"system","content":"abcd"},{"role":"user","content":[{"type":"text","text":"efghi"}]}]}`
	v.do(t.Context(), "POST", v.e.BaseURL(v.srv.URL, FlavorGroq)+"/chat/completions", body)
	v.e.Script(FlavorGroq, "m", Step{Kind: RateDay})
	v.chat(FlavorGroq, "m", "")
	v.chat(FlavorGroq, "nope", "")
	want := []Record{
		{Time: start, Provider: FlavorGroq, Model: "m", Status: 200, Behaviour: "answer", Stream: true, PromptTokens: 3, CompletionTokens: 2},
		{Time: start, Provider: FlavorGroq, Model: "m", Status: 429, Behaviour: "rate_day", PromptTokens: 1},
		{Time: start, Provider: FlavorGroq, Model: "nope", Status: 404, Behaviour: "unknown_model", PromptTokens: 1},
	}
	got := v.e.Records()
	if len(got) != len(want) {
		t.Fatalf("records %+v", got)
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) {
			t.Errorf("record %d time %v", i, got[i].Time)
		}
		got[i].Time = want[i].Time
		if got[i] != want[i] {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestMaxTokensCutsTheAnswer(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "m", Answer: "0123456789abcdef"})
	r := v.chat(FlavorGroq, "m", `,"max_tokens":2`)
	if !strings.Contains(r.body, `"content":"01234567"},"logprobs":null,"finish_reason":"length"`) {
		t.Errorf("body %s", r.body)
	}
}

func TestNonStreamCutDropsTheConnection(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "m"})
	v.e.Script(FlavorGroq, "m", Step{Kind: StreamCut})
	if r := v.chat(FlavorGroq, "m", ""); r.err == nil {
		t.Errorf("got a whole body: %d %s", r.status, r.body)
	}
}

func TestModelsAndRoutes(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "b"}, Model{ID: "a"})
	v.add(FlavorGemini, Model{ID: "gemini-3-flash"})
	r := v.do(t.Context(), "GET", BaseURL(v.srv.URL, FlavorGroq)+"/models", "")
	want := `{"object":"list","data":[{"id":"a","object":"model","created":1700000000,"owned_by":"groq"},{"id":"b","object":"model","created":1700000000,"owned_by":"groq"}]}`
	if r.body != want {
		t.Errorf("models:\n got %s\nwant %s", r.body, want)
	}
	r = v.do(t.Context(), "GET", v.e.BaseURL(v.srv.URL, FlavorGemini)+"/models", "")
	if !strings.Contains(r.body, `"name": "models/gemini-3-flash"`) {
		t.Errorf("gemini models: %s", r.body)
	}
	if got := v.e.BaseURL("http://x/", FlavorGemini); got != "http://x/gemini/v1beta" {
		t.Errorf("gemini base %q", got)
	}
	for _, path := range []string{"/nobody/v1/chat/completions", "/groq/v1/audio/speech"} {
		if r := v.do(t.Context(), "POST", v.srv.URL+path, "{}"); r.status != 404 {
			t.Errorf("%s: %d", path, r.status)
		}
	}
}
