package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
)

// newcomerHarness serves emutest's answer and gem chains with Cerebras's
// key unset, so that its route is disabled.
func newcomerHarness(t *testing.T) *harness {
	return newHarnessEnv(t, emutest.AnswerChain, map[string]string{"CEREBRAS_API_KEY": ""})
}

// errorMessage returns the error envelope's message.
func errorMessage(t *testing.T, r reply) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// TestModelErrorsSayWhatToSend: a request whose model is missing, a near
// miss of a route, or a disabled route is told what to send instead
// (issue 16: a missing model used to get `the model "" names no chain`).
func TestModelErrorsSayWhatToSend(t *testing.T) {
	checkLeaks(t)
	h := newcomerHarness(t)
	for _, tc := range []struct {
		name, body string
		status     int
		code, msg  string
	}{
		{"no model", `{"messages":[{"role":"user","content":"hi"}]}`, 400, "model_not_found",
			`the request has no "model": name a chain (answer, gem) or a route (provider/model, listed by GET /v1/models)`},
		{"near miss", `{"model":"groq/llama-3.3-70b","messages":[{"role":"user","content":"hi"}]}`, 404, "model_not_found",
			`the model "groq/llama-3.3-70b" names no chain or route of this gateway (did you mean "groq/llama-3.3-70b-versatile"?); use a chain (answer, gem) or a route (provider/model) listed by GET /v1/models`},
		{"disabled route", `{"model":"cerebras/gpt-oss-120b","messages":[{"role":"user","content":"hi"}]}`, 400, "model_not_enabled",
			`the route "cerebras/gpt-oss-120b" is not enabled on this gateway (no key: set CEREBRAS_API_KEY where the gateway runs, then restart it); use a chain (answer, gem) or an enabled route (GET /v1/models)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := h.post("/v1/chat/completions", "application/json", []byte(tc.body))
			if got.status != tc.status || got.errorCode(t) != tc.code || errorMessage(t, got) != tc.msg {
				t.Errorf("got %d %s %q\nwant %d %s %q", got.status, got.errorCode(t), errorMessage(t, got), tc.status, tc.code, tc.msg)
			}
		})
	}
	if n := h.emu.Calls("cerebras", "gpt-oss-120b"); n != 0 {
		t.Errorf("the disabled route was called %d times", n)
	}
}

// TestRouteAsModel: a route named as the model is answered by that route
// alone, its budget counted; once it fails it rests, and a request naming
// it gets the chain-of-one's error with a Retry-After, without calling it
// again or trying any other route.
func TestRouteAsModel(t *testing.T) {
	checkLeaks(t)
	h := newcomerHarness(t)
	const small = "groq/llama-3.1-8b-instant"
	got := h.ask(small)
	if got.status != 200 || got.content(t) != emutest.Answer(small) || got.header.Get("X-Tollfree-Route") != small {
		t.Fatalf("model %s: %d route %q: %s", small, got.status, got.header.Get("X-Tollfree-Route"), got.body)
	}
	snap, err := h.gw.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rt := routeOf(t, snap, small); rt.Budget.RPD.Used != 1 || rt.Budget.RPM.Used != 1 {
		t.Errorf("%s requests counted today %d, this minute %d; want 1 and 1", small, rt.Budget.RPD.Used, rt.Budget.RPM.Used)
	}

	const big = "groq/llama-3.3-70b-versatile"
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	for i, wantCalls := range []int{1, 1} { // the second finds the route resting
		got := h.ask(big)
		if got.status != 503 || got.errorCode(t) != "no_route_available" || got.header.Get("Retry-After") == "" {
			t.Errorf("request %d naming %s after a 503: %d Retry-After %q: %s", i+1, big, got.status, got.header.Get("Retry-After"), got.body)
		}
		if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != wantCalls {
			t.Errorf("request %d: %s called %d times in all, want %d", i+1, big, n, wantCalls)
		}
	}
	for _, m := range emutest.Models {
		if id := m.Provider + "/" + m.ID; id != big && id != small && h.emu.Calls(m.Provider, m.ID) > 0 {
			t.Errorf("%s was called: a route named as the model is a chain of one", id)
		}
	}
}

// TestModelsAndRoot: /v1/models lists the chains, then the enabled
// routes, each owned_by saying which it is; GET / sends a browser to the
// status page and tells any other client where the API is.
func TestModelsAndRoot(t *testing.T) {
	checkLeaks(t)
	h := newcomerHarness(t)
	resp, err := http.Get(h.srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range list.Data {
		got = append(got, m.ID+" by "+m.OwnedBy)
	}
	want := []string{"answer by tollfree chain", "gem by tollfree chain",
		"groq/llama-3.3-70b-versatile by groq", "groq/llama-3.1-8b-instant by groq",
		"gemini/gemini-2.5-flash-lite by gemini", "gemini/gemini-2.5-flash by gemini"}
	if len(got) != len(want) {
		t.Fatalf("/v1/models: %q\nwant %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("/v1/models[%d] = %q, want %q", i, got[i], want[i])
		}
	}

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	resp, err = noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/status" {
		t.Errorf("GET / from a browser: %d Location %q, want 302 to /status", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = noFollow.Get(h.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	const index = `{"object":"tollfree","api":"/v1","chat":"/v1/chat/completions","models":"/v1/models","health":"/healthz","status":"/status"}`
	if resp.StatusCode != 200 || string(body) != index {
		t.Errorf("GET / from a program: %d %s, want 200 %s", resp.StatusCode, body, index)
	}
}
