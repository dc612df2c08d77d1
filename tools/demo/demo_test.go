package demo

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/route"
)

var t0 = time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)

// TestScenario: the gateway's config compiles into seed 000's chain, and
// every route of it is a model of the emulator.
func TestScenario(t *testing.T) {
	emu := newEmulator(clock.NewFake(t0))
	plan, err := config.Parse("demo", []byte(gatewayYAML("http://127.0.0.1:1", "127.0.0.1:0", t.TempDir())), demoEnv("demo-admin-0123456789abcdef"))
	if err != nil {
		t.Fatalf("the demo's config: %v", err)
	}
	ch := plan.Chains[Chain]
	if ch == nil {
		t.Fatalf("no chain %q in %v", Chain, plan.ChainOrder)
	}
	if got, want := len(ch.Routes), 13; got != want {
		t.Errorf("chain has %d routes, want %d (seed 000)", got, want)
	}
	if got, want := ch.HedgeDelay, 3*time.Second; got != want {
		t.Errorf("hedge delay %s, want %s", got, want)
	}
	if got, want := ch.AttemptTimeout, 8*time.Second; got != want {
		t.Errorf("attempt timeout %s, want %s", got, want)
	}
	providers := map[string]bool{}
	for _, r := range ch.Routes {
		providers[r.Provider.Name] = true
		if r.Provider.Disabled {
			t.Errorf("route %s is disabled, want every route enabled with the demo's keys", r.ID)
		}
		found := false
		for _, m := range emu.Models(r.Provider.Name) {
			found = found || m == r.Model
		}
		if !found {
			t.Errorf("route %s is not a model of the emulator", r.ID)
		}
	}
	if len(providers) != 3 {
		t.Errorf("routes span providers %v, want 3 (gemini, groq, nvidia)", providers)
	}
}

// TestGoneRoutes: the two models gone for new accounts answer their
// provider's "gone" error over HTTP.
func TestGoneRoutes(t *testing.T) {
	// The models' latencies run on a clock a thousand times faster than
	// the wall clock: under a millisecond of real time.
	emu := newEmulator(clock.NewScaled(t0, 1000))
	srv := httptest.NewServer(emu)
	defer srv.Close()
	for _, g := range goneRoutes {
		t.Run(g[0]+"/"+g[1], func(t *testing.T) {
			body := `{"model":"` + g[1] + `","messages":[{"role":"user","content":"hi"}]}`
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, emulator.BaseURL(srv.URL, g[0])+"/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer demo")
			req.Header.Set("Content-Type", "application/json")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode < 400 || resp.StatusCode >= 500 {
				t.Errorf("got HTTP %d, want the provider's 4xx for a gone model", resp.StatusCode)
			}
		})
	}
}

