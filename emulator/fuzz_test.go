package emulator

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func FuzzParseGemini(f *testing.F) {
	f.Add(`{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`)
	f.Add(`{"contents":[{"role":"model"}],"generation_config":{"thinking_config":{"thinking_level":"LOW"}}}`)
	f.Add(`{"generationConfig":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, body string) {
		req, problem, _ := parseGemini([]byte(body))
		if problem == "" && len(req.Contents) == 0 {
			t.Errorf("accepted a body without contents")
		}
	})
}

func FuzzChatRequest(f *testing.F) {
	f.Add(`{"model":"m","messages":[{"role":"user","content":"Hi"}]}`)
	f.Add(`{"model":"m","stream":true,"messages":[{"role":"assistant","content":[{"type":"text","text":"Hello"}],"prefix":true}]}`)
	f.Add(`{"model":"m","max_tokens":-3,"messages":[{"content":null}]}`)
	e := New(Options{})
	e.AddProvider(Provider{Name: "p", Flavor: FlavorGroq})
	e.AddModel("p", Model{ID: "m"})
	f.Fuzz(func(t *testing.T, body string) {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/p/v1/chat/completions", strings.NewReader(body)))
		if w.Code != 200 && w.Code != 400 && w.Code != 404 {
			t.Errorf("status %d", w.Code)
		}
	})
}

func TestConcurrentCallsRespectTheLimit(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorCerebras, Model{ID: "m", Limits: Limits{RPM: 30}})
	var wg sync.WaitGroup
	statuses := make(chan int, 60)
	for range 60 {
		wg.Go(func() { statuses <- v.call(FlavorCerebras, "m", false).status })
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[200] != 30 || count[429] != 30 {
		t.Errorf("statuses %v, want 30 × 200 and 30 × 429", count)
	}
}

func TestFreeTierAnswers(t *testing.T) {
	v := newEnv(t)
	for _, p := range FreeTier() {
		v.e.AddPreset(p)
	}
	for _, p := range FreeTier() {
		m := p.Models[0]
		t.Run(p.Provider.Name+"/"+m.ID, func(t *testing.T) {
			done := make(chan reply, 1)
			go func() { done <- v.call(p.Provider.Flavor, m.ID, false) }()
			if err := v.clk.BlockUntil(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			v.clk.Advance(m.Latency)
			if r := <-done; r.status != 200 {
				t.Errorf("status %d: %s", r.status, r.body)
			}
		})
	}
}

func TestGeminiOpenAICompat(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGemini, Model{ID: "gemini-2.5-flash", Answer: "a b"})
	url := v.e.BaseURL(v.srv.URL, FlavorGemini) + "/openai/chat/completions"
	r := v.do(t.Context(), "POST", url, `{"model":"gemini-2.5-flash","store":true,"messages":[{"role":"user","content":"Hi"}]}`)
	if r.status != 400 || !strings.HasPrefix(r.body, "[{\n  \"error\": {") || !strings.HasSuffix(r.body, "}\n]") ||
		!strings.Contains(r.body, `Unknown name \"store\": Cannot find field.`) {
		t.Errorf("unknown field: %d %s", r.status, r.body)
	}
	v.e.Script(FlavorGemini, "gemini-2.5-flash", Step{Kind: RateMinute})
	r = v.do(t.Context(), "POST", url, `{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"Hi"}]}`)
	if r.status != 429 || !strings.HasPrefix(r.body, "[{") || !strings.Contains(r.body, "RESOURCE_EXHAUSTED") {
		t.Errorf("429: %d %s", r.status, r.body)
	}
	r = v.do(t.Context(), "POST", url, `{"model":"gemini-2.5-flash","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	data, _ := events(r.body)
	for _, d := range data[1 : len(data)-1] {
		if !strings.Contains(d, `"usage":{"prompt_tokens":1,`) {
			t.Errorf("chunk without cumulative usage: %s", d)
		}
	}
}
