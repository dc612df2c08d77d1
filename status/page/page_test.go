package page

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/status"
)

// fakeStatus hands out one snapshot and counts the reads.
type fakeStatus struct {
	snap  *status.Snapshot
	reads int
}

func (f *fakeStatus) Snapshot(context.Context) (*status.Snapshot, error) {
	f.reads++
	return f.snap, nil
}

// Hostile text a snapshot may carry: a provider's error echoed into a
// reason or a last error, an operator's pause reason, a name from the plan.
const (
	scriptTag  = `<script>alert(1)</script>`
	breakAttr  = `" onmouseover="x`
	quoteChain = `it's & co`
)

// richSnapshot has a card in every state the page draws, budgets with
// bars, rests of each kind and hostile text in names and reasons.
func richSnapshot() *status.Snapshot {
	now := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	in := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	half := 0.5
	return &status.Snapshot{
		Now:      now,
		Admin:    true,
		Problems: []string{"rests and pauses could not be read from the state store"},
		Chains: []status.Chain{
			{Name: "answer", State: "degraded", Routes: []string{"groq/llama", "gemini/flash"}, Ready: 1, Fallback: "groq/llama", Answered: 12, StreamsRescued: 2},
			{Name: quoteChain, State: "down", Routes: []string{"cerebras/oss"}, Fallback: "none", Figures: status.Figures{SuccessRate: &half, P50MS: 850, P95MS: 2400}},
		},
		Routes: []status.Route{
			{ID: "groq/llama", Provider: "groq", State: "ready", Chains: []string{"answer"}, Attempts: 1,
				Budget:         status.Windows{RPD: status.Window{Used: 900, Limit: 1000}, TPM: status.Window{Used: 10, Limit: 100}, RPM: status.Window{Used: 5}},
				ProviderBudget: status.Windows{RPM: status.Window{Used: 30, Limit: 30}}},
			{ID: "gemini/flash", Provider: "gemini", State: "resting", Chains: []string{"answer"}, Attempts: 7,
				Rest:      &status.Rest{Key: "gemini/flash", Class: "overloaded", Until: in(4*time.Minute + 30*time.Second), Reason: scriptTag},
				LastError: breakAttr, LastErrorAt: in(-90 * time.Second)},
			{ID: "mistral/small", Provider: "mistral", State: "paused",
				Rest: &status.Rest{Key: "mistral/small", Class: "paused", Reason: "answers in the wrong language"}},
			{ID: "groq/tiny", Provider: "groq", State: "paused",
				Rest: &status.Rest{Key: "provider:groq", Class: "paused", Until: in(time.Hour)}},
			{ID: "cerebras/oss", Provider: "cerebras", State: "failing", Chains: []string{quoteChain}, Attempts: 2, SilentLosses: 2,
				Latest: &status.Latest{Judged: 2, Failed: 2, Silent: 2}},
			{ID: "x/off", Provider: "x", State: "disabled", Rest: &status.Rest{Key: "x/off", Class: "disabled", Reason: "no API key"}},
		},
		Providers: []status.Provider{
			{Name: "groq", State: "partly", Routes: []string{"groq/llama", "groq/tiny"}, Enabled: 2, Ready: 1, NotReady: "paused"},
			{Name: "gemini", State: "resting", Routes: []string{"gemini/flash"}, Enabled: 1,
				Rest: &status.Rest{Key: "provider:gemini", Class: "rate_day", Until: in(26 * time.Hour), Reason: breakAttr}},
			{Name: "x", State: "disabled", Routes: []string{"x/off"}, Rest: &status.Rest{Key: "provider:x", Class: "disabled", Reason: "no API key"}},
		},
	}
}

// get serves one request to a page over snap and returns the response.
func get(t *testing.T, snap *status.Snapshot, o Options, target string) (*httptest.ResponseRecorder, *fakeStatus) {
	t.Helper()
	fake := &fakeStatus{snap: snap}
	o.Status = fake
	rec := httptest.NewRecorder()
	New(o).HTML().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec, fake
}

