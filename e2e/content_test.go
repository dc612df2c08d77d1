package e2e_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/testenv"
)

// contentChain is a site chain with a week's cache and a search fallback
// over DIR.
const contentChain = `
chains:
  site:
    routes: [groq/llama-3.3-70b-versatile]
    attempt_timeout: 8s
    deadline: 20s
    cache_ttl: 168h
    fallback: {search: DIR}
`

// contentPoll is content.DefaultPoll: how often the gateway looks at the
// content folder.
const contentPoll = 2 * time.Second

// healthLine returns one line of /healthz.
func (h *harness) healthLine(key string) string {
	h.t.Helper()
	resp, err := http.Get(h.srv.URL + "/healthz")
	if err != nil {
		h.t.Fatalf("GET /healthz: %v", err)
	}
	defer resp.Body.Close()
	var m map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		h.t.Fatalf("/healthz is not a JSON object of strings: %v", err)
	}
	if resp.StatusCode != http.StatusOK || m["status"] != "ok" {
		h.t.Fatalf("/healthz: %d %v", resp.StatusCode, m)
	}
	return m[key]
}

// pollContent moves the clock past the content's next poll, once the
// poller waits for it, and waits (bounded, in real time: the reload runs
// on the poller's goroutine) until /healthz's line for chain is no longer
// was.
func (h *harness) pollContent(chain, was string) string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.clk.BlockUntilDeadline(ctx, h.clk.Now().Add(contentPoll)); err != nil {
		h.t.Errorf("the content poller is not waiting: %v", err)
		h.clk.Advance(contentPoll)
		return was
	}
	h.clk.Advance(contentPoll)
	now := was
	testenv.WaitFor(h.t, "/healthz content_"+chain+" to change after a poll", func() bool {
		now = h.healthLine("content_" + chain)
		return now != was
	})
	return now
}

func writePage(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestContentEditRetiresCachedAnswers: a model's answer is cached; an edit
// of the content on disk changes the version at the next poll (2 s), and
// the same question is then answered afresh by the model, not from the
// cache (issue 14, seed 000: "editing the content retires every cached
// answer at once").
func TestContentEditRetiresCachedAnswers(t *testing.T) {
	checkLeaks(t)
	dir := t.TempDir()
	writePage(t, dir, "guide.md", "# Guide\n\n## Export\n\nExport your data as CSV from the settings page.")
	h := newHarness(t, strings.ReplaceAll(contentChain, "DIR", dir))
	const q = "How do I export my data?"
	if r := h.askText("site", q); r.status != 200 || r.header.Get("X-Tollfree-Cache") != "miss" {
		t.Fatalf("first: %d cache=%q %s", r.status, r.header.Get("X-Tollfree-Cache"), r.body)
	}
	if r := h.askText("site", q); r.header.Get("X-Tollfree-Cache") != "hit" {
		t.Fatalf("second: cache=%q, want hit", r.header.Get("X-Tollfree-Cache"))
	}
	before := h.healthLine("content_site")
	if !strings.HasPrefix(before, "ok: 1 pages, version ") {
		t.Errorf("/healthz content_site = %q, want the content served", before)
	}
	writePage(t, dir, "guide.md", "# Guide\n\n## Export\n\nExport your data as CSV or JSON from the settings page.")
	// Until the poll, the content served is the old one, and so is the cache.
	if r := h.askText("site", q); r.header.Get("X-Tollfree-Cache") != "hit" {
		t.Fatalf("before the poll: cache=%q, want hit", r.header.Get("X-Tollfree-Cache"))
	}
	after := h.pollContent("site", before)
	if !strings.HasPrefix(after, "ok: 1 pages, version ") {
		t.Errorf("after the edit: /healthz content_site = %q, want the new version", after)
	}
	r := h.askText("site", q)
	if r.status != 200 || r.header.Get("X-Tollfree-Cache") != "miss" {
		t.Fatalf("after the edit: %d cache=%q, want a fresh answer", r.status, r.header.Get("X-Tollfree-Cache"))
	}
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 2 {
		t.Errorf("upstream calls = %d, want 2 (the first question, then again after the edit)", n)
	}
	if r := h.askText("site", q); r.header.Get("X-Tollfree-Cache") != "hit" {
		t.Errorf("the fresh answer is not cached: cache=%q", r.header.Get("X-Tollfree-Cache"))
	}
}

// TestServeStartsWithMissingContent: a search fallback over a folder that
// does not exist degrades the chain (a warning with the path and the fix,
// /healthz says so, the fallback finds nothing) instead of stopping the
// gateway; the folder is served once it appears.
func TestServeStartsWithMissingContent(t *testing.T) {
	checkLeaks(t)
	dir := filepath.Join(t.TempDir(), "content")
	logs := &syncBuffer{}
	h := harnessOf(t, startStackWith(t, stackOptions{
		config: strings.ReplaceAll(contentChain, "fallback: {search: DIR}", `fallback: {search: `+dir+`, message: "Resting."}`),
		logger: slog.New(slog.NewTextHandler(logs, nil)),
	}))
	logged := string(logs.Bytes())
	if !strings.Contains(logged, "content: unavailable") || !strings.Contains(logged, dir) || !strings.Contains(logged, "create the folder") {
		t.Errorf("log = %q, want a warning with the path and the fix", logged)
	}
	was := h.healthLine("content_site")
	if !strings.HasPrefix(was, "unavailable (no such file or directory)") || strings.Contains(was, dir) {
		t.Errorf("/healthz content_site = %q, want unavailable, without the path", was)
	}
	// Every route down: the search finds nothing, the message answers.
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	if r := h.askText("site", "How do I export my data?"); r.status != 200 || r.header.Get("X-Tollfree-Fallback") != "message" {
		t.Fatalf("degraded: %d fallback=%q %s", r.status, r.header.Get("X-Tollfree-Fallback"), r.body)
	}
	writePage(t, dir, "guide.md", "# Guide\n\n## Export\n\nExport your data as CSV from the settings page.")
	if now := h.pollContent("site", was); !strings.HasPrefix(now, "ok: 1 pages") {
		t.Fatalf("after the folder appeared: /healthz content_site = %q", now)
	}
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	r := h.askText("site", "How do I export my data?", "Cache-Control", "no-cache")
	if r.status != 200 || r.header.Get("X-Tollfree-Fallback") != "search" || !strings.Contains(r.content(t), "CSV") {
		t.Errorf("after the folder appeared: %d fallback=%q %s", r.status, r.header.Get("X-Tollfree-Fallback"), r.body)
	}
}
