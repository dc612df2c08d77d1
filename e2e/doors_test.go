package e2e_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/testenv"
)

// gatewayKey is the caller key of the tests on a gateway that is not open.
const gatewayKey = "gw_doors_test_key_51c2"

// closedConfig is a gateway that asks callers for a key, with an admin
// token; extra is added to it (a status: line).
func closedConfig(extra string) stackOptions {
	return stackOptions{
		config: "gateway_keys: [${TOLLFREE_KEY}]\nadmin_token: ${TOLLFREE_ADMIN_TOKEN}\n" + extra + answerChain,
		env:    map[string]string{"TOLLFREE_KEY": gatewayKey, "TOLLFREE_ADMIN_TOKEN": adminToken},
	}
}

// getAuth fetches path with token as its bearer token ("" sends none).
func (h *harness) getAuth(path, token string) reply {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.srv.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestStatusAndMetricsNeedAToken: with gateway_keys set, /status,
// /status.json and /metrics answer 401 and show nothing without a gateway
// key or the admin token, and 200 with either (issue 10 item 10);
// status: public opens them again.
func TestStatusAndMetricsNeedAToken(t *testing.T) {
	checkLeaks(t)
	const route = "groq/llama-3.3-70b-versatile"
	paths := []string{"/status", "/status?part=live", "/status.json", "/metrics"}
	h := harnessOf(t, startStackWith(t, closedConfig("")))
	if r := h.post("/v1/chat/completions", "application/json", []byte(`{"model":"answer","messages":[{"role":"user","content":"hi"}]}`)); r.status != 401 {
		t.Fatalf("chat without a key: %d, want 401 (the gateway is not open)", r.status)
	}
	for _, path := range paths {
		for _, tc := range []struct {
			name, token string
			want        int
		}{
			{"no token", "", 401},
			{"wrong token", "not-a-key", 401},
			{"gateway key", gatewayKey, 200},
			{"admin token", adminToken, 200},
		} {
			r := h.getAuth(path, tc.token)
			if r.status != tc.want {
				t.Errorf("GET %s with %s: %d, want %d: %.200s", path, tc.name, r.status, tc.want, r.body)
				continue
			}
			shows := strings.Contains(string(r.body), route)
			if tc.want == 401 && shows {
				t.Errorf("GET %s with %s: 401 but the body names %s", path, tc.name, route)
			}
			if tc.want == 200 && !shows {
				t.Errorf("GET %s with %s: the body does not name %s: %.200s", path, tc.name, route, r.body)
			}
		}
	}
	// The page a browser opens without a token asks for one.
	if r := h.getAuth("/status", ""); !strings.Contains(string(r.body), `id="token"`) || !strings.Contains(string(r.body), "data-locked") {
		t.Errorf("GET /status without a token does not ask for one: %.300s", r.body)
	}

	open := harnessOf(t, startStackWith(t, closedConfig("status: public\n")))
	for _, path := range paths {
		if r := open.getAuth(path, ""); r.status != 200 {
			t.Errorf("status: public, GET %s without a token: %d, want 200", path, r.status)
		}
	}
}

// TestBearerInAnyCase: "Authorization: bearer <token>" (the scheme in
// lower case, as RFC 7235 allows and some clients send) is read the same
// on the chat API, /admin/*, /status, /status.json and /metrics (issue 32:
// the owner on the chat API, 401 everywhere else).
func TestBearerInAnyCase(t *testing.T) {
	checkLeaks(t)
	h := harnessOf(t, startStackWith(t, closedConfig("")))
	do := func(method, path, auth, body string) reply {
		t.Helper()
		req, err := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", auth)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return reply{status: resp.StatusCode, header: resp.Header, body: b}
	}
	for _, scheme := range []string{"bearer", "BEARER", "Bearer"} {
		for _, path := range []string{"/status", "/status.json", "/metrics"} {
			for _, tok := range []string{gatewayKey, adminToken} {
				if r := do("GET", path, scheme+" "+tok, ""); r.status != 200 {
					t.Errorf("GET %s with %q and a valid token: %d, want 200", path, scheme, r.status)
				}
			}
		}
		if r := do("POST", "/v1/chat/completions", scheme+" "+gatewayKey, `{"model":"answer","messages":[{"role":"user","content":"hi"}]}`); r.status != 200 {
			t.Errorf("chat with %q and the gateway key: %d, want 200: %.200s", scheme, r.status, r.body)
		}
		if r := do("POST", "/admin/pause", scheme+" "+adminToken, `{"route":"groq/llama-3.3-70b-versatile","for":"1m"}`); r.status != 200 {
			t.Errorf("POST /admin/pause with %q and the admin token: %d, want 200: %.200s", scheme, r.status, r.body)
		}
		if r := do("POST", "/admin/resume", scheme+" "+adminToken, `{"route":"groq/llama-3.3-70b-versatile"}`); r.status != 200 {
			t.Errorf("POST /admin/resume with %q and the admin token: %d, want 200: %.200s", scheme, r.status, r.body)
		}
	}
	if r := do("POST", "/admin/pause", "bearer "+gatewayKey, `{"route":"groq/llama-3.3-70b-versatile"}`); r.status != 401 {
		t.Errorf("POST /admin/pause with a gateway key: %d, want 401 (only the admin token acts)", r.status)
	}
}

// TestMetricsHaveRuntimeCollectors: /metrics carries the Go runtime's and
// the process's own figures, as every Go exporter does (issue 32: neither
// go_goroutines nor process_resident_memory_bytes was there).
func TestMetricsHaveRuntimeCollectors(t *testing.T) {
	checkLeaks(t)
	h := harnessOf(t, startStackWith(t, closedConfig("")))
	r := h.getAuth("/metrics", adminToken)
	for _, name := range []string{"go_goroutines ", "go_memstats_heap_alloc_bytes ", "process_resident_memory_bytes ", "process_open_fds "} {
		if !strings.Contains(string(r.body), "\n"+name) {
			t.Errorf("/metrics has no %s", strings.TrimSpace(name))
		}
	}
}

// hiddenChain is a chain that hides its routes, as the README's public
// site does, over the emulated groq.
const hiddenChain = `
chains:
  site:
    routes: [groq/llama-3.3-70b-versatile]
    hide_route: true
`

// TestHiddenRoutesStayOffTheStatus: a chain with hide_route keeps its
// routes off /status, /status.json and /metrics too: without keys (the
// README's public site), they answer 401 and name no route without the
// admin token; with gateway keys, a gateway key (what that chain's callers
// hold) does not open them either; the admin token does, and status:
// public opens them on purpose. Before (issue 32), all three were public
// without keys and named every route, budget and provider error.
func TestHiddenRoutesStayOffTheStatus(t *testing.T) {
	checkLeaks(t)
	const route = "groq/llama-3.3-70b-versatile"
	paths := []string{"/status", "/status.json", "/metrics"}
	open := harnessOf(t, startStackWith(t, stackOptions{config: "admin_token: ${TOLLFREE_ADMIN_TOKEN}\n" + hiddenChain, env: map[string]string{"TOLLFREE_ADMIN_TOKEN": adminToken}}))
	if r := open.post("/v1/chat/completions", "application/json", []byte(`{"model":"site","messages":[{"role":"user","content":"hi"}]}`)); r.status != 200 {
		t.Fatalf("chat on the hidden chain: %d %.200s; want 200", r.status, r.body)
	}
	keyedOpts := closedConfig("")
	keyedOpts.config = "gateway_keys: [${TOLLFREE_KEY}]\nadmin_token: ${TOLLFREE_ADMIN_TOKEN}\n" + hiddenChain
	keyed := harnessOf(t, startStackWith(t, keyedOpts))
	for _, path := range paths {
		for _, tc := range []struct {
			name  string
			h     *harness
			token string
			want  int
		}{
			{"no keys, no token", open, "", 401},
			{"no keys, the admin token", open, adminToken, 200},
			{"keys, a gateway key", keyed, gatewayKey, 401},
			{"keys, the admin token", keyed, adminToken, 200},
		} {
			r := tc.h.getAuth(path, tc.token)
			if r.status != tc.want {
				t.Errorf("GET %s, %s: %d, want %d", path, tc.name, r.status, tc.want)
			}
			if tc.want == 401 && strings.Contains(string(r.body), route) {
				t.Errorf("GET %s, %s: the body names %s", path, tc.name, route)
			}
		}
	}
	public := harnessOf(t, startStackWith(t, stackOptions{config: "status: public\n" + hiddenChain}))
	if r := public.getAuth("/status.json", ""); r.status != 200 {
		t.Errorf("status: public with a hidden chain, GET /status.json: %d, want 200 (the operator opened it)", r.status)
	}
}

// listeningPort is the port of serve's first line, whatever it listens on.
var listeningPort = regexp.MustCompile(`tollfree listening on http://\S*:(\d+)`)

// TestStatusPrivateBeyondLoopback: `tollfree serve` listening on every
// interface with no gateway key keeps /status, /status.json and /metrics
// behind the admin token; on loopback it leaves them open. Before (issue
// 32) they were public whenever no gateway key was set.
func TestStatusPrivateBeyondLoopback(t *testing.T) {
	checkLeaks(t)
	bin := testenv.BuildTollfree(t)
	cfg := filepath.Join(t.TempDir(), "tollfree.yaml")
	yaml := "data_dir: " + t.TempDir() + "\nadmin_token: ${TOLLFREE_ADMIN_TOKEN}\nproviders:\n  capd: {base_url: http://127.0.0.1:9/v1, api_key: ${CAPD_API_KEY}, models: {m1: {}}}\nchains:\n  c: {routes: [capd/m1]}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		listen string
		want   int
	}{{"0.0.0.0:0", 401}, {"127.0.0.1:0", 200}} {
		p := testenv.Start(t, []string{"CAPD_API_KEY=" + capdKey, "TOLLFREE_ADMIN_TOKEN=" + adminToken}, bin, "serve", "-config", cfg, "-listen", tc.listen)
		url := "http://127.0.0.1:" + p.WaitOutput(listeningPort, 30*time.Second)[1]
		for _, path := range []string{"/status", "/status.json", "/metrics"} {
			for _, auth := range []struct {
				token string
				want  int
			}{{"", tc.want}, {adminToken, 200}} {
				req, _ := http.NewRequest(http.MethodGet, url+path, nil)
				if auth.token != "" {
					req.Header.Set("Authorization", "Bearer "+auth.token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("GET %s: %v", path, err)
				}
				resp.Body.Close()
				if resp.StatusCode != auth.want {
					t.Errorf("-listen %s, GET %s with token %v: %d, want %d", tc.listen, path, auth.token != "", resp.StatusCode, auth.want)
				}
			}
		}
		if err := p.Stop(syscall.SIGTERM, 30*time.Second); err != nil {
			t.Errorf("tollfree serve after SIGTERM: %v", err)
		}
	}
}