// card returns the <section> of the card whose attribute is attr (such as
// data-route="groq/llama"), or fails.
func card(t *testing.T, page, attr string) string {
	t.Helper()
	i := strings.Index(page, attr)
	if i < 0 {
		t.Fatalf("no card with %s", attr)
	}
	start := strings.LastIndex(page[:i], "<section ")
	end := strings.Index(page[i:], "</section>")
	if start < 0 || end < 0 {
		t.Fatalf("the card with %s is not a <section>", attr)
	}
	return page[start : i+end]
}

func TestPageHeaders(t *testing.T) {
	rec, _ := get(t, richSnapshot(), Options{}, "/status")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /status: %d, want 200", rec.Code)
	}
	for name, want := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"Cache-Control":           "no-store",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
		"Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	} {
		if got := rec.Header().Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	body := rec.Body.String()
	if !strings.HasPrefix(body, "<!doctype html>\n") || !strings.HasSuffix(body, "</script>\n</body>\n</html>") {
		t.Errorf("the page does not run from <!doctype html> to </html> (foot.html must end at </html>): starts %q, ends %q", body[:min(len(body), 20)], body[max(0, len(body)-30):])
	}
}

func TestPageCards(t *testing.T) {
	rec, _ := get(t, richSnapshot(), Options{}, "/status")
	page := rec.Body.String()
	tests := []struct {
		attr    string   // the card
		state   string   // its data-state
		want    []string // what it shows
		buttons []string // its buttons' data-act, in order
	}{
		{`data-chain="answer"`, "degraded", []string{"1 of 2 routes ready · fallback: groq/llama", "12 answered", "2 broken streams rescued"}, nil},
		{`data-chain="it&#39;s &amp; co"`, "down", []string{`<div class="name">it&#39;s &amp; co</div>`, "<dd>50%</dd>", "<dd>850 ms</dd>", "<dd>2.4 s</dd>"}, nil},
		{`data-route="groq/llama"`, "ready", []string{
			`<span>requests today</span><span>900 / 1000</span>`, `<div class="fill high" style="width:90%">`,
			`<span>tokens this minute</span><span>10 / 100</span>`, `<div class="fill ok" style="width:10%">`,
			`<div class="scope">account-wide</div>`, `<div class="fill full" style="width:100%">`, "1 attempt<",
		}, []string{"probe", "pause"}},
		{`data-route="gemini/flash"`, "resting", []string{
			`<b>overloaded</b> until <time datetime="2025-03-04T10:04:30Z" title="10:04:30 UTC">10:04:30 UTC</time> (in 4m 30s)`,
			"last error <code>", "1m 30s ago",
		}, []string{"probe", "pause", "resume"}},
		{`data-route="mistral/small"`, "paused", []string{"<b>paused</b> until lifted", "answers in the wrong language"}, []string{"probe", "resume"}},
		{`data-route="groq/tiny"`, "paused", []string{"<b>paused</b> (whole provider) until"}, []string{"probe"}},
		{`data-route="cerebras/oss"`, "failing", []string{"data-failing", "silent on 2 of its last 2 attempts", "2 races lost in silence", "it&#39;s &amp; co"}, []string{"probe", "pause"}},
		{`data-route="x/off"`, "disabled", []string{"<b>disabled</b>", "no API key"}, nil},
		{`data-provider="groq"`, "partly", []string{"2 routes · 1 of 2 ready", `<span class="pill partly">partly paused</span>`}, []string{"probe", "pause"}},
		{`data-provider="gemini"`, "resting", []string{"<b>rate_day</b> until <time", "Mar 5 12:00 UTC", "(in 1d 2h)"}, []string{"probe", "resume"}},
		{`data-provider="x"`, "disabled", []string{"no API key"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.attr, func(t *testing.T) {
			c := card(t, page, tt.attr)
			if want := tt.attr + ` data-state="` + tt.state + `"`; !strings.Contains(c, want) {
				t.Errorf("card has no %s:\n%s", want, c)
			}
			if want := `<section class="card ` + tt.state + `"`; !strings.HasPrefix(c, want) {
				t.Errorf("card does not start %s:\n%s", want, c)
			}
			for _, w := range tt.want {
				if !strings.Contains(c, w) {
					t.Errorf("card does not show %q:\n%s", w, c)
				}
			}
			var got []string
			for _, b := range strings.Split(c, `<button data-act="`)[1:] {
				got = append(got, b[:strings.IndexByte(b, '"')])
			}
			if strings.Join(got, " ") != strings.Join(tt.buttons, " ") {
				t.Errorf("buttons %v, want %v", got, tt.buttons)
			}
		})
	}
	// The order of urgency: failing first, disabled last.
	failing, ready, disabled := strings.Index(page, `data-route="cerebras/oss"`), strings.Index(page, `data-route="groq/llama"`), strings.Index(page, `data-route="x/off"`)
	if !(failing < ready && ready < disabled) {
		t.Errorf("routes at %d (failing), %d (ready), %d (disabled); want them in that order", failing, ready, disabled)
	}
	if !strings.Contains(page, `<div class="problems"><div>rests and pauses could not be read from the state store</div></div>`) {
		t.Errorf("the page does not show the snapshot's problem")
	}
}

func TestPageAdminOff(t *testing.T) {
	snap := richSnapshot()
	snap.Admin = false
	rec, _ := get(t, snap, Options{}, "/status")
	page := rec.Body.String()
	if strings.Contains(page, "<button data-act=") {
		t.Errorf("admin off, yet the page has action buttons")
	}
	for _, want := range []string{`data-admin="false"`, `<span class="admin off">admin actions off (no admin_token)</span>`, `data-route="groq/llama" data-state="ready"`} {
		if !strings.Contains(page, want) {
			t.Errorf("admin off: the page has no %s", want)
		}
	}
	if strings.Contains(page, `id="token"`) {
		t.Errorf("a public page without admin asks for a token")
	}
}

func TestPageEscapes(t *testing.T) {
	rec, _ := get(t, richSnapshot(), Options{}, "/status")
	page := rec.Body.String()
	tests := []struct {
		raw, escaped string
	}{
		{scriptTag, "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{breakAttr, "&#34; onmouseover=&#34;x"},
		{quoteChain, "it&#39;s &amp; co"},
	}
	for _, tt := range tests {
		if strings.Contains(page, tt.raw) {
			t.Errorf("the page carries %q unescaped", tt.raw)
		}
		if !strings.Contains(page, tt.escaped) {
			t.Errorf("the page does not show %q as %q", tt.raw, tt.escaped)
		}
	}
	// As html/template wrote them: '+' too, and NUL as U+FFFD.
	if got, want := escaper.Replace("a+b\x00<'\"&>"), "a&#43;b\uFFFD&lt;&#39;&#34;&amp;&gt;"; got != want {
		t.Errorf("escaper: %q, want %q", got, want)
	}
}

func TestPageLive(t *testing.T) {
	rec, _ := get(t, richSnapshot(), Options{}, "/status?part=live")
	live := rec.Body.String()
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("?part=live: %d %s, want 200 text/html", rec.Code, rec.Header().Get("Content-Type"))
	}
	if want := `<span hidden data-now><time datetime="2025-03-04T10:00:00Z" title="10:00:00 UTC">10:00:00 UTC</time></span>`; !strings.HasPrefix(live, want) {
		t.Errorf("the live part does not start with the snapshot's time %s:\n%.200s", want, live)
	}
	for _, not := range []string{"<!doctype", "<head>", "<style>", "<script", "<header>", "<main", "<dialog", "</html>"} {
		if strings.Contains(live, not) {
			t.Errorf("the live part carries %s", not)
		}
	}
	for _, want := range []string{`data-chain="answer"`, `data-route="groq/llama"`, `data-provider="gemini"`} {
		if !strings.Contains(live, want) {
			t.Errorf("the live part has no %s", want)
		}
	}
	page, _ := get(t, richSnapshot(), Options{}, "/status")
	if !strings.Contains(page.Body.String(), `<main id="live">`+live+`</main>`) {
		t.Errorf("the page's <main> is not its live part")
	}
}

func TestPagePrivate(t *testing.T) {
	refuse := func(*http.Request) bool { return false }
	admit := func(*http.Request) bool { return true }

	rec, fake := get(t, richSnapshot(), Options{Authorized: refuse}, "/status")
	page := rec.Body.String()
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("locked page: %d, WWW-Authenticate %q, %s; want 401 with a challenge, text/html", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Header().Get("Content-Type"))
	}
	if fake.reads != 0 {
		t.Errorf("the locked page read %d snapshots, want none", fake.reads)
	}
	for _, want := range []string{`data-private="true"`, `<span id="updated">needs a token</span>`, `placeholder="gateway key or admin token"`, `<main id="live"><p class="locked" data-locked>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the locked page has no %s", want)
		}
	}
	for _, not := range []string{"data-chain=", "data-route=", "data-provider=", "<span hidden data-now>", "<time", "groq", "alert(1)", "rests and pauses"} {
		if strings.Contains(page, not) {
			t.Errorf("the locked page carries %s", not)
		}
	}

	rec, fake = get(t, richSnapshot(), Options{Authorized: refuse}, "/status?part=live")
	if rec.Code != http.StatusUnauthorized || strings.Contains(rec.Body.String(), "data-") || fake.reads != 0 {
		t.Errorf("locked live part: %d, %d reads, %q; want 401 without data", rec.Code, fake.reads, rec.Body.String())
	}

	rec, _ = get(t, richSnapshot(), Options{Authorized: admit}, "/status")
	page = rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(page, `data-private="true"`) || !strings.Contains(page, `data-route="groq/llama"`) || strings.Contains(page, locked) {
		t.Errorf("private page with a token: %d, want 200 with data and data-private", rec.Code)
	}
}

func TestFormats(t *testing.T) {
	now := time.Date(2025, 3, 4, 23, 59, 0, 0, time.UTC)
	tomorrow := now.Add(2 * time.Minute)
	tests := []struct {
		name, got, want string
	}{
		{"plural one", plural(1, "polite retry", "polite retries"), "1 polite retry"},
		{"plural many", plural(uint64(2), "polite retry", "polite retries"), "2 polite retries"},
		{"plural none", plural(0, "route", "routes"), "0 routes"},
		{"latest silent", latest(&status.Latest{Judged: 2, Failed: 2, Silent: 2}), "silent on 2 of its last 2 attempts: it lost the race to another route"},
		{"latest some silent", latest(&status.Latest{Judged: 4, Failed: 3, Silent: 1}), "3 of its last 4 attempts failed, 1 of them silent until another route answered"},
		{"latest one", latest(&status.Latest{Judged: 1, Failed: 1}), "1 of its last attempt failed"},
		{"latest none", latest(nil), ""},
		{"count", count(950) + " " + count(12_345) + " " + count(1_234_567), "950 12.3k 1.2M"},
		{"pct", pct(nil) + " " + percent(0.9) + " " + percent(0.12345), "– 90% 12.3%"},
		{"ms", ms(0) + " " + ms(850) + " " + ms(1250), "– 850 ms 1.2 s"},
		{"human", human(45*time.Second) + " " + human(270*time.Second) + " " + human(190*time.Minute) + " " + human(52*time.Hour), "45s 4m 30s 3h 10m 2d 4h"},
		{"until tomorrow", until(&tomorrow, now), `until <time datetime="2025-03-05T00:01:00Z" title="Mar 5 00:01 UTC">Mar 5 00:01 UTC</time> (in 2m)`},
		{"until lifted", until(nil, now), "until lifted"},
		{"methods", methods(map[string]uint64{"instruct": 1, "prefix": 2, "unknown": 9}), "prefix 2, instruct 1"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
