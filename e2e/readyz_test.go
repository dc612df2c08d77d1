package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator/emutest"
)

// readyzBody is what /readyz answers.
type readyzBody struct {
	Ready  bool   `json:"ready"`
	Status string `json:"status"`
	Reason string `json:"reason"`
	Config string `json:"config"`
	Chains map[string]struct {
		Enabled int `json:"enabled"`
		Routes  int `json:"routes"`
	} `json:"chains"`
	Checks map[string]string `json:"checks"`
}

// readyz fetches /readyz from a gateway's URL.
func readyz(t *testing.T, base string) (int, readyzBody) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	defer resp.Body.Close()
	var b readyzBody
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil {
		t.Fatalf("/readyz %d is not its JSON: %v", resp.StatusCode, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("/readyz Content-Type %q", ct)
	}
	return resp.StatusCode, b
}

// TestReadyzServesThenDrains: a gateway with routes is ready (200, the
// routes enabled per chain, config loaded); once it drains for shutdown,
// /readyz answers 503 "shutting down" while /healthz and the API go on
// serving the requests that still come (issue 17).
func TestReadyzServesThenDrains(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, `
chains:
  answer: {routes: [groq/llama-3.3-70b-versatile, gemini/gemini-2.5-flash]}
`)
	code, b := readyz(t, h.srv.URL)
	if code != 200 || !b.Ready || b.Status != "ok" || b.Config != "loaded" || b.Reason != "" {
		t.Errorf("/readyz = %d %+v, want 200 ready ok, config loaded", code, b)
	}
	if c := b.Chains["answer"]; c.Enabled != 2 || c.Routes != 2 {
		t.Errorf("/readyz chains[answer] = %+v, want 2 of 2 enabled", c)
	}

	h.gw.Drain()
	code, b = readyz(t, h.srv.URL)
	if code != http.StatusServiceUnavailable || b.Ready || b.Status != "shutting down" {
		t.Errorf("draining: /readyz = %d %+v, want 503 shutting down", code, b)
	}
	if r := h.get("/healthz"); r.status != 200 {
		t.Errorf("draining: /healthz = %d, want 200: the process is alive", r.status)
	}
	if r := h.ask("answer"); r.status != 200 || r.content(t) != emutest.Answer("groq/llama-3.3-70b-versatile") {
		t.Errorf("draining: a request got %d %s, want the route's answer", r.status, r.body)
	}
}

// TestReadyzNoRoute: when no chain has a route it can call (no key set),
// /readyz is 503 and says which variable to set; /healthz stays 200,
// degraded, since the process is alive.
func TestReadyzNoRoute(t *testing.T) {
	checkLeaks(t)
	h := newHarnessEnv(t, `
chains:
  answer: {routes: [groq/llama-3.3-70b-versatile], fallback: {message: "resting"}}
`, map[string]string{"GROQ_API_KEY": ""})
	code, b := readyz(t, h.srv.URL)
	if code != http.StatusServiceUnavailable || b.Ready || b.Status != "no route enabled" {
		t.Errorf("/readyz = %d %+v, want 503 no route enabled", code, b)
	}
	if !strings.Contains(b.Reason, "GROQ_API_KEY") {
		t.Errorf("/readyz reason %q, want the variable to set", b.Reason)
	}
	if c := b.Chains["answer"]; c.Enabled != 0 || c.Routes != 1 {
		t.Errorf("/readyz chains[answer] = %+v, want 0 of 1", c)
	}
	if r := h.get("/healthz"); r.status != 200 || !strings.Contains(string(r.body), `"degraded"`) {
		t.Errorf("/healthz = %d %s, want 200 degraded", r.status, r.body)
	}
}

// TestReadyzDegraded: a chain without a route it can call, or a state
// store carrying on locally while Redis is away, leaves the gateway ready
// (200: it serves, taking it out of the pool would not help) but
// "degraded", saying why.
func TestReadyzDegraded(t *testing.T) {
	checkLeaks(t)
	yaml := "data_dir: " + t.TempDir() + "\ncall_log: \"off\"\n" + strings.ReplaceAll(emutest.Providers, "EMU", "http://127.0.0.1:9") + `
chains:
  answer: {routes: [groq/llama-3.3-70b-versatile]}
  quick: {routes: [cerebras/llama3.1-8b], fallback: {message: "resting"}}
`
	plan, err := config.Parse("test.yaml", []byte(yaml), emutest.Env(map[string]string{"CEREBRAS_API_KEY": ""}))
	if err != nil {
		t.Fatal(err)
	}
	state := "redis"
	gw, err := tollfree.New(tollfree.Options{Plan: plan, Health: func() map[string]string { return map[string]string{"state": state} }})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	code, b := readyz(t, srv.URL)
	if code != 200 || !b.Ready || b.Status != "degraded" || !strings.Contains(b.Reason, "chain quick") || strings.Contains(b.Reason, "chain answer") {
		t.Errorf("one chain without routes: /readyz = %d %+v, want 200 degraded naming chain quick", code, b)
	}
	if b.Checks["state"] != "redis" {
		t.Errorf("/readyz checks[state] = %q, want the store's line", b.Checks["state"])
	}
	state = "local (redis unreachable: carrying on with local state)"
	code, b = readyz(t, srv.URL)
	if code != 200 || b.Status != "degraded" || !strings.Contains(b.Reason, "state: local (redis unreachable") {
		t.Errorf("redis away: /readyz = %d %+v, want 200 degraded naming the state store", code, b)
	}
}
