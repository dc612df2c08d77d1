package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Fake keys: tests check that none of them ever appears in an error or a
// table.
const (
	groqKey  = "gsk_FAKE_groq_key_0123456789"
	adminKey = "FAKE_admin_token_0123456789"
	gwKey    = "FAKE_gateway_key_0123456789"
)

func testEnv(extra map[string]string) func(string) string {
	m := map[string]string{
		"GROQ_API_KEY":         groqKey,
		"TOLLFREE_ADMIN_TOKEN": adminKey,
		"TOLLFREE_KEY":         gwKey,
		"PLANNER_MODEL":        "openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:cerebras:gpt-oss-120b",
		"JUDGE_MODEL":          "openai-compatible:groq:llama-3.1-8b-instant",
		// The callers of testdata/plans/site.yaml and team.yaml.
		"TOLLFREE_VISITOR_SECRET": "FAKE_visitor_secret_0123456789abcdef",
		"ALICE_KEY":               "FAKE_alice_key_0123456789",
		"CI_KEY":                  "FAKE_ci_key_0123456789",
		"SUPPORT_BOT_KEY":         "FAKE_support_bot_key_0123456789",
	}
	for k, v := range extra {
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

func TestDefault(t *testing.T) {
	p, err := Default(testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	c := p.Chains["answer"]
	if c == nil {
		t.Fatal("no answer chain")
	}
	if c.Fallback.Kind != FallbackMessage || c.Fallback.Message == "" {
		t.Errorf("answer fallback = %+v, want a fixed message", c.Fallback)
	}
	if got, want := c.Routes[0].ID, "gemini/gemini-3.1-flash-lite"; got != want {
		t.Errorf("first route = %s, want %s", got, want)
	}
	for _, r := range c.Routes {
		if wantOff := r.Provider.Name != "groq"; r.Disabled != wantOff {
			t.Errorf("%s disabled = %v (%s), want %v", r.ID, r.Disabled, r.DisabledReason, wantOff)
		}
	}
	if got := p.Providers["gemini"].DisabledReason; got != "no key: set GEMINI_API_KEY" {
		t.Errorf("gemini reason = %q, want %q", got, "no key: set GEMINI_API_KEY")
	}
	if got := p.Providers["cloudflare"].DisabledReason; got != "no key: set CLOUDFLARE_API_TOKEN" {
		t.Errorf("cloudflare reason = %q", got)
	}
	if p.AdminToken != adminKey || len(p.GatewayKeys) != 1 || p.GatewayKeys[0] != gwKey {
		t.Errorf("admin token or gateway keys not read from the environment")
	}
	planner := p.Chains["planner"]
	if planner == nil || !planner.SameModel || planner.Interactive || planner.WaitCap != 2*time.Minute {
		t.Fatalf("planner = %+v, want a same-model, non-interactive chain waiting up to 2m", planner)
	}
	if len(planner.Routes) != 2 || planner.Routes[1].ID != "cerebras/gpt-oss-120b" {
		t.Errorf("planner routes wrong")
	}
}

func TestCloudflareAccount(t *testing.T) {
	src := "providers:\n  cloudflare: {}\nchains:\n  c: {routes: [cloudflare/@cf/meta/llama-3.1-8b-instruct]}\n"
	env := testEnv(map[string]string{"CLOUDFLARE_API_TOKEN": "cf-FAKE"})
	p, err := Parse("t.yaml", []byte(src), env)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Providers["cloudflare"].DisabledReason, "no base URL: set CLOUDFLARE_ACCOUNT_ID"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
	env = testEnv(map[string]string{"CLOUDFLARE_API_TOKEN": "cf-FAKE", "CLOUDFLARE_ACCOUNT_ID": "acc123"})
	p, err = Parse("t.yaml", []byte(src), env)
	if err != nil {
		t.Fatal(err)
	}
	pr := p.Providers["cloudflare"]
	if want := "https://api.cloudflare.com/client/v4/accounts/acc123/ai/v1"; pr.Disabled || pr.BaseURL != want {
		t.Errorf("cloudflare = disabled %v, %s; want ready, %s", pr.Disabled, pr.BaseURL, want)
	}
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "groq")
	if err := os.WriteFile(keyPath, []byte(" "+groqKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	emptyPath := filepath.Join(dir, "empty")
	if err := os.WriteFile(emptyPath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, wantKey, wantReason string
	}{
		{keyPath, groqKey, ""},
		{emptyPath, "", "no key: " + emptyPath + " is empty"},
		{filepath.Join(dir, "missing"), "", "no key: cannot read " + filepath.Join(dir, "missing")},
	} {
		src := "providers:\n  groq: {api_key_file: " + tc.file + "}\nchains:\n  c: {routes: [groq/llama-3.1-8b-instant]}\n"
		p, err := Parse("t.yaml", []byte(src), nil)
		if err != nil {
			t.Fatal(err)
		}
		pr := p.Providers["groq"]
		if pr.APIKey != tc.wantKey || pr.DisabledReason != tc.wantReason || pr.KeySource != "file "+tc.file {
			t.Errorf("%s: key ok %v, reason %q, source %q; want reason %q", tc.file, pr.APIKey == tc.wantKey, pr.DisabledReason, pr.KeySource, tc.wantReason)
		}
		if r := p.Routes["groq/llama-3.1-8b-instant"]; r.Disabled != (tc.wantReason != "") {
			t.Errorf("%s: route disabled = %v", tc.file, r.Disabled)
		}
	}
}

func TestCompiledValues(t *testing.T) {
	p, err := Load("testdata/plans/full.yaml", testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(p.ProviderOrder, ","), "groq,gem,cf,openrouter,local,cerebras"; got != want {
		t.Errorf("provider order = %s, want %s", got, want)
	}
	if got, want := strings.Join(p.ChainOrder, ","), "answer,local-only,planner,judge"; got != want {
		t.Errorf("chain order = %s, want %s", got, want)
	}
	r := p.Routes["groq/openai/gpt-oss-120b"]
	if got, want := string(r.Extra["include"]), "[1,2.5,true,null]"; got != want {
		t.Errorf("extra include = %s, want %s", got, want)
	}
	if got := p.Routes["groq/llama-3.3-70b-versatile"]; got.Limits.RPM != 10 || got.Limits.RPD != 1000 || got.Timeout != 9*time.Second || !got.Plentiful {
		t.Errorf("override merge wrong: %+v", got.Limits)
	}
	if got := p.Providers["groq"].Limits.RPD; got != 5000 {
		t.Errorf("groq account rpd = %d, want 5000", got)
	}
	if got := p.Routes["gem/gemini-2.5-flash-lite"]; !got.Scarce || got.Reset.Location.String() != "Europe/Paris" {
		t.Errorf("flash-lite scarce %v reset %v", got.Scarce, got.Reset.Location)
	}
	or := p.Routes["openrouter/meta-llama/llama-3.3-70b-instruct:free"]
	if !or.Scarce || or.Canonical != "llama-3.3-70b-instruct" || or.Reset.Location.String() != "UTC" {
		t.Errorf("openrouter route: scarce %v canonical %s", or.Scarce, or.Canonical)
	}
	if got := p.Providers["local"]; got.BaseURL != "http://127.0.0.1:11434/v1" || got.Flavor != "generic" || got.Disabled {
		t.Errorf("local provider = %+v", got)
	}
	if got := p.Routes["local/other-model"]; got.Timeout != 90*time.Second || got.Canonical != "other-model" {
		t.Errorf("unlisted model of a custom provider: timeout %s canonical %s", got.Timeout, got.Canonical)
	}
	c := p.Chains["answer"]
	if got, want := c.Ranks, []int{1, 1, 2, 3, 4, 5}; !equalInts(got, want) {
		t.Errorf("ranks = %v, want %v", got, want)
	}
	if c.Fallback.Kind != FallbackSearch || c.Fallback.Content != "./content" || c.Margin != 0.1 || c.CacheTTL != 168*time.Hour {
		t.Errorf("answer chain = %+v", c)
	}
	if p.Redis != "redis://localhost:6379/0" || p.Server.MaxBodyBytes != 512<<10 || p.Rest.Growth != 2 || p.Rest.GrowthMax != 20*time.Minute {
		t.Errorf("top level wrong: redis %q body %d", p.Redis, p.Server.MaxBodyBytes)
	}
	if len(p.GatewayKeys) != 1 {
		t.Errorf("gateway keys = %d, want 1 (the unset one dropped)", len(p.GatewayKeys))
	}
	if p.Chains["local-only"].Fallback.Kind != FallbackError {
		t.Errorf("local-only fallback should be error")
	}
}

// TestFirstTokenAndKeepAliveDefaults (issue 13): a chain's first-token
// timeout is 10s, or its attempt timeout when that is shorter, and a
// stream's keep-alive 10s; each is taken as written, 0s turning the
// keep-alive off.
func TestFirstTokenAndKeepAliveDefaults(t *testing.T) {
	const chains = `
chains:
  plain: {routes: [groq/llama-3.1-8b-instant]}
  quick: {routes: [groq/llama-3.1-8b-instant], attempt_timeout: 8s}
  set: {routes: [groq/llama-3.1-8b-instant], attempt_timeout: 30s, first_token_timeout: 25s}
`
	tests := []struct {
		server    string
		keepAlive time.Duration
	}{
		{"", 10 * time.Second},
		{"server: {stream_keepalive: 0s}\n", 0},
		{"server: {stream_keepalive: 25s}\n", 25 * time.Second},
	}
	for _, tt := range tests {
		p, err := Parse("t.yaml", []byte(tt.server+"providers:\n  groq: {api_key: ${GROQ_API_KEY}}\n"+chains), testEnv(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Server.StreamKeepAlive; got != tt.keepAlive {
			t.Errorf("%q: stream keep-alive %s, want %s", tt.server, got, tt.keepAlive)
		}
		for name, want := range map[string]time.Duration{"plain": 10 * time.Second, "quick": 8 * time.Second, "set": 25 * time.Second} {
			if got := p.Chains[name].FirstTokenTimeout; got != want {
				t.Errorf("chain %s: first-token timeout %s, want %s", name, got, want)
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestKeysNeverShown feeds keys through every path that reports or renders
// and checks that none comes out.
func TestKeysNeverShown(t *testing.T) {
	const pasted = "gsk_PASTED_0123456789abcdef"
	bad := []string{
		"providers:\n  groq: {api_key: " + pasted + "}\n",
		"providers:\n  groq: {api_key: \"Bearer " + pasted + "\"}\n",
		"providers:\n  groq: {api_key: \"${" + pasted + "}\"}\n",
		"providers:\n  groq: {api_key: \"${GROQ_API_KEY:-" + pasted + "}\"}\n",
		"providers:\n  groq: {api_key: [" + pasted + "]}\n",
		"providers:\n  groq: {api_key: \"${" + pasted + "\"}\n",
		"providers:\n  groq:\n    api_key: {" + pasted + ": 1}\n",
		"listen: ${GROQ_API_KEY}\n",
		"chains:\n  a: {routes: [groq/x], attempt_timeout: ${GROQ_API_KEY}}\n",
		"chains:\n  a: {routes: [groq/x], max_in_flight: ${GROQ_API_KEY}}\n",
		"providers:\n  groq: {api_key: " + pasted + "\n  bad yaml [\n",
		"providers: {groq: {api_key: '" + pasted + "'}} ]",
	}
	for i, src := range bad {
		_, err := Parse("t.yaml", []byte(src), testEnv(nil))
		if err == nil {
			t.Errorf("case %d: no error", i)
			continue
		}
		for _, secret := range []string{pasted, groqKey, "PASTED"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("case %d: error shows a key: %v", i, err)
			}
		}
	}
	s := Secret{Value: groqKey}
	if strings.Contains(s.String()+s.GoString(), groqKey) {
		t.Error("Secret prints its value")
	}
}

func TestErrorType(t *testing.T) {
	_, err := Parse("t.yaml", []byte("listen: x\nlistn: y\n"), nil)
	var cfgErr *Error
	if !errors.As(err, &cfgErr) {
		t.Fatalf("error %T is not a *config.Error", err)
	}
	if got := len(cfgErr.Problems); got != 2 {
		t.Fatalf("problems = %d, want 2: %v", got, err)
	}
	if got, want := strings.Count(err.Error(), "\n"), 1; got != want {
		t.Errorf("Error() has %d newlines, want one problem per line", got)
	}
	if _, err := Load("testdata/does-not-exist.yaml", nil); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file = %v, want an error wrapping os.ErrNotExist", err)
	}
}

// TestPresetKeptWithBaseURL: a provider named after a preset keeps the
// preset when it points base_url at a proxy or restates its dialect (issue
// 10, item 11): its dialect, flavor, reset, limits and models stay, and
// only what the file sets overrides them. The table `tollfree check`
// prints says so too.
func TestPresetKeptWithBaseURL(t *testing.T) {
	src := `
providers:
  gemini: {base_url: "https://proxy.example/gemini/v1beta", api_key: ${GEMINI_API_KEY}}
  groq:   {base_url: "https://proxy.example/groq/v1", dialect: openai, limits: {rpd: 500}}
chains:
  a: {routes: [gemini/gemini-2.5-flash, groq/llama-3.3-70b-versatile]}
`
	p, err := Parse("t.yaml", []byte(src), testEnv(map[string]string{"GEMINI_API_KEY": "AIzaFAKEgeminiKey0123456789"}))
	if err != nil {
		t.Fatal(err)
	}
	gem := p.Providers["gemini"]
	if gem.Preset != "gemini" || gem.Flavor != "gemini" || gem.Dialect != DialectGemini {
		t.Errorf("gemini provider: preset %q flavor %q dialect %q, want the gemini preset's", gem.Preset, gem.Flavor, gem.Dialect)
	}
	if got := gem.Reset.String(); got != "midnight America/Los_Angeles" {
		t.Errorf("gemini reset = %s, want midnight America/Los_Angeles", got)
	}
	if gem.BaseURL != "https://proxy.example/gemini/v1beta" {
		t.Errorf("gemini base URL = %s, want the one set", gem.BaseURL)
	}
	if r := p.Routes["gemini/gemini-2.5-flash"]; r.Limits.RPD != 20 || r.MaxContext != 1048576 || !r.Reasoning || !r.Scarce {
		t.Errorf("gemini-2.5-flash lost its preset figures: limits %+v context %d reasoning %v scarce %v", r.Limits, r.MaxContext, r.Reasoning, r.Scarce)
	}
	groq := p.Providers["groq"]
	if groq.Preset != "groq" || groq.Flavor != "groq" || groq.Limits.RPD != 500 || groq.KeySource != "env GROQ_API_KEY" {
		t.Errorf("groq provider: preset %q flavor %q rpd %d key %q, want the groq preset with rpd 500", groq.Preset, groq.Flavor, groq.Limits.RPD, groq.KeySource)
	}
	if r := p.Routes["groq/llama-3.3-70b-versatile"]; r.Limits.RPD != 1000 || r.Reset.Kind != ResetRolling {
		t.Errorf("groq route lost its preset figures: limits %+v reset %s", r.Limits, r.Reset.String())
	}
}

// TestStatusPrivateDefault: a gateway that asks callers for a key keeps its
// status and metrics private unless the file says public (issue 10).
func TestStatusPrivateDefault(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"KEY": "gw-key-0123456789abcdef", "ADMIN": "adm-0123456789abcdef"}[k]
	}
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"gateway_keys: [${KEY}]\n", true},
		{"gateway_keys: [${UNSET:-}]\n", false}, // no key set: the gateway is open
		{"", false},
		{"gateway_keys: [${KEY}]\nstatus: public\n", false},
		{"admin_token: ${ADMIN}\nstatus: private\n", true},
		// Issue 32: beyond loopback, or with a chain that hides its
		// routes, it is private without keys too.
		{"listen: 0.0.0.0:8080\n", true},
		{"listen: 192.0.2.7:8080\n", true},
		{"listen: localhost:8080\n", false},
		{"listen: '[::1]:8080'\n", false},
		{"listen: 0.0.0.0:8080\nstatus: public\n", false},
		{"providers: {groq: {preset: groq, api_key: ${KEY}}}\nchains: {site: {routes: [groq/llama-3.3-70b-versatile], hide_route: true}}\n", true},
	} {
		p, err := Parse("t.yaml", []byte(tc.src), env)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if p.StatusPrivate != tc.want {
			t.Errorf("%q: StatusPrivate = %v, want %v", tc.src, p.StatusPrivate, tc.want)
		}
	}
	// -listen decides it again; a chain that hides its routes keeps
	// gateway keys out.
	p, err := Parse("t.yaml", []byte("gateway_keys: [${KEY}]\nadmin_token: ${ADMIN}\nproviders: {groq: {preset: groq, api_key: ${KEY}}}\nchains: {site: {routes: [groq/llama-3.3-70b-versatile], hide_route: true}}\n"), env)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.StatusTokens(); !p.StatusPrivate || len(got) != 1 || got[0] != "adm-0123456789abcdef" {
		t.Errorf("hide_route with keys: private %v, %d tokens read it; want private, the admin token alone", p.StatusPrivate, len(got))
	}
	open, err := Parse("t.yaml", nil, env)
	if err != nil {
		t.Fatal(err)
	}
	if open.ListenOn("0.0.0.0:9000"); !open.StatusPrivate || !strings.Contains(open.StatusWhy, "0.0.0.0:9000, beyond loopback") {
		t.Errorf("-listen 0.0.0.0:9000: private %v (%s), want private, beyond loopback", open.StatusPrivate, open.StatusWhy)
	}
}
