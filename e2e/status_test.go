package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/status"
	"github.com/tollfree/tollfree/status/metrics"
)

// adminToken is the admin token of the status tests' gateways.
const adminToken = "adm_status_test_token_7f3a"

// statusConfig is the config the status tests run: three providers in
// front of the emulator, Mistral without a key (its route is disabled),
// and a Groq model with a daily budget of two requests. The admin token is
// optional: some tests run without admin actions.
const statusConfig = `
admin_token: ${TOLLFREE_ADMIN_TOKEN:-}
providers:
  groq:     {preset: groq,     base_url: EMU/groq/v1,       api_key: ${GROQ_API_KEY},
             models: {"llama-3.1-8b-instant": {rpd: 2}}}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
  mistral:  {preset: mistral,  base_url: EMU/mistral/v1,    api_key: ${MISTRAL_API_KEY}}
chains:
  answer:
    routes: [groq/llama-3.3-70b-versatile, gemini/gemini-2.5-flash-lite, cerebras/gpt-oss-120b, mistral/mistral-small-latest]
    attempt_timeout: 8s
    deadline: 25s
  small:
    routes: [groq/llama-3.1-8b-instant, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
`

// newStatusHarness is newHarness on statusConfig, with the admin token set
// when admin is true.
func newStatusHarness(t *testing.T, admin bool) *harness {
	t.Helper()
	clk := clock.NewFake(t0)
	return statusHarness(t, admin, clk, nil)
}

// statusHarness builds a status harness on clk, the emulated models
// answering after latency[route ID] (on clk).
func statusHarness(t *testing.T, admin bool, clk clock.Clock, latency map[string]time.Duration) *harness {
	t.Helper()
	var env map[string]string
	if admin {
		env = map[string]string{"TOLLFREE_ADMIN_TOKEN": adminToken}
	}
	return harnessOf(t, startStackWith(t, stackOptions{providers: statusConfig, env: env, clock: clk, latency: latency}))
}

