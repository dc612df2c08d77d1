package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tollfree/tollfree/assistant/widget"
	"github.com/tollfree/tollfree/tools/demo"
)

// startAssistantDemo runs `tollfree demo -assistant` in the test (package
// demo, the server the command starts) and returns its base URL and admin
// token. The demo stops, and its goroutines end, when the test ends.
func startAssistantDemo(t *testing.T) (base, token string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan [2]string, 1)
	var runErr error
	stopped := make(chan struct{}) // closed once RunAssistant returned runErr
	go func() {
		defer close(stopped)
		runErr = demo.RunAssistant(ctx, demo.AssistantOptions{Listen: "127.0.0.1:0", Ready: func(b, tok string) { ready <- [2]string{b, tok} }})
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
	select {
	case r := <-ready:
		return r[0], r[1]
	case <-stopped:
		t.Fatalf("tollfree demo -assistant did not start: %v", runErr)
	case <-time.After(20 * time.Second):
		t.Fatal("tollfree demo -assistant did not start within 20s")
	}
	return "", ""
}

// widgetJS are the page-side helpers of the widget tests: the widget's
// shadow root and what its last answer shows.
const widgetJS = `
window.tfRoot = () => document.querySelector('[data-tollfree-widget]').shadowRoot;
window.tfLast = () => { const b = [...tfRoot().querySelectorAll('.msg.bot')].pop(); if (!b) return null;
	return {mode: b.dataset.mode || '', state: b.dataset.state || '', text: b.innerText,
		links: [...b.querySelectorAll('a')].map(a => ({href: a.href, rel: a.rel, text: a.textContent}))}; };
window.tfSeen = [];
new MutationObserver(() => { const l = tfLast(); if (l && l.state === 'streaming') tfSeen.push(l.text.length); })
	.observe(tfRoot(), {subtree: true, childList: true, characterData: true, attributes: true});
`

type widgetAnswer struct {
	Mode  string `json:"mode"`
	State string `json:"state"`
	Text  string `json:"text"`
	Links []struct {
		Href string `json:"href"`
		Rel  string `json:"rel"`
		Text string `json:"text"`
	} `json:"links"`
}

// askWidget types q into the open widget, sends it with Enter, and waits
// for the answer to finish; a failure shown fails t.
func askWidget(t *testing.T, ctx context.Context, q string) widgetAnswer {
	t.Helper()
	a := sendWidget(t, ctx, q)
	if a.State != "done" {
		t.Fatalf("asking %q: the widget shows a failure: %q", q, a.Text)
	}
	return a
}

// sendWidget types q into the open widget, sends it with Enter, and waits
// for the answer to finish or fail.
func sendWidget(t *testing.T, ctx context.Context, q string) widgetAnswer {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`tfSeen = []`),
		chromedp.KeyEvent(q),
		chromedp.KeyEvent(kb.Enter),
		chromedp.Poll[chromedp.Void](`(() => { const l = tfLast(); return l && (l.state === 'done' || l.state === 'failed'); })()`,
			chromedp.WithPollingTimeout(20*time.Second)),
	); err != nil {
		t.Fatalf("asking %q in the widget: %v", q, err)
	}
	a, err := chromedp.Run(ctx, chromedp.Evaluate[widgetAnswer](`tfLast()`))
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return a
}

// eachLinkOnce fails t when a links to one address more than once (issue
// 34: each source showed twice, inline and as a bullet).
func eachLinkOnce(t *testing.T, what string, a widgetAnswer) {
	t.Helper()
	seen := map[string]bool{}
	for _, l := range a.Links {
		if seen[l.Href] {
			t.Errorf("%s links to %s twice: %+v", what, l.Href, a.Links)
		}
		seen[l.Href] = true
	}
}

