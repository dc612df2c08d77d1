package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// keyVars are the preset key variables; the tests below unset them all,
// whatever the machine running them has set.
var keyVars = []string{"GROQ_API_KEY", "GEMINI_API_KEY", "CEREBRAS_API_KEY", "OPENROUTER_API_KEY", "NVIDIA_API_KEY",
	"MISTRAL_API_KEY", "GITHUB_TOKEN", "CLOUDFLARE_API_TOKEN", "CLOUDFLARE_ACCOUNT_ID", "TOLLFREE_ADMIN_TOKEN", "TOLLFREE_KEY",
	"REDIS_URL", "PLANNER_MODEL", "EXTRACTOR_MODEL", "JUDGE_MODEL"}

func noKeys(t *testing.T) {
	for _, v := range keyVars {
		t.Setenv(v, "")
	}
}

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tollfree.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckFile: `tollfree check FILE` checks that file (it used to check
// the built-in defaults and exit 0) and ends with a line per chain: how
// many routes are enabled, and the variable that enables the others.
func TestCheckFile(t *testing.T) {
	noKeys(t)
	t.Setenv("GROQ_API_KEY", "gsk_test_0123456789abcdef")
	cfg := writeConfig(t, `providers:
  groq: {}
  gemini: {}
  cerebras: {}
chains:
  answer:
    routes: [groq/llama-3.3-70b-versatile, gemini/gemini-2.5-flash, cerebras/llama3.1-8b]
  extract:
    routes: [cerebras/llama3.1-8b]
`)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"check", cfg}, &stdout, &stderr); code != 0 {
		t.Fatalf("check %s: exit %d, stderr:\n%s", cfg, code, &stderr)
	}
	for _, want := range []string{
		"\nchain answer: 1 of 3 routes enabled; set GEMINI_API_KEY (gemini/gemini-2.5-flash), CEREBRAS_API_KEY (cerebras/llama3.1-8b)\n",
		"\nwarning: chain extract: 0 of 1 route enabled, so every request gets its fallback; set CEREBRAS_API_KEY (cerebras/llama3.1-8b)\n",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("check's output lacks %q; it is:\n%s", want, &stdout)
		}
	}
	if strings.Contains(stdout.String(), "gsk_test") {
		t.Error("check printed the key")
	}
}

// TestCheckRefuses: check exits 1 with the fix in its message for an
// empty file, an under-indented field, and two file arguments.
func TestCheckRefuses(t *testing.T) {
	noKeys(t)
	empty := writeConfig(t, "# to do\n")
	slip := writeConfig(t, `providers:
  groq: {}
chains:
  answer:
    routes:
      - groq/llama-3.3-70b-versatile
   deadline: 30s
`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", empty}, "tollfree check: " + empty + ": the config has no chains, so the gateway would answer nothing; add one, say\n"},
		{[]string{"check", slip}, "tollfree check: " + slip + ":7: cannot parse YAML: `deadline:` is indented 3 spaces, which lines up with no key above it; indent it 1 more space (4 in all) to line up with `routes:` on line 5\n"},
		{[]string{"check", "-config", slip, empty}, "tollfree check: give one config file, as the argument or as -config"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != 1 || !strings.HasPrefix(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 1 and stderr starting %q", tc.args, code, &stderr, tc.want)
		}
	}
}

// served is a `tollfree serve` running in the test.
type served struct {
	addr     string
	profiler string   // -pprof's base URL, when it printed one
	lines    []string // what it printed after its address, up to the first request
	stderr   *lockedWriter
}

// startServe runs serve with args, reads its address line and the
// readiness lines after it, and stops it when the test ends.
func startServe(t *testing.T, args []string, readLines int) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, outW := io.Pipe()
	s := &served{stderr: &lockedWriter{w: new(bytes.Buffer)}}
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, args, outW, s.stderr)
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("serve did not shut down within 10s")
		}
	})
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if p, ok := strings.CutPrefix(strings.TrimSpace(line), "profiler on "); ok && err == nil {
		s.profiler = p // -pprof's line comes first
		line, err = r.ReadString('\n')
	}
	if err != nil {
		t.Fatalf("serve printed no address: %v", err)
	}
	s.addr, _, _ = strings.Cut(strings.TrimPrefix(line, "tollfree listening on http://"), " ")
	// The lines after the address are read with a bound: a serve that
	// prints none must fail the test, not hang it.
	got := make(chan error, 1)
	go func() {
		for range readLines {
			l, err := r.ReadString('\n')
			if err != nil {
				got <- err
				return
			}
			s.lines = append(s.lines, strings.TrimSuffix(l, "\n"))
		}
		got <- nil
		io.Copy(io.Discard, r)
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("serve printed %q, then: %v", s.lines, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("serve printed no line after its address within 10s")
	}
	return s
}

func (s *served) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d, %v", path, resp.StatusCode, err)
	}
}

// TestServeSaysWhatIsMissing: serve with no key for a chain's only route
// prints a warning naming the variable to set, logs it, and /healthz
// says degraded with the same reason.
func TestServeSaysWhatIsMissing(t *testing.T) {
	noKeys(t)
	dir := t.TempDir()
	cfg := writeConfig(t, "listen: 127.0.0.1:0\ndata_dir: "+dir+"\ncall_log: \"off\"\nproviders:\n  groq: {}\nchains:\n  answer: {routes: [groq/llama-3.3-70b-versatile]}\n")
	s := startServe(t, []string{cfg}, 1)
	want := "chain answer: 0 of 1 route enabled, so every request gets its fallback; set GROQ_API_KEY (groq/llama-3.3-70b-versatile)"
	if s.lines[0] != "warning: "+want {
		t.Errorf("serve printed %q after its address, want %q", s.lines[0], "warning: "+want)
	}
	var h map[string]string
	s.getJSON(t, "/healthz", &h)
	if h["status"] != "degraded" || h["reason"] != want {
		t.Errorf("/healthz = %v, want status degraded, reason %q", h, want)
	}
	if log := s.stderr.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, "chain=answer") || !strings.Contains(log, "GROQ_API_KEY") {
		t.Errorf("serve's log lacks the warning for chain answer:\n%s", log)
	}
}

// TestServeDefaultsWithoutFile: with no config file, serve still runs the
// built-in presets, says that none of the default chain's routes has a
// key and which variables to set, and answers a chat with a 503
// no_route_enabled saying the same (issue 34), not a "resting" message.
func TestServeDefaultsWithoutFile(t *testing.T) {
	noKeys(t)
	t.Chdir(t.TempDir())
	s := startServe(t, []string{"-listen", "127.0.0.1:0"}, 1)
	for _, want := range []string{"warning: chain answer: 0 of 9 routes enabled, so every request gets a 503 no_route_enabled; set GEMINI_API_KEY (gemini: 4 routes), GROQ_API_KEY (groq: 2 routes)", "CLOUDFLARE_API_TOKEN (cloudflare/@cf/zai-org/glm-4.7-flash)"} {
		if !strings.Contains(s.lines[0], want) {
			t.Errorf("serve printed %q, want it to hold %q", s.lines[0], want)
		}
	}
	resp, err := http.Post("http://"+s.addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"answer","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(body), `"code":"no_route_enabled"`) || !strings.Contains(string(body), "set GEMINI_API_KEY") {
		t.Errorf("a request with no keys: %d %s, want a 503 no_route_enabled naming the keys to set", resp.StatusCode, body)
	}
}

// lockedWriter lets the test read what serve's logger writes.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
