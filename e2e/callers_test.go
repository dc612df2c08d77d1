package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

const callerChains = `
admin_token: ${TOLLFREE_ADMIN_TOKEN}
trusted_proxies: [127.0.0.1]
callers: {per_hour: 3, per_day: 5, site_day: 8, reserve: 2}
chains:
  site:
    routes: [groq/llama-3.3-70b-versatile]
    attempt_timeout: 8s
    deadline: 20s
    fallback: {search: ../examples/content}
`

func (h *harness) askAs(caller, auth, question string) reply {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"site","user":"`+caller+`","messages":[{"role":"user","content":"`+question+`"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", visitorAddr(caller)) // the user field names no one
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: []byte(b.String())}
}

// TestCallerLimits: each caller gets its hour's and day's questions; past
// the site's cap the chain answers by search alone; the owner always gets
// through on the reserve (seeds 000 and 004).
func TestCallerLimits(t *testing.T) {
	checkLeaks(t)
	h := newHarnessEnv(t, callerChains, map[string]string{"TOLLFREE_ADMIN_TOKEN": "admin-secret-0123456789"})
	for i := 0; i < 3; i++ {
		if r := h.askAs("visitor-a", "", "What projects are there?"); r.status != 200 || r.header.Get("X-Tollfree-Fallback") != "" {
			t.Fatalf("question %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := h.askAs("visitor-a", "", "What projects are there?")
	if r.status != 429 || r.errorCode(t) != "caller_limit" || r.header.Get("Retry-After") == "" {
		t.Fatalf("4th question in the hour: %d Retry-After=%q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	// Another visitor is not affected; the hour passes for visitor-a.
	if r := h.askAs("visitor-b", "", "What projects are there?"); r.status != 200 {
		t.Fatalf("visitor-b: %d", r.status)
	}
	h.clk.Advance(time.Hour)
	for i := 0; i < 2; i++ {
		if r := h.askAs("visitor-a", "", "What projects are there?"); r.status != 200 {
			t.Fatalf("after the hour, question %d: %d %s", i+1, r.status, r.body)
		}
	}
	if r := h.askAs("visitor-a", "", "What projects are there?"); r.status != 429 {
		t.Fatalf("6th question of the day: %d, want 429", r.status)
	}
	// The site has had 6 of its 8; 2 are the owner's reserve. Visitors now
	// get answers by search alone.
	calls := h.emu.Calls("groq", "llama-3.3-70b-versatile")
	r = h.askAs("visitor-c", "", "What projects are there?")
	if r.status != 200 || r.header.Get("X-Tollfree-Fallback") != "search" || !strings.Contains(r.content(t), "resting") {
		t.Fatalf("past the site cap: %d fallback=%q %s", r.status, r.header.Get("X-Tollfree-Fallback"), r.body)
	}
	if h.emu.Calls("groq", "llama-3.3-70b-versatile") != calls {
		t.Error("a provider was called past the site's cap")
	}
	// The owner still gets a model's answer.
	if r := h.askAs("owner", "admin-secret-0123456789", "What projects are there?"); r.status != 200 || r.header.Get("X-Tollfree-Fallback") != "" {
		t.Fatalf("owner: %d fallback=%q %s", r.status, r.header.Get("X-Tollfree-Fallback"), r.body)
	}
}

// TestSearchFallback: when every route is down, a chain with a search
// fallback answers from the content, marked as a fallback.
func TestSearchFallback(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, `
chains:
  site:
    routes: [groq/llama-3.3-70b-versatile]
    attempt_timeout: 8s
    deadline: 20s
    fallback: {search: ../examples/content, message: "Resting."}
`)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	r := h.askText("site", "How can I contact you?")
	if r.status != 200 || r.header.Get("X-Tollfree-Fallback") != "search" {
		t.Fatalf("%d fallback=%q %s", r.status, r.header.Get("X-Tollfree-Fallback"), r.body)
	}
	if c := r.content(t); !strings.Contains(strings.ToLower(c), "contact") || !strings.HasPrefix(c, "The assistant is resting right now;") {
		t.Errorf("search answer does not come from the contact page, in English: %q", c)
	}
	// The same answer as a site assistant's, in the caller's language
	// (issue 30: a plain chain's was English only).
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	r = h.askText("site", "How can I contact you?", "Accept-Language", "fr-FR,fr;q=0.9")
	if c := r.content(t); !strings.HasPrefix(c, "L'assistant se repose") || !strings.Contains(strings.ToLower(c), "contact") {
		t.Errorf("with Accept-Language fr: %q, want the French sentence and the contact page", c)
	}
	// Nothing matches: the fixed message answers instead.
	r = h.askText("site", "zzzz qqqq")
	if r.header.Get("X-Tollfree-Fallback") != "message" || r.content(t) != "Resting." {
		t.Errorf("no match: fallback=%q content=%q", r.header.Get("X-Tollfree-Fallback"), r.content(t))
	}
}