// linksTo tells whether a has a link whose href starts with prefix, and
// that every link is safe to follow.
func linksTo(t *testing.T, a widgetAnswer, prefix string) bool {
	t.Helper()
	found := false
	for _, l := range a.Links {
		if l.Rel != "noopener noreferrer nofollow" {
			t.Errorf("link %s has rel %q, want noopener noreferrer nofollow", l.Href, l.Rel)
		}
		found = found || strings.HasPrefix(l.Href, prefix)
	}
	return found
}

// TestAssistantWidgetInBrowser is issue 14's first "Done when": the demo
// serves its site with the widget; in headless Chromium, the widget is
// reached and opened with the keyboard, a question gets a streamed answer
// grounded in the site's pages with links to them; with every route
// paused through the admin API, the next question gets the search answer,
// saying the assistant is resting, with links; and on a phone the panel
// fits the screen.
func TestAssistantWidgetInBrowser(t *testing.T) {
	checkLeaks(t)
	base, token := startAssistantDemo(t)
	widgetFlow(t, base, token)
}

// widgetFlow is TestAssistantWidgetInBrowser's visit of the site at base.
func widgetFlow(t *testing.T, base, token string) {
	site := base + demo.SitePath
	ctx := newBrowser(t, 1280, 900)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(site),
		chromedp.Poll[chromedp.Void](`!!(document.querySelector('[data-tollfree-widget]') || {}).shadowRoot`, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate[chromedp.Void](widgetJS),
	); err != nil {
		t.Fatalf("loading the demo site %s: %v", site, err)
	}

	// Tab through the page to the launcher, open it with Enter: the
	// focus moves into the panel's input.
	reached := false
	for range 40 {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		on, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.activeElement && document.activeElement.hasAttribute('data-tollfree-widget') && tfRoot().activeElement.classList.contains('launcher')`))
		if err != nil {
			t.Fatal(err)
		}
		if reached = on; reached {
			break
		}
	}
	if !reached {
		t.Fatal("40 presses of Tab never reached the widget's launcher")
	}
	type opened struct {
		Expanded string `json:"expanded"`
		Hidden   bool   `json:"hidden"`
		Focus    string `json:"focus"`
		Live     string `json:"live"`
		Label    string `json:"label"`
	}
	state := func() opened {
		t.Helper()
		o, err := chromedp.Run(ctx, chromedp.Evaluate[opened](`(() => { const r = tfRoot(); const p = r.getElementById(r.querySelector('.launcher').getAttribute('aria-controls'));
			return {expanded: r.querySelector('.launcher').getAttribute('aria-expanded'), hidden: p.hidden, focus: (r.activeElement || {}).id || '',
				live: r.querySelector('[role=log]').getAttribute('aria-live'), label: r.querySelector('label[for=tf-input]').textContent}; })()`))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	if o := state(); o.Expanded != "true" || o.Hidden || o.Focus != "tf-input" || o.Live != "polite" || o.Label == "" {
		t.Fatalf("after Enter on the launcher: %+v; want the panel open, aria-expanded, the focus on the labelled input, a polite live log", o)
	}
	// Escape closes it and gives the focus back; Enter opens it again.
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	if o := state(); o.Expanded != "false" || !o.Hidden {
		t.Fatalf("after Escape: %+v; want the panel closed", o)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	if o := state(); o.Hidden || o.Focus != "tf-input" {
		t.Fatalf("Escape did not give the focus back to the launcher: Enter then left %+v", o)
	}

	// A grounded answer, streamed, with links to the site's pages.
	a := askWidget(t, ctx, "How do I export my data?")
	if a.Mode != "model" || !strings.Contains(a.Text, "Settings") {
		t.Errorf("first answer: mode %q, text %q; want a model answer quoting the export page", a.Mode, a.Text)
	}
	if !linksTo(t, a, site+"export") {
		t.Errorf("first answer links %+v; want a link to %sexport", a.Links, site)
	}
	eachLinkOnce(t, "the first answer", a)
	seen, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[...new Set(tfSeen.filter(n => n > 1))]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 {
		t.Errorf("the answer was shown at %v characters while streaming; want it growing as it arrives", seen)
	}

	// Every route paused by hand: the search answer, with links.
	for _, p := range []string{"groq", "gemini", "cerebras"} {
		adminPause(t, base, token, p)
	}
	a = askWidget(t, ctx, "How much is the Team plan?")
	if a.Mode != "search" || !strings.Contains(a.Text, "resting") {
		t.Errorf("with every route paused: mode %q, text %q; want the search answer saying the assistant is resting", a.Mode, a.Text)
	}
	if !linksTo(t, a, site+"pricing") {
		t.Errorf("search answer links %+v; want a link to %spricing", a.Links, site)
	}
	eachLinkOnce(t, "the search answer", a)

	t.Run("phone", func(t *testing.T) { widgetOnAPhone(t, site) })
}

// adminPause pauses a provider's routes through the admin API.
func adminPause(t *testing.T, base, token, provider string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/admin/pause", strings.NewReader(`{"provider":"`+provider+`"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("pausing %s: %v", provider, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("pausing %s: status %d", provider, resp.StatusCode)
	}
}

// widgetOnAPhone opens the widget on a 390×844 phone screen and asks a
// question: the panel spans the screen, nothing scrolls sideways, and the
// input's text is 16 px or more (so iOS does not zoom in).
func widgetOnAPhone(t *testing.T, site string) {
	ctx := newBrowser(t, 390, 844)
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(site),
		chromedp.Poll[chromedp.Void](`!!(document.querySelector('[data-tollfree-widget]') || {}).shadowRoot`, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate[chromedp.Void](widgetJS),
		chromedp.Evaluate[chromedp.Void](`tfRoot().querySelector('.launcher').click()`),
	); err != nil {
		t.Fatalf("opening the widget on a phone: %v", err)
	}
	askWidget(t, ctx, "Where is my data stored? https://a.very.long.example/with/a/path/that/does/not/break/anything/at/all")
	type fit struct {
		Width     float64 `json:"width"`
		Left      float64 `json:"left"`
		Right     float64 `json:"right"`
		Scroll    float64 `json:"scroll"`
		LogScroll float64 `json:"logScroll"`
		LogWidth  float64 `json:"logWidth"`
		Font      float64 `json:"font"`
	}
	f, err := chromedp.Run(ctx, chromedp.Evaluate[fit](`(() => { const r = tfRoot(); const p = r.querySelector('.panel').getBoundingClientRect(); const log = r.querySelector('[role=log]');
		return {width: window.innerWidth, left: p.left, right: p.right, scroll: document.documentElement.scrollWidth,
			logScroll: log.scrollWidth, logWidth: log.clientWidth, font: parseFloat(getComputedStyle(r.querySelector('input')).fontSize)}; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Width > 400 || f.Left < 0 || f.Right > f.Width || f.Right < f.Width-1 || f.Scroll > f.Width || f.LogScroll > f.LogWidth {
		t.Errorf("on a %.0f px screen the panel spans %.0f–%.0f px, the page %.0f px, the conversation %.0f of %.0f px: %s",
			f.Width, f.Left, f.Right, f.Scroll, f.LogScroll, f.LogWidth, "want the full width and no sideways scroll")
	}
	if f.Font < 16 {
		t.Errorf("the input's font is %.0f px; under 16 px iOS zooms in", f.Font)
	}
}

// TestWidgetServed: the gateway serves the widget's script at /widget.js
// to any site, cacheably, whatever else it is configured for.
func TestWidgetServed(t *testing.T) {
	checkLeaks(t)
	h := newStatusHarness(t, false)
	resp, err := http.Get(h.srv.URL + widget.Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := fmt.Sprint(resp.StatusCode, " ", resp.Header.Get("Content-Type"), " ", resp.Header.Get("Access-Control-Allow-Origin"), " ", resp.Header.Get("ETag") != "")
	if want := "200 text/javascript; charset=utf-8 * true"; got != want {
		t.Errorf("GET /widget.js: %s, want %s", got, want)
	}
}
