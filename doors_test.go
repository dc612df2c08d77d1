package tollfree_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
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

// hiddenChain hides its routes; every route fails in the tests.
const hiddenChain = `
chains:
  quiet:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 5s
    deadline: 12s
    hide_route: true
`

// named reports which of the quiet chain's route, model and provider names
// s mentions.
func named(s string) []string {
	var out []string
	for _, n := range []string{"groq", "cerebras", "llama", "gpt-oss", "70b", "120b"} {
		if strings.Contains(strings.ToLower(s), n) {
			out = append(out, n)
		}
	}
	return out
}

// TestHideRouteHoldsInErrors: a chain with hide_route names no route,
// model or provider in what a caller reads: the error when every route is
// down (and its Retry-After explanation), the same while they rest, a
// streamed request's error, and a provider's refusal of the caller's
// request (issue 10 item 10).
func TestHideRouteHoldsInErrors(t *testing.T) {
	h := newHarness(t, hiddenChain)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Unauthorized})
	check := func(what string, r reply, status int) {
		t.Helper()
		if r.status != status {
			t.Fatalf("%s: status %d, want %d: %s", what, r.status, status, r.body)
		}
		if n := named(string(r.body)); len(n) > 0 {
			t.Errorf("%s: the body names %v: %s", what, n, r.body)
		}
		for k, v := range r.header {
			if n := named(k + ": " + strings.Join(v, ",")); len(n) > 0 {
				t.Errorf("%s: header %s: %v names %v", what, k, v, n)
			}
		}
	}
	first := h.ask("quiet")
	check("every route failing", first, 503)
	if ra := first.header.Get("Retry-After"); ra != "30" {
		t.Errorf("Retry-After = %q, want 30 (groq overloaded)", ra)
	}
	if !strings.Contains(string(first.body), "30s") {
		t.Errorf("the error does not say when to come back: %s", first.body)
	}
	check("while both rest", h.ask("quiet"), 503)
	check("streamed, while both rest", h.post("/v1/chat/completions", "application/json",
		[]byte(`{"model":"quiet","stream":true,"messages":[{"role":"user","content":"hi"}]}`)), 503)

	h.clk.Advance(2 * time.Hour) // both rests are over
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.BadRequest,
		Text: "temperature for llama-3.3-70b-versatile must be at most 2 (groq)"})
	check("the caller's own error", h.ask("quiet"), 400)
}

// TestJSONEndpointsRefuseOtherContentTypes: a POST whose body is not
// declared JSON (the types a web page can make a browser send without a
// CORS preflight, or none) gets 415 in OpenAI's envelope and never reaches
// a provider or the admin API; application/json with parameters works
// (issue 10 item 10).
func TestJSONEndpointsRefuseOtherContentTypes(t *testing.T) {
	h := harnessOf(t, startStackWith(t, stackOptions{config: "admin_token: ${TOLLFREE_ADMIN_TOKEN}\n" + answerChain,
		env: map[string]string{"TOLLFREE_ADMIN_TOKEN": adminToken}}))
	body := []byte(`{"model":"answer","messages":[{"role":"user","content":"hi"}]}`)
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x", "", "application/json; charset=utf-16", "application/jsonp"} {
		r := h.post("/v1/chat/completions", ct, body)
		if r.status != http.StatusUnsupportedMediaType {
			t.Errorf("chat with Content-Type %q: %d, want 415: %s", ct, r.status, r.body)
			continue
		}
		if code := r.errorCode(t); code != "unsupported_media_type" {
			t.Errorf("chat with Content-Type %q: code %q, want unsupported_media_type", ct, code)
		}
	}
	if n := len(h.emu.Records()); n != 0 {
		t.Errorf("a provider was called %d times", n)
	}

	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/admin/pause", strings.NewReader(`{"provider":"groq"}`))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("admin pause as text/plain: %d, want 415", resp.StatusCode)
	}
	if _, paused := h.rest("provider:groq"); paused {
		t.Errorf("a text/plain admin request paused groq")
	}

	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON"} {
		if r := h.post("/v1/chat/completions", ct, body); r.status != 200 {
			t.Errorf("chat with Content-Type %q: %d, want 200: %s", ct, r.status, r.body)
		}
	}
}
