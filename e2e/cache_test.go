package e2e_test

import (
	"bufio"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

const cachedChain = `
chains:
  site:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 20s
    cache_ttl: 168h
    content_version: v1
    fallback: {message: "Resting."}
`

func (h *harness) askText(chain, text string, header ...string) reply {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"`+chain+`","messages":[{"role":"user","content":"`+text+`"}]}`))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: []byte(b.String())}
}

// TestResponseCache: a question asked twice costs one call; whitespace does
// not matter; a caller can opt out; the hit is marked in the header and the
// call log, spends nothing, and expires with its TTL.
func TestResponseCache(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, cachedChain)
	first := h.askText("site", "What is   tollfree?")
	if first.status != 200 || first.header.Get("X-Tollfree-Cache") != "miss" {
		t.Fatalf("first: %d cache=%q %s", first.status, first.header.Get("X-Tollfree-Cache"), first.body)
	}
	second := h.askText("site", " What is tollfree? ")
	if second.header.Get("X-Tollfree-Cache") != "hit" {
		t.Fatalf("second: cache=%q, want hit", second.header.Get("X-Tollfree-Cache"))
	}
	if second.content(t) != first.content(t) || second.json(t)["model"] != "groq/llama-3.3-70b-versatile" {
		t.Errorf("hit answered %q by %v", second.content(t), second.json(t)["model"])
	}
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 1 {
		t.Errorf("upstream calls = %d, want 1", n)
	}
	hits := h.recs.forRequest(second.header.Get("X-Request-Id"))
	if len(hits) != 1 || !hits[0].Cached || hits[0].TokensIn != 0 || hits[0].TokensOut != 0 {
		t.Errorf("call log of the hit = %+v, want one cached record with no tokens", hits)
	}
	// Opting out calls the provider again.
	if r := h.askText("site", "What is tollfree?", "Cache-Control", "no-cache"); r.header.Get("X-Tollfree-Cache") != "" {
		t.Errorf("no-cache request: cache header %q", r.header.Get("X-Tollfree-Cache"))
	}
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 2 {
		t.Errorf("after no-cache: upstream calls = %d, want 2", n)
	}
	// A streaming request is served from the cache as a stream.
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"site","stream":true,"messages":[{"role":"user","content":"What is tollfree?"}]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sb := new(strings.Builder)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		sb.WriteString(sc.Text() + "\n")
	}
	resp.Body.Close()
	if resp.Header.Get("X-Tollfree-Cache") != "hit" || !strings.HasSuffix(sb.String(), "data: [DONE]\n\n") ||
		!strings.Contains(sb.String(), `"finish_reason":"stop"`) {
		t.Errorf("cached stream: cache=%q body:\n%s", resp.Header.Get("X-Tollfree-Cache"), sb)
	}
	// After the TTL the answer is asked again.
	h.clk.Advance(168*time.Hour + time.Second)
	if r := h.askText("site", "What is tollfree?"); r.header.Get("X-Tollfree-Cache") != "miss" {
		t.Errorf("after the TTL: cache=%q, want miss", r.header.Get("X-Tollfree-Cache"))
	}
}

// TestCacheNeverKeepsFailures: errors and fallbacks are not cached.
func TestCacheNeverKeepsFailures(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, cachedChain)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.HighDemand})
	if r := h.askText("site", "Hello"); r.header.Get("X-Tollfree-Fallback") != "message" {
		t.Fatalf("want the fallback, got %d %s", r.status, r.body)
	}
	h.clk.Advance(31 * time.Second) // both rests end
	r := h.askText("site", "Hello")
	if r.header.Get("X-Tollfree-Fallback") != "" || r.header.Get("X-Tollfree-Cache") != "miss" {
		t.Fatalf("after the rests: fallback=%q cache=%q, want a fresh answer", r.header.Get("X-Tollfree-Fallback"), r.header.Get("X-Tollfree-Cache"))
	}
}

// TestCacheCollapsesIdenticalRequests: identical requests in flight at the
// same moment make one upstream call.
func TestCacheCollapsesIdenticalRequests(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, cachedChain)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Delay: 2 * time.Second})
	const n = 5
	var wg sync.WaitGroup
	replies := make([]reply, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = h.askText("site", "Same question")
		}()
	}
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	// The other requests join the call in flight; time stands still for the
	// upstream until the clock moves, so they have until then to arrive.
	deadline := time.Now().Add(5 * time.Second)
	for h.inflight() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	h.clk.Advance(2 * time.Second)
	wg.Wait()
	if c := h.emu.Calls("groq", "llama-3.3-70b-versatile"); c != 1 {
		t.Fatalf("upstream calls = %d, want 1", c)
	}
	for i, r := range replies {
		if r.status != 200 {
			t.Errorf("reply %d: %d %s", i, r.status, r.body)
		}
	}
}

// TestCacheHitsAreNoAttempts: a question asked three times is one call:
// the route's card counts one attempt and two answers from the cache, and
// its latency is the call's, not pulled down by hits at 0 ms (issue 34: a
// card read "3 attempts" for one real request). The chain counts the hits.
func TestCacheHitsAreNoAttempts(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, cachedChain)
	for i := range 3 {
		if r := h.askText("site", "What is tollfree?"); r.status != 200 {
			t.Fatalf("ask %d: %d %s", i+1, r.status, r.body)
		}
	}
	s := h.snapshot()
	r := routeOf(t, s, "groq/llama-3.3-70b-versatile")
	if r.Attempts != 1 || r.OK != 1 || r.Cached != 2 {
		t.Errorf("route card: %d attempts, %d ok, %d from the cache; want 1, 1, 2", r.Attempts, r.OK, r.Cached)
	}
	for _, c := range s.Chains {
		if c.Name == "site" && (c.Answered != 1 || c.Cached != 2) {
			t.Errorf("chain site: %d answered by a route, %d from the cache; want 1 and 2", c.Answered, c.Cached)
		}
	}
	page := h.get("/status")
	if !strings.Contains(string(page.body), "1 attempt · 2 answers from the cache") {
		t.Errorf("the page's card does not say 1 attempt and 2 answers from the cache")
	}
}