// TestReportLines: what the report prints for the outcomes a question can
// have, including a hedge whose raced route is recorded after the answer.
func TestReportLines(t *testing.T) {
	at := func(id, rt string, c failure.Class, lat time.Duration, hedge bool, resting time.Duration) *route.Attempt {
		a := &route.Attempt{RequestID: id, Route: rt, Provider: strings.SplitN(rt, "/", 2)[0], Start: t0, Latency: lat, Class: c, Hedge: hedge}
		if resting > 0 {
			a.RestKey, a.RestUntil = rest.RouteKey(rt), t0.Add(lat+resting)
		}
		return a
	}
	type step struct {
		att *route.Attempt // recorded, when set
		fin *outcome       // finished, when set
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  string
	}{
		{"first route", []step{
			{att: at("r1", "gemini/gemini-2.5-flash-lite", failure.OK, 900*time.Millisecond, false, 0)},
			{fin: &outcome{id: "r1", label: "q1 (projects)", status: 200, latency: 950 * time.Millisecond}},
		}, "12:00:00 q1 (projects) answered by gemini/gemini-2.5-flash-lite in 950ms\n"},
		{"failover with a rest", []step{
			{att: at("r2", "gemini/gemini-2.5-flash-lite", failure.Overloaded, 100*time.Millisecond, false, 30*time.Second)},
			{att: at("r2", "groq/llama-3.3-70b-versatile", failure.OK, 300*time.Millisecond, false, 0)},
			{fin: &outcome{id: "r2", label: "q2 (contact)", status: 200, latency: 420 * time.Millisecond}},
		}, "12:00:00 q2 (contact) answered by groq/llama-3.3-70b-versatile in 420ms (after gemini/gemini-2.5-flash-lite: overloaded, resting 30s)\n"},
		{"hedge, loser recorded late", []step{
			{att: at("r3", "groq/llama-3.3-70b-versatile", failure.OK, 300*time.Millisecond, true, 0)},
			{fin: &outcome{id: "r3", label: "q3 (stack)", status: 200, latency: 3300 * time.Millisecond}},
			{att: at("r3", "nvidia/meta/llama-3.3-70b-instruct", failure.SilentLoser, 3300*time.Millisecond, false, 0)},
		}, "12:00:00 q3 (stack) answered by groq/llama-3.3-70b-versatile in 3.3s, hedged\n12:00:00 q3 (stack)   raced: nvidia/meta/llama-3.3-70b-instruct: silent for 3.3s, cancelled\n"},
		{"hedge, loser never recorded", []step{
			{att: at("r7", "groq/llama-3.3-70b-versatile", failure.OK, 300*time.Millisecond, true, 0)},
			{fin: &outcome{id: "r7", label: "q7 (ai-setup)", status: 200, latency: 3300 * time.Millisecond}},
		}, "12:00:00 q7 (ai-setup) answered by groq/llama-3.3-70b-versatile in 3.3s, hedged\n"},
		{"gone model, provider rest", []step{
			{att: at("r4", "groq/moonshotai/kimi-k2-instruct-0905", failure.Gone, 50*time.Millisecond, false, 6*time.Hour)},
			{att: func() *route.Attempt {
				a := at("r4", "groq/qwen/qwen3-32b", failure.Auth, 50*time.Millisecond, false, time.Hour)
				a.RestKey = rest.ProviderKey("groq")
				return a
			}()},
			{att: at("r4", "gemini/gemma-3-27b-it", failure.OK, time.Second, false, 0)},
			{fin: &outcome{id: "r4", label: "q4 (talks)", status: 200, latency: 1100 * time.Millisecond}},
		}, "12:00:00 q4 (talks) answered by gemini/gemma-3-27b-it in 1.1s (after groq/moonshotai/kimi-k2-instruct-0905: gone, resting 6h0m0s; groq/qwen/qwen3-32b: auth, resting all of groq 1h0m0s)\n"},
		{"fallback", []step{
			{fin: &outcome{id: "r5", label: "q5 (writing)", status: 200, fallback: true, latency: 2 * time.Millisecond}},
		}, "12:00:00 q5 (writing) answered by the chain's fallback message in 2ms (every route resting, out of budget or failing)\n"},
		{"late loser that rests", []step{
			{att: at("r6", "groq/llama-3.3-70b-versatile", failure.OK, 300*time.Millisecond, false, 0)},
			{fin: &outcome{id: "r6", label: "q6 (hiring)", status: 200, latency: 300 * time.Millisecond}},
			{att: at("r6", "gemini/gemma-3-27b-it", failure.Timeout, 8*time.Second, true, 30*time.Second)},
		}, "12:00:00 q6 (hiring) answered by groq/llama-3.3-70b-versatile in 300ms\n12:00:00 q6 (hiring)   later: gemini/gemma-3-27b-it: timeout after 8s, resting 30s\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			r := newReport(&out, clock.NewFake(t0))
			for _, s := range tc.steps {
				if s.att != nil {
					r.RecordAttempt(s.att)
				}
				if s.fin != nil {
					r.finish(*s.fin)
				}
			}
			if got := out.String(); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestReportSpent: a route skipped for its spent daily budget is reported
// once, and again on a later day once it had budget in between.
func TestReportSpent(t *testing.T) {
	var out bytes.Buffer
	r := newReport(&out, clock.NewFake(t0))
	r.order = []string{"gemini/gemini-2.5-flash-lite", "groq/llama-3.3-70b-versatile"}
	spent := true
	r.daySpent = func(id string) (bool, time.Time) {
		return spent && id == "gemini/gemini-2.5-flash-lite", t0.Add(12 * time.Hour)
	}
	ask := func(id string) {
		r.RecordAttempt(&route.Attempt{RequestID: id, Route: "groq/llama-3.3-70b-versatile", Provider: "groq", Start: t0, Latency: time.Second, Class: failure.OK})
		r.finish(outcome{id: id, label: id, status: 200, latency: time.Second})
	}
	ask("q1")
	ask("q2")
	spent = false
	ask("q3")
	spent = true
	ask("q4")
	want := "12:00:00 gemini/gemini-2.5-flash-lite has spent today's requests: skipped until its daily reset at Jun 16 00:00 UTC\n" +
		"12:00:00 q1 answered by groq/llama-3.3-70b-versatile in 1s\n" +
		"12:00:00 q2 answered by groq/llama-3.3-70b-versatile in 1s\n" +
		"12:00:00 q3 answered by groq/llama-3.3-70b-versatile in 1s\n" +
		"12:00:00 gemini/gemini-2.5-flash-lite has spent today's requests: skipped until its daily reset at Jun 16 00:00 UTC\n" +
		"12:00:00 q4 answered by groq/llama-3.3-70b-versatile in 1s\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestDaySpent(t *testing.T) {
	reset := t0.Add(12 * time.Hour)
	for _, tc := range []struct {
		name      string
		route     quota.Window
		provider  quota.Window
		wantSpent bool
	}{
		{"no limit", quota.Window{Used: 500}, quota.Window{}, false},
		{"room left", quota.Window{Limit: 20, Used: 10, Resets: reset}, quota.Window{}, false},
		{"at the margin", quota.Window{Limit: 20, Used: 19, Resets: reset}, quota.Window{}, true},
		{"provider spent", quota.Window{Limit: 1000, Used: 3}, quota.Window{Limit: 50, Used: 50, Resets: reset}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := quota.Left{Route: quota.Budget{RPD: tc.route}, Provider: quota.Budget{RPD: tc.provider}}
			got, at := daySpent(l, 0.05)
			if got != tc.wantSpent {
				t.Errorf("daySpent = %v, want %v", got, tc.wantSpent)
			}
			if got && !at.Equal(reset) {
				t.Errorf("resets at %s, want %s", at, reset)
			}
		})
	}
}

// TestDemoAgentAndVectors (issue 33): the keyless demo serves tools and
// embeddings too: the agent chain answers a request with a function tool
// with a call of it (from Gemini's own API, translated), and the vectors
// chain answers /v1/embeddings.
func TestDemoAgentAndVectors(t *testing.T) {
	// Fifty demo seconds a second: the models' latencies are short, and
	// the chain's timeouts long enough for a busy machine.
	clk := clock.NewScaled(t0, 50)
	emu := newEmulator(clk)
	up := httptest.NewServer(emu)
	defer up.Close()
	plan, err := config.Parse("demo", []byte(gatewayYAML(up.URL, "127.0.0.1:0", t.TempDir())), demoEnv("demo-admin-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	gw, err := tollfree.New(tollfree.Options{Plan: plan, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	post := func(path, body string) string {
		resp, err := srv.Client().Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b.String())
		}
		return b.String()
	}
	got := post("/v1/chat/completions", `{"model":"agent","messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`)
	if !strings.Contains(got, `"finish_reason":"tool_calls"`) || !strings.Contains(got, `"name":"get_weather"`) {
		t.Errorf("agent: %s", got)
	}
	got = post("/v1/embeddings", `{"model":"vectors","input":["a","b"]}`)
	if strings.Count(got, `"object":"embedding"`) != 2 {
		t.Errorf("vectors: %.200s", got)
	}
}