// get fetches path from the gateway.
func (h *harness) get(path string) reply {
	h.t.Helper()
	resp, err := http.Get(h.srv.URL + path)
	if err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// snapshot fetches /status.json.
func (h *harness) snapshot() *status.Snapshot {
	h.t.Helper()
	r := h.getAuth("/status.json", h.plan.AdminToken) // private when a chain hides its routes
	if r.status != http.StatusOK {
		h.t.Fatalf("GET /status.json: status %d: %s", r.status, r.body)
	}
	var s status.Snapshot
	if err := json.Unmarshal(r.body, &s); err != nil {
		h.t.Fatalf("/status.json does not decode: %v", err)
	}
	return &s
}

// routeOf returns the route id's entry of a snapshot.
func routeOf(t *testing.T, s *status.Snapshot, id string) status.Route {
	t.Helper()
	for _, r := range s.Routes {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("route %s is not in /status.json", id)
	return status.Route{}
}

// admin posts an admin action with token ("" sends none).
func (h *harness) admin(action, token, body string) reply {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/admin/"+action, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("POST /admin/%s: %v", action, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// mustAdmin posts an admin action with the right token and wants 200.
func (h *harness) mustAdmin(action, body string) map[string]any {
	h.t.Helper()
	r := h.admin(action, adminToken, body)
	if r.status != http.StatusOK {
		h.t.Fatalf("POST /admin/%s %s: status %d, want 200: %s", action, body, r.status, r.body)
	}
	return r.json(h.t)
}

// TestStatusPageShowsEachState: failures through the real server, the
// day's budget and a pause through the admin API put the routes of one
// gateway in every state at once; /status.json tells each (how it works
// each state out from the store: package status's TestSnapshotStates) and
// the page says the same as the JSON for every route.
func TestStatusPageShowsEachState(t *testing.T) {
	checkLeaks(t)
	h := newStatusHarness(t, true)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	h.ask("answer") // groq's 70b rests; gemini answers
	h.ask("small")
	h.ask("small") // groq's 8b has spent its 2 requests of the day
	h.mustAdmin("pause", `{"provider":"cerebras"}`)
	s := h.snapshot()
	for id, want := range map[string]string{
		"groq/llama-3.3-70b-versatile": status.Resting,
		"gemini/gemini-2.5-flash-lite": status.Ready,
		"groq/llama-3.1-8b-instant":    status.Exhausted,
		"cerebras/gpt-oss-120b":        status.Paused,
		"mistral/mistral-small-latest": status.Disabled,
	} {
		if got := routeOf(t, s, id).State; got != want {
			t.Errorf("%s: state = %q, want %q", id, got, want)
		}
	}
	// The page says the same as the JSON.
	page := string(h.get("/status").body)
	for _, r := range s.Routes {
		want := `data-route="` + r.ID + `" data-state="` + r.State + `"`
		if !strings.Contains(page, want) {
			t.Errorf("/status does not contain %s", want)
		}
	}
}

// TestAdminPausesShowInStatus: a pause set through the admin API, of a
// route, of a route for a while (its "for" and "reason"), or of a whole
// provider, shows in /status.json as package status reads it (paused, by
// the key, until lifted or until the "for" is over; the chain degraded)
// and on the page.
func TestAdminPausesShowInStatus(t *testing.T) {
	checkLeaks(t)
	const (
		big   = "groq/llama-3.3-70b-versatile"
		small = "groq/llama-3.1-8b-instant"
	)
	tests := []struct {
		name      string
		pause     string
		route     string
		wantKey   string
		wantUntil time.Duration // from t0; 0: until lifted
		wantChain string        // answer's state; "" unchecked
	}{
		{"paused by hand", `{"route":"` + big + `"}`, big, big, 0, status.ChainDegraded},
		{"paused by hand for a while", `{"route":"` + big + `","for":"2h","reason":"rotating the key"}`, big, big, 2 * time.Hour, ""},
		{"a paused provider pauses its routes", `{"provider":"groq"}`, small, "provider:groq", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newStatusHarness(t, true)
			h.mustAdmin("pause", tt.pause)
			s := h.snapshot()
			r := routeOf(t, s, tt.route)
			if r.State != status.Paused || r.Rest == nil || r.Rest.Class != "paused" || r.Rest.Key != tt.wantKey {
				t.Fatalf("%s: state %q, rest %+v; want paused by %s", tt.route, r.State, r.Rest, tt.wantKey)
			}
			switch {
			case tt.wantUntil == 0 && r.Rest.Until != nil:
				t.Errorf("a pause set by hand ends %v, want until lifted", r.Rest.Until)
			case tt.wantUntil != 0 && (r.Rest.Until == nil || !r.Rest.Until.Equal(t0.Add(tt.wantUntil))):
				t.Errorf("until = %v, want %v", r.Rest.Until, t0.Add(tt.wantUntil))
			}
			for _, c := range s.Chains {
				if tt.wantChain != "" && c.Name == "answer" && c.State != tt.wantChain {
					t.Errorf("chain answer: state %q, want %q", c.State, tt.wantChain)
				}
			}
			page := string(h.get("/status").body)
			if want := `data-route="` + tt.route + `" data-state="paused"`; !strings.Contains(page, want) {
				t.Errorf("/status does not contain %s", want)
			}
		})
	}
}

// TestStatusFigures checks the bars and the figures after traffic.
func TestStatusFigures(t *testing.T) {
	checkLeaks(t)
	h := newStatusHarness(t, false)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	h.ask("answer") // groq fails over to gemini
	h.ask("answer") // groq rests: gemini answers first
	h.ask("small")
	s := h.snapshot()
	if s.Admin {
		t.Errorf("admin = true without an admin token")
	}
	big := routeOf(t, s, "groq/llama-3.3-70b-versatile")
	if big.LastError != "overloaded" || big.Attempts != 1 || big.SuccessRate == nil || *big.SuccessRate != 0 {
		t.Errorf("groq 70b: last error %q, attempts %d, success %v; want overloaded, 1, 0", big.LastError, big.Attempts, big.SuccessRate)
	}
	if big.FailoverRate == nil || *big.FailoverRate != 1 {
		t.Errorf("groq 70b: failover rate %v, want 1", big.FailoverRate)
	}
	gem := routeOf(t, s, "gemini/gemini-2.5-flash-lite")
	if gem.OK != 2 || gem.Samples != 2 || gem.SuccessRate == nil || *gem.SuccessRate != 1 {
		t.Errorf("gemini: ok %d, latency samples %d, success %v; want 2, 2, 1", gem.OK, gem.Samples, gem.SuccessRate)
	}
	if gem.Budget.RPD.Used != 2 || gem.Budget.RPD.Limit == 0 {
		t.Errorf("gemini requests today: %d of %d, want 2 of a known limit", gem.Budget.RPD.Used, gem.Budget.RPD.Limit)
	}
	sm := routeOf(t, s, "groq/llama-3.1-8b-instant")
	if sm.Budget.RPD.Used != 1 || sm.Budget.RPD.Limit != 2 {
		t.Errorf("groq 8b requests today: %d of %d, want 1 of 2", sm.Budget.RPD.Used, sm.Budget.RPD.Limit)
	}
	if sm.Budget.RPM.Used != 1 || sm.Budget.RPM.Limit == 0 {
		t.Errorf("groq 8b requests this minute: %d of %d, want 1 of a known limit", sm.Budget.RPM.Used, sm.Budget.RPM.Limit)
	}
	var answer status.Chain
	for _, c := range s.Chains {
		if c.Name == "answer" {
			answer = c
		}
	}
	if answer.Answered != 2 || answer.Failovers != 1 || answer.FailoverRate == nil || *answer.FailoverRate != 0.5 {
		t.Errorf("chain answer: answered %d, failovers %d, rate %v; want 2, 1, 0.5", answer.Answered, answer.Failovers, answer.FailoverRate)
	}
}

// TestAdminAuth covers who may act, and that nothing changes when the
// action is refused.
func TestAdminAuth(t *testing.T) {
	checkLeaks(t)
	const body = `{"route":"groq/llama-3.3-70b-versatile"}`
	tests := []struct {
		name       string
		admin      bool // a token is configured
		method     string
		action     string
		token      string
		body       string
		wantStatus int
	}{
		{"actions off without a configured token", false, "POST", "pause", adminToken, body, http.StatusForbidden},
		{"no token", true, "POST", "pause", "", body, http.StatusUnauthorized},
		{"wrong token", true, "POST", "pause", adminToken + "x", body, http.StatusUnauthorized},
		{"short token", true, "POST", "pause", "adm", body, http.StatusUnauthorized},
		{"GET is not an action", true, "GET", "pause", adminToken, "", http.StatusMethodNotAllowed},
		{"unknown action", true, "POST", "reboot", adminToken, body, http.StatusNotFound},
		{"unknown route", true, "POST", "pause", adminToken, `{"route":"groq/nope"}`, http.StatusNotFound},
		{"unknown provider", true, "POST", "resume", adminToken, `{"provider":"nope"}`, http.StatusNotFound},
		{"neither route nor provider", true, "POST", "pause", adminToken, `{}`, http.StatusBadRequest},
		{"not JSON", true, "POST", "pause", adminToken, `route=x`, http.StatusBadRequest},
		{"probing a disabled route", true, "POST", "probe", adminToken, `{"route":"mistral/mistral-small-latest"}`, http.StatusConflict},
		{"a bad duration", true, "POST", "pause", adminToken, `{"route":"groq/llama-3.3-70b-versatile","for":"soon"}`, http.StatusBadRequest},
		{"the right token", true, "POST", "pause", adminToken, body, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newStatusHarness(t, tt.admin)
			var got reply
			if tt.method == "POST" {
				got = h.admin(tt.action, tt.token, tt.body)
			} else {
				got = h.get("/admin/" + tt.action)
			}
			if got.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d: %s", got.status, tt.wantStatus, got.body)
			}
			_, paused := h.rest("groq/llama-3.3-70b-versatile")
			if paused != (tt.wantStatus == http.StatusOK) {
				t.Errorf("route paused = %v after a %d", paused, got.status)
			}
		})
	}
}

