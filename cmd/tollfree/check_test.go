package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tollfree/tollfree/config"
)

// These tests read config's own test plans, from config's folder (t.Chdir),
// so that the paths the table prints (a key file's) are the same as in
// config's tests.

var update = flag.Bool("update", false, "rewrite the golden files in testdata/check")

// The keys of checkEnv: fake, and shaped like real ones, so that a table
// that printed one would be caught.
const (
	groqKey  = "gsk_FAKE_groq_key_0123456789"
	adminKey = "FAKE_admin_token_0123456789"
	gwKey    = "FAKE_gateway_key_0123456789"
)

// checkEnv is the environment config's test plans expect, plus extra.
func checkEnv(extra map[string]string) func(string) string {
	m := map[string]string{
		"GROQ_API_KEY":         groqKey,
		"TOLLFREE_ADMIN_TOKEN": adminKey,
		"TOLLFREE_KEY":         gwKey,
		"PLANNER_MODEL":        "openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:cerebras:gpt-oss-120b",
		"JUDGE_MODEL":          "openai-compatible:groq:llama-3.1-8b-instant",
		// The callers of config/testdata/plans/site.yaml and team.yaml.
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

// inConfig moves the test into config's folder and returns the absolute
// path of this package's testdata/check, for the golden files.
func inConfig(t *testing.T) string {
	t.Helper()
	golden, err := filepath.Abs(filepath.Join("testdata", "check"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join("..", "..", "config"))
	return golden
}

// checkGolden compares got with dir/name, or rewrites it with -update.
func checkGolden(t *testing.T, dir, name string, got []byte) {
	t.Helper()
	path := filepath.Join(dir, name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -update to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestGoldenPlans(t *testing.T) {
	golden := inConfig(t)
	files, err := filepath.Glob("testdata/plans/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../examples/tollfree.yaml")
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			p, err := config.Load(file, checkEnv(map[string]string{"GEMINI_KEY_FILE": "testdata/gemini.key"}))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			var buf bytes.Buffer
			writeCheckTable(&buf, p)
			checkGolden(t, golden, "plans/"+name+".golden", buf.Bytes())
		})
	}
}

func TestGoldenDefault(t *testing.T) {
	golden := inConfig(t)
	for _, tc := range []struct {
		name string
		env  func(string) string
	}{
		{"default-keys", checkEnv(map[string]string{"NVIDIA_API_KEY": "nvapi-FAKE", "CLOUDFLARE_API_TOKEN": "cf-FAKE"})},
		{"default-empty", func(string) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := config.Default(tc.env)
			if err != nil {
				t.Fatalf("Default: %v", err)
			}
			var buf bytes.Buffer
			writeCheckTable(&buf, p)
			checkGolden(t, golden, tc.name+".golden", buf.Bytes())
		})
	}
}

// TestCheckTableShowsNoSecret: check's table never prints a key, a token,
// a header value or a base URL's credentials.
func TestCheckTableShowsNoSecret(t *testing.T) {
	inConfig(t)
	var buf bytes.Buffer
	for _, file := range []string{"testdata/plans/full.yaml", "../examples/tollfree.yaml"} {
		p, err := config.Load(file, checkEnv(nil))
		if err != nil {
			t.Fatal(err)
		}
		writeCheckTable(&buf, p)
	}
	p, err := config.Default(checkEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	writeCheckTable(&buf, p)
	p, err = config.Parse("t.yaml", []byte("providers:\n  lab: {base_url: \"https://tok:pw@lab.example/v1\"}\nchains:\n  a: {routes: [lab/m]}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	writeCheckTable(&buf, p)
	for _, secret := range []string{groqKey, adminKey, gwKey, "fake-gemini-key-from-file", "docs", "tok:", ":pw"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("table shows a secret or header value %q", secret)
		}
	}
}

// TestCheckTablePresetKept: a provider whose preset is kept with a base
// URL of the file's still shows the preset's flavor, dialect and reset.
func TestCheckTablePresetKept(t *testing.T) {
	src := `
providers:
  gemini: {base_url: "https://proxy.example/gemini/v1beta", api_key: ${GEMINI_API_KEY}}
  groq:   {base_url: "https://proxy.example/groq/v1", dialect: openai, limits: {rpd: 500}}
chains:
  a: {routes: [gemini/gemini-2.5-flash, groq/llama-3.3-70b-versatile]}
`
	p, err := config.Parse("t.yaml", []byte(src), checkEnv(map[string]string{"GEMINI_API_KEY": "AIzaFAKEgeminiKey0123456789"}))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeCheckTable(&buf, p)
	line := ""
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(l, "gemini ") {
			line = l
		}
	}
	if f := strings.Fields(line); len(f) < 3 || f[1] != "gemini" || f[2] != "gemini" || !strings.Contains(line, "midnight America/Los_Angeles") {
		t.Errorf("check's provider line = %q, want flavor gemini, dialect gemini, reset midnight America/Los_Angeles", line)
	}
}

// TestCheckTableKeyless: a keyless provider says so in check's KEY column.
func TestCheckTableKeyless(t *testing.T) {
	src := "providers:\n  pollinations: {}\n  huggingface: {}\n  ovhcloud: {}\nchains:\n  a: {routes: [pollinations/openai, huggingface/openai/gpt-oss-120b, ovhcloud/gpt-oss-120b]}\n"
	p, err := config.Parse("t.yaml", []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	var b strings.Builder
	writeCheckTable(&b, p)
	if !strings.Contains(b.String(), "none (keyless; POLLINATIONS_API_KEY for more)") {
		t.Errorf("check's table does not say pollinations is keyless:\n%s", b.String())
	}
}

// TestCallersTableShowsNoKey: `check` names each key and where it comes
// from, never its value.
func TestCallersTableShowsNoKey(t *testing.T) {
	inConfig(t)
	for _, file := range []string{"testdata/plans/site.yaml", "testdata/plans/team.yaml"} {
		p, err := config.Load(file, checkEnv(nil))
		if err != nil {
			t.Fatal(err)
		}
		var buf strings.Builder
		writeCheckTable(&buf, p)
		for _, v := range p.SecretValues() {
			if strings.Contains(buf.String(), v) {
				t.Errorf("%s: check prints a secret", file)
			}
		}
		if !strings.Contains(buf.String(), "\ncallers: ") {
			t.Errorf("%s: check does not say who may call", file)
		}
	}
}

// TestCheckLinesFit (issue 34): no line of check's output is wider than
// 200 characters, for every plan of testdata/check and the defaults: the
// limits are one cell, a route's key and reset its provider's, a chain's
// summary wraps, and extra fields are named under the table.
func TestCheckLinesFit(t *testing.T) {
	golden := inConfig(t)
	files, err := filepath.Glob(filepath.Join(golden, "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	plans, err := filepath.Glob(filepath.Join(golden, "plans", "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, plans...)
	if len(files) < 8 {
		t.Fatalf("%d golden files, want the 8 of testdata/check", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if n := utf8.RuneCountInString(line); n > 200 {
				t.Errorf("%s:%d is %d characters wide, want at most 200: %.80s...", filepath.Base(f), i+1, n, line)
			}
		}
	}
}

// TestStatusRuleLine: check says who reads the status and why, in lines
// within 200 characters, and says so when nobody can (issue 32).
func TestStatusRuleLine(t *testing.T) {
	for _, tc := range []struct {
		yaml, want string
	}{
		{"listen: 127.0.0.1:8080\n", "status: public (it listens on loopback only, with no gateway key): anyone who reaches the gateway reads"},
		{"listen: '[2001:db8:1234:5678:9abc:def0:1234:5678]:8080'\n", "nobody reads them: set admin_token, or write status: public"},
		{"listen: 0.0.0.0:8080\nadmin_token: ${TOLLFREE_ADMIN_TOKEN}\n", "status: private (it listens on 0.0.0.0:8080, beyond loopback, with no gateway key): /status, /status.json and /metrics need the admin token\n"},
	} {
		p, err := config.Parse("t.yaml", []byte(tc.yaml), checkEnv(nil))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		var buf bytes.Buffer
		writeStatusRule(&buf, p)
		if !strings.Contains(buf.String(), tc.want) {
			t.Errorf("%q: check says %q, want %q in it", tc.yaml, buf.String(), tc.want)
		}
		if strings.Contains(tc.yaml, "admin_token") && strings.Contains(buf.String(), "nobody") {
			t.Errorf("%q: check says %q, though the admin token reads them", tc.yaml, buf.String())
		}
		for _, line := range strings.Split(buf.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > 200 {
				t.Errorf("%q: a line %d characters wide: %s", tc.yaml, n, line)
			}
		}
	}
}
