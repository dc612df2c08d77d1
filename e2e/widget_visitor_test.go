package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tollfree/tollfree/emulator"
)

// TestWidgetKeepsItsVisitorID: in a real browser, the widget on a site of
// another origin keeps the visitor id the gateway signs and sends it back
// in X-Tollfree-Visitor with every later question, after a reload too; and
// the 4th question under callers: {per_hour: 3} is told its real window,
// the last hour. Before (issue 32), the widget sent no id back (fetch with
// credentials "omit", no header), so every visitor behind one address
// shared its limits, and the refusal said "You have asked a lot today".
func TestWidgetKeepsItsVisitorID(t *testing.T) {
	checkLeaks(t)
	var gwURL string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><html lang="en"><head><title>Site</title></head><body><h1>A site</h1>` +
			`<script src="` + gwURL + `/widget.js" data-chain="site" defer></script></body></html>`))
	}))
	defer site.Close()
	cfg := strings.ReplaceAll(strings.ReplaceAll(assistantConfig, "ROUTES", "cerebras/gpt-oss-120b"), "CONTENT", writeContent(t)) +
		"      origins: [" + site.URL + "]\n"
	s := startStackWith(t, stackOptions{providers: cfg, config: "visitor_ids: {secret: ${TOLLFREE_VISITOR_SECRET}}\ncallers: {per_hour: 3}\n",
		env: map[string]string{"TOLLFREE_ADMIN_TOKEN": adminToken, "TOLLFREE_VISITOR_SECRET": "FAKE-visitor-secret-0123456789abcdef"}})
	s.emu.SetDefault("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: "Open Settings, then Export."})

	// The gateway as the browser reaches it, noting the visitor id each
	// question carried and the one each answer issued.
	var mu sync.Mutex
	var sent, issued []string
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.gw.Handler().ServeHTTP(w, r)
		if r.Method == http.MethodPost && r.URL.Path == "/v1/ask" {
			mu.Lock()
			sent, issued = append(sent, r.Header.Get("X-Tollfree-Visitor")), append(issued, w.Header().Get("X-Tollfree-Visitor"))
			mu.Unlock()
		}
	}))
	defer gw.Close()
	gwURL = gw.URL

	ctx := newBrowser(t, 1280, 900)
	open := func() {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.Navigate(site.URL),
			chromedp.Poll[chromedp.Void](`!!(document.querySelector('[data-tollfree-widget]') || {}).shadowRoot`, chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.Evaluate[chromedp.Void](widgetJS),
			chromedp.Evaluate[chromedp.Void](`tfRoot().querySelector('.launcher').click(); tfRoot().getElementById('tf-input').focus()`),
		); err != nil {
			t.Fatalf("loading the site %s: %v", site.URL, err)
		}
	}
	open()
	for i, q := range []string{"How do I export?", "And how do I import?", "Where are the settings?"} {
		if a := askWidget(t, ctx, q); a.State != "done" {
			t.Fatalf("question %d: %+v, want an answer", i+1, a)
		}
	}
	refused := sendWidget(t, ctx, "What does it cost?")
	if refused.Mode != "limit" || !strings.Contains(refused.Text, "in the last hour") || strings.Contains(refused.Text, "today") {
		t.Errorf("the 4th question with per_hour: 3 shows %q (mode %s), want a limit message naming the last hour, not today", refused.Text, refused.Mode)
	}
	open() // a reload: the id is kept
	sendWidget(t, ctx, "Is there an API?")

	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 5 || issued[0] == "" {
		t.Fatalf("the gateway got %d questions, the first issued an id: %v; want 5 and an id", len(sent), issued[0] != "")
	}
	// Which id, never the id itself: it is a visitor's credential.
	which := func(id string) string {
		switch id {
		case "":
			return "no id"
		case issued[0]:
			return "the id issued with the first answer"
		}
		return "another id"
	}
	want := []string{"", issued[0], issued[0], issued[0], issued[0]}
	for i := range sent {
		if sent[i] != want[i] {
			t.Errorf("question %d carried %s, want %s", i+1, which(sent[i]), which(want[i]))
		}
	}
}