// TestAdminPauseResume checks that a pause takes the route out of the next
// request and a resume puts it back, for a route and for a provider.
func TestAdminPauseResume(t *testing.T) {
	checkLeaks(t)
	tests := []struct {
		name   string
		target string
	}{
		{"route", `{"route":"groq/llama-3.3-70b-versatile"}`},
		{"provider", `{"provider":"groq"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newStatusHarness(t, true)
			h.mustAdmin("pause", tt.target)
			got := h.ask("answer")
			if m := got.json(t)["model"]; m != "gemini/gemini-2.5-flash-lite" {
				t.Errorf("paused: answered by %v, want gemini/gemini-2.5-flash-lite", m)
			}
			if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 0 {
				t.Errorf("paused route called %d times, want 0", n)
			}
			h.mustAdmin("resume", tt.target)
			got = h.ask("answer")
			if m := got.json(t)["model"]; m != "groq/llama-3.3-70b-versatile" {
				t.Errorf("resumed: answered by %v, want groq/llama-3.3-70b-versatile", m)
			}
		})
	}
}

// TestAdminProbe checks seed 004's rule: a probe that succeeds resumes a
// route rested automatically, but a pause set by hand stays.
func TestAdminProbe(t *testing.T) {
	checkLeaks(t)
	const big = "groq/llama-3.3-70b-versatile"
	tests := []struct {
		name      string
		setup     func(h *harness)
		probe     emulator.Step
		target    string
		wantCode  int
		wantClass string
		wantState string
	}{
		{"a good probe lifts an automatic rest", func(h *harness) {
			h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
			h.ask("answer")
		}, emulator.Step{Kind: emulator.Answer}, `{"route":"` + big + `"}`, http.StatusOK, "ok", status.Ready},
		{"a good probe of the provider lifts its auth rest", func(h *harness) {
			h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Unauthorized})
			h.ask("answer")
		}, emulator.Step{Kind: emulator.Answer}, `{"provider":"groq"}`, http.StatusOK, "ok", status.Ready},
		{"a good probe leaves a pause set by hand", func(h *harness) {
			h.mustAdmin("pause", `{"route":"`+big+`"}`)
		}, emulator.Step{Kind: emulator.Answer}, `{"route":"` + big + `"}`, http.StatusOK, "ok", status.Paused},
		{"a failed probe rests the route", func(h *harness) {}, emulator.Step{Kind: emulator.HighDemand},
			`{"route":"` + big + `"}`, http.StatusBadGateway, "overloaded", status.Resting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newStatusHarness(t, true)
			tt.setup(h)
			h.emu.Script("groq", "llama-3.3-70b-versatile", tt.probe)
			got := h.admin("probe", adminToken, tt.target)
			if got.status != tt.wantCode {
				t.Fatalf("probe: status %d, want %d: %s", got.status, tt.wantCode, got.body)
			}
			if c := got.json(t)["class"]; c != tt.wantClass {
				t.Errorf("probe class = %v, want %s", c, tt.wantClass)
			}
			if s := routeOf(t, h.snapshot(), big).State; s != tt.wantState {
				t.Errorf("after the probe: %s is %q, want %q", big, s, tt.wantState)
			}
		})
	}
}

// TestMetrics checks /metrics after traffic: parsed with Prometheus's own
// parser, with every label inside the closed vocabulary.
func TestMetrics(t *testing.T) {
	checkLeaks(t)
	h := newStatusHarness(t, true)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	h.ask("answer")
	h.ask("small")
	// A streamed answer is a request too, counted when it ends.
	if r := h.post("/v1/chat/completions", "application/json", []byte(`{"model":"small","stream":true,"messages":[{"role":"user","content":"What does tollfree do?"}]}`)); r.status != http.StatusOK || !bytes.Contains(r.body, []byte("[DONE]")) {
		t.Fatalf("streamed request: %d %.200q", r.status, r.body)
	}
	h.mustAdmin("pause", `{"provider":"cerebras"}`)
	got := h.get("/metrics")
	if got.status != http.StatusOK {
		t.Fatalf("GET /metrics: %d", got.status)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(got.body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	value := func(name string, labels map[string]string) (float64, bool) {
		f := fams[name]
		if f == nil {
			return 0, false
		}
	next:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
		return 0, false
	}
	tests := []struct {
		name   string
		metric string
		labels map[string]string
		want   float64 // -1: any positive value
	}{
		{"failed attempt", metrics.NameAttempts, map[string]string{"route": "groq/llama-3.3-70b-versatile", "outcome": "overloaded"}, 1},
		{"answering attempt", metrics.NameAttempts, map[string]string{"route": "gemini/gemini-2.5-flash-lite", "outcome": "ok"}, 1},
		{"latency observed", metrics.NameAttemptSeconds, map[string]string{"route": "gemini/gemini-2.5-flash-lite"}, 1},
		{"no latency for a failure", metrics.NameAttemptSeconds, map[string]string{"route": "groq/llama-3.3-70b-versatile"}, 0},
		{"rest started", metrics.NameRests, map[string]string{"key": "groq/llama-3.3-70b-versatile", "class": "overloaded"}, 1},
		{"resting now", metrics.NameResting, map[string]string{"key": "groq/llama-3.3-70b-versatile", "class": "overloaded"}, 1},
		{"provider paused", metrics.NameResting, map[string]string{"key": "provider:cerebras", "class": "paused"}, 1},
		{"route state", metrics.NameRouteState, map[string]string{"route": "groq/llama-3.3-70b-versatile", "state": "resting"}, 1},
		{"route state paused", metrics.NameRouteState, map[string]string{"route": "cerebras/gpt-oss-120b", "state": "paused"}, 1},
		{"disabled", metrics.NameRouteState, map[string]string{"route": "mistral/mistral-small-latest", "state": "disabled"}, 1},
		{"budget used", metrics.NameBudgetUsed, map[string]string{"key": "groq/llama-3.1-8b-instant", "window": "rpd"}, 2},
		{"budget left", metrics.NameBudgetLeft, map[string]string{"key": "groq/llama-3.1-8b-instant", "window": "rpd"}, 0},
		{"budget limit", metrics.NameBudgetLimit, map[string]string{"key": "groq/llama-3.1-8b-instant", "window": "rpd"}, 2},
		{"tokens counted", metrics.NameTokens, map[string]string{"route": "groq/llama-3.1-8b-instant", "direction": "out"}, -1},
		{"cache hits ready at zero", metrics.NameCacheHits, map[string]string{"chain": "answer"}, 0},
		{"fallbacks ready at zero", metrics.NameFallbacks, map[string]string{"chain": "answer", "kind": "message"}, 0},
		{"requests answered, one of them streamed", metrics.NameRequests, map[string]string{"chain": "small", "outcome": "answered"}, 2},
		{"requests answered on answer", metrics.NameRequests, map[string]string{"chain": "answer", "outcome": "answered"}, 1},
		{"no fallback served", metrics.NameRequests, map[string]string{"chain": "answer", "outcome": "fallback"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := value(tt.metric, tt.labels)
			if !ok {
				t.Fatalf("%s%v is not in /metrics", tt.metric, tt.labels)
			}
			if tt.want >= 0 && v != tt.want {
				t.Errorf("%s%v = %v, want %v", tt.metric, tt.labels, v, tt.want)
			}
			if tt.want < 0 && v <= 0 {
				t.Errorf("%s%v = %v, want > 0", tt.metric, tt.labels, v)
			}
		})
	}
	// Every label value comes from the plan or the closed vocabulary.
	allowed := map[string]bool{metrics.Other: true, metrics.ClassPaused: true}
	for _, id := range h.plan.RouteOrder {
		allowed[id] = true
		allowed["provider:"+h.plan.Routes[id].Provider.Name] = true
	}
	for _, c := range h.plan.ChainOrder {
		allowed[c] = true
	}
	for c := failure.OK; c < failure.NumClasses; c++ {
		allowed[c.String()] = true
	}
	for _, v := range []string{"answered", "cached", "fallback", "failed", "rejected", "cancelled", "message", "search", "error",
		"in", "out", "rpm", "rpd", "tpm", "tpd", "rph", "tph", "tpmo", "rpmo", "ready", "failing", "resting", "paused", "exhausted", "disabled",
		metrics.MethodPrefix, metrics.MethodInstruct, metrics.MethodAfresh} {
		allowed[v] = true
	}
	for name, f := range fams {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue // the runtime's and the process's collectors (issue 32)
		}
		if !strings.HasPrefix(name, "tollfree_") {
			t.Errorf("metric %s is not tollfree's (a global registry leaked in?)", name)
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "le" {
					continue
				}
				if !allowed[l.GetValue()] {
					t.Errorf("%s: label %s=%q is outside the vocabulary", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestNothingSecretShows plants a recognisable prompt, answer and keys, runs
// traffic and failures with them, and checks that none of them appears on
// the status page, its JSON, its live part or the metrics.
func TestNothingSecretShows(t *testing.T) {
	checkLeaks(t)
	const (
		prompt = "PLANTED-PROMPT zebra quartz lantern 4417"
		answer = "PLANTED-ANSWER ochre violin 9923"
	)
	h := newStatusHarness(t, true)
	h.emu.Script("groq", "llama-3.3-70b-versatile",
		emulator.Step{Kind: emulator.BadRequest, Text: "invalid value in '" + prompt + "'"},
		emulator.Step{Kind: emulator.HighDemand})
	h.emu.Script("gemini", "gemini-2.5-flash-lite", emulator.Step{Kind: emulator.Answer, Text: answer}, emulator.Step{Kind: emulator.Answer, Text: answer})
	body := `{"model":"answer","messages":[{"role":"user","content":"` + prompt + `"}]}`
	h.post("/v1/chat/completions", "application/json", []byte(body))
	if got := h.post("/v1/chat/completions", "application/json", []byte(body)); !strings.Contains(string(got.body), "PLANTED-ANSWER") {
		t.Fatalf("the planted answer did not come back (the test would prove nothing): %s", got.body)
	}
	h.mustAdmin("pause", `{"provider":"cerebras","reason":"maintenance"}`)
	secrets := []string{"PLANTED-PROMPT", "zebra quartz", "PLANTED-ANSWER", "ochre violin", adminToken}
	for _, k := range testKeys {
		secrets = append(secrets, k)
	}
	for _, path := range []string{"/status", "/status?part=live", "/status.json", "/metrics"} {
		got := h.get(path)
		if got.status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, got.status)
		}
		for _, s := range secrets {
			if bytes.Contains(got.body, []byte(s)) {
				t.Errorf("GET %s shows a secret or user text (%d bytes planted)", path, len(s))
			}
		}
	}
}

// silentChain is a chain whose first route the status tests make hang, so
// that it loses every hedge race to the second.
const silentChain = `
chains:
  fast:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
    hedge_delay: 3s
`

// TestStatusShowsSilentLosses (issue 10, item 5): a route that hangs and
// loses two hedge races in a row rests as a timeout, and /status.json
// shows it resting (timeout), with its 2 silent losses and silent_loser as
// its last error: the router's records reach the status through the
// gateway. (The races and the rest themselves: route's
// TestHedgeSilentLoserRests.)
func TestStatusShowsSilentLosses(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, silentChain)
	const hung = "groq/llama-3.3-70b-versatile"
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang}, emulator.Step{Kind: emulator.Hang})
	for n := 1; n <= 2; n++ {
		done := h.askAsync("fast")
		h.waitCalls("groq", "llama-3.3-70b-versatile", n)
		h.clk.Advance(3 * time.Second)
		if got := <-done; got.status != 200 || got.json(t)["model"] != "cerebras/gpt-oss-120b" {
			t.Fatalf("request %d: got %d %s, want cerebras/gpt-oss-120b's answer", n, got.status, got.body)
		}
		h.waitIdle()
		h.gw.Router().Close() // the loser is wound down and recorded
	}
	rt := routeOf(t, h.snapshot(), hung)
	if rt.State != status.Resting || rt.Rest == nil || rt.Rest.Class != "timeout" || rt.SilentLosses != 2 || rt.LastError != "silent_loser" {
		t.Errorf("/status.json shows %s as %+v (rest %+v), want resting (timeout) with 2 silent losses, last error silent_loser", hung, rt, rt.Rest)
	}
}

// TestStatusSilentLoserNotReady (issue 16 item 4): a route that hangs on
// every call but always loses the hedge race is never shown ready with no
// failures. Two silent losses rest it (timeout), and the page says so;
// when that rest has ended and nothing has answered on it since, it is
// failing, not ready: /status.json and its card say its latest attempts
// were silent, and the card counts its races lost in silence.
func TestStatusSilentLoserNotReady(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, silentChain)
	const hung = "groq/llama-3.3-70b-versatile"
	card := `data-route="` + hung + `"`
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang}, emulator.Step{Kind: emulator.Hang})
	for n := 1; n <= 2; n++ {
		done := h.askAsync("fast")
		h.waitCalls("groq", "llama-3.3-70b-versatile", n)
		h.clk.Advance(3 * time.Second)
		if got := <-done; got.status != 200 {
			t.Fatalf("request %d: got %d %s, want the hedge's answer", n, got.status, got.body)
		}
		h.waitIdle()
		h.gw.Router().Close() // the loser is wound down and recorded
	}
	rt := routeOf(t, h.snapshot(), hung)
	if rt.State != status.Resting || rt.Rest == nil || rt.Rest.Class != "timeout" {
		t.Fatalf("after 2 silent losses %s is %q (rest %+v), want resting (timeout)", hung, rt.State, rt.Rest)
	}
	page := string(h.get("/status").body)
	if text := cardText(t, page, card); !strings.Contains(text, "resting") || !strings.Contains(text, "timeout") || !strings.Contains(text, "2 races lost in silence") {
		t.Errorf("the resting card says %q, want resting, timeout and 2 races lost in silence", text)
	}
	// Read without its script, the page gives the rest's end in UTC, in a
	// <time> element the script shows in the viewer's zone.
	if until := rt.Rest.Until.UTC(); !strings.Contains(page, `<time datetime="`+until.Format(time.RFC3339)+`" title="`+until.Format("15:04:05 UTC")+`">`+until.Format("15:04:05 UTC")+`</time>`) {
		t.Errorf("the page does not give the rest's end, %s, as a <time> in UTC", until.Format(time.RFC3339))
	}

	h.clk.Advance(rt.Rest.Until.Sub(h.clk.Now()) + time.Minute) // the rest ends; nothing answered since
	rt = routeOf(t, h.snapshot(), hung)
	if rt.State == status.Ready || rt.State != status.Failing || rt.Latest == nil || rt.Latest.Silent != 2 {
		t.Errorf("once its rest ended, %s is %q (latest %+v), want failing with 2 latest silent losses, not ready", hung, rt.State, rt.Latest)
	}
	text := cardText(t, string(h.get("/status").body), card)
	for _, want := range []string{"failing", "silent on 2 of its last 2 attempts", "2 races lost in silence"} {
		if !strings.Contains(text, want) {
			t.Errorf("the card of %s says %q, want %q", hung, text, want)
		}
	}
}

// TestStatusCountsRescuesAndRetries (issue 13 item 5): the attempts the
// router records when it rescues a broken stream and when it retries a
// blip politely, handed to the gateway's recorders as the router hands
// them (Router.Record), show on the status page, in /status.json and in
// /metrics: per route, the streams it rescued by method and its polite
// retries; per chain, the streams rescued. Routes and chains with none
// show no such line.
func TestStatusCountsRescuesAndRetries(t *testing.T) {
	checkLeaks(t)
	h := newStatusHarness(t, false)
	const groq, gem, cere = "groq/llama-3.3-70b-versatile", "gemini/gemini-2.5-flash-lite", "cerebras/gpt-oss-120b"
	feedRescues(h)

	page := string(h.get("/status").body)
	live := string(h.get("/status?part=live").body)
	for _, body := range []string{page, live} {
		for _, tt := range []struct {
			card, want, not string
		}{
			{`data-route="` + cere + `"`, "rescued 3 broken streams (prefix 1, instruct 1, afresh 1)", "polite retr"},
			{`data-route="` + gem + `"`, "2 polite retries, 1 answered", "rescued"},
			{`data-route="` + groq + `"`, "3 attempts · last error overloaded", "rescued"},
			{`data-chain="answer"`, "5 answered · 0 unanswered · 0 cached · 3 broken streams rescued", ""},
			{`data-chain="small"`, "0 answered", "rescued"},
		} {
			text := cardText(t, body, tt.card)
			if !strings.Contains(text, tt.want) {
				t.Errorf("the card %s says %q, want it to say %q", tt.card, text, tt.want)
			}
			if tt.not != "" && strings.Contains(text, tt.not) {
				t.Errorf("the card %s says %q: a count it has none of (%q)", tt.card, text, tt.not)
			}
		}
	}

	s := h.snapshot()
	if r := routeOf(t, s, cere); r.StreamsRescued != 3 || r.RescuedBy["prefix"] != 1 || r.RescuedBy["instruct"] != 1 || r.RescuedBy["afresh"] != 1 {
		t.Errorf("/status.json: %s rescued %d streams %v, want 3, one each way", cere, r.StreamsRescued, r.RescuedBy)
	}
	if r := routeOf(t, s, gem); r.PoliteRetries != 2 || r.PoliteRetriesAnswered != 1 || r.RescuedBy != nil {
		t.Errorf("/status.json: %s made %d polite retries (%d answered), rescues %v; want 2 (1 answered), none", gem, r.PoliteRetries, r.PoliteRetriesAnswered, r.RescuedBy)
	}
	for _, c := range s.Chains {
		if c.Name == "answer" && (c.StreamsRescued != 3 || c.Answered != 5 || c.Failovers != 4) {
			t.Errorf("/status.json: chain answer %d streams rescued, %d answered, %d by failover; want 3, 5, 4 (the retry answered on its own route)", c.StreamsRescued, c.Answered, c.Failovers)
		}
	}

	metricsText := string(h.get("/metrics").body)
	for _, want := range []string{
		`tollfree_stream_rescues_total{chain="answer",method="prefix",route="` + cere + `"} 1`,
		`tollfree_stream_rescues_total{chain="answer",method="afresh",route="` + cere + `"} 1`,
		`tollfree_polite_retries_total{chain="answer",outcome="answered",route="` + gem + `"} 1`,
		`tollfree_polite_retries_total{chain="answer",outcome="failed",route="` + gem + `"} 1`,
	} {
		if !strings.Contains(metricsText, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// feedRescues hands the gateway's recorders, as the router does, the
// attempts of three streams that broke on groq and that cerebras finished
// (by prefix, by instruction, and afresh: nothing had been streamed yet),
// and of two blips on gemini retried politely: one answered there, one
// failed again and cerebras answered.
func feedRescues(h *harness) {
	const groq, gem, cere = "groq/llama-3.3-70b-versatile", "gemini/gemini-2.5-flash-lite", "cerebras/gpt-oss-120b"
	rec := h.gw.Router().Record
	at := func(a route.Attempt) {
		a.Chain, a.Start, a.Latency = "answer", h.clk.Now(), 400*time.Millisecond
		a.Provider, a.Model, _ = strings.Cut(a.Route, "/")
		rec(&a)
	}
	for i, method := range []string{"prefix", "instruct", ""} {
		id := fmt.Sprint("stream-", i)
		at(route.Attempt{RequestID: id, Route: groq, Class: failure.Overloaded, Stream: true})
		at(route.Attempt{RequestID: id, Route: cere, Class: failure.OK, Stream: true, Part: 1, Method: method})
	}
	at(route.Attempt{RequestID: "blip-1", Route: gem, Class: failure.Overloaded})
	at(route.Attempt{RequestID: "blip-1", Route: gem, Class: failure.OK, Retry: true})
	at(route.Attempt{RequestID: "blip-2", Route: gem, Class: failure.RateMinute})
	at(route.Attempt{RequestID: "blip-2", Route: gem, Class: failure.Overloaded, Retry: true})
	at(route.Attempt{RequestID: "blip-2", Route: cere, Class: failure.OK})
}

// cardText returns the text a reader sees on the card of the status page
// body that carries attr: its tags dropped, its white space collapsed.
func cardText(t *testing.T, body, attr string) string {
	t.Helper()
	i := strings.Index(body, attr)
	if i < 0 {
		t.Fatalf("the page has no card %s", attr)
	}
	card, _, _ := strings.Cut(body[i:], "</section>")
	card = card[strings.IndexByte(card, '>')+1:]
	var b strings.Builder
	in := false
	for _, r := range card {
		switch {
		case r == '<':
			in = true
			b.WriteByte(' ')
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return html.UnescapeString(strings.Join(strings.Fields(b.String()), " "))
}
