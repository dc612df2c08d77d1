package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/status"
)

// composeService is what the test reads of one service of compose.yaml.
type composeService struct {
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
}

// emulating is the line `tollfree emulator` prints once it listens.
var emulating = regexp.MustCompile(`emulated free tiers on (http://[0-9.:]+)`)

// composeAdminToken is set for the test only: compose.yaml leaves
// TOLLFREE_ADMIN_TOKEN unset, and the test needs the admin API to pause.
const composeAdminToken = "compose-test-admin-token"

// TestComposeTopology runs compose.yaml's stack as processes, since a
// container engine may be missing: `tollfree emulator` with the emulator
// service's command, the tollfree-a and tollfree-b services' command and
// environment with deploy/compose/tollfree.yaml (only the container
// addresses changed: the emulator's, Redis's, the listen port and /data),
// one Redis, and a round-robin proxy standing in for nginx. Through the
// proxy, each instance answers from the chain's first route; a pause
// through tollfree-a's admin API is seen by tollfree-b, which answers from
// the next route and shows the pause and tollfree-a's count in its
// /status.json; /readyz is 200 on both; SIGTERM stops both with status 0.
func TestComposeTopology(t *testing.T) {
	checkLeaks(t)
	services := readCompose(t)
	rds := testenv.StartRedis(t)
	bin := testenv.BuildTollfree(t)

	emuArgs := replaceArg(t, services["emulator"].Command, "0.0.0.0:9000", "127.0.0.1:0")
	emu := testenv.Start(t, nil, bin, emuArgs...)
	emuURL := emu.WaitOutput(emulating, 30*time.Second)[1]

	var urls []*url.URL
	var procs []*testenv.Proc
	for _, name := range []string{"tollfree-a", "tollfree-b"} {
		p, u := startComposeGateway(t, bin, services[name], emuURL, rds.URL())
		procs, urls = append(procs, p), append(urls, u)
	}
	lb := roundRobin(t, urls)

	const first, second = "gemini/gemini-2.5-flash-lite", "groq/llama-3.3-70b-versatile"
	for i := range urls {
		if got := composeAsk(t, lb.URL); got != first {
			t.Fatalf("request %d through the proxy answered by %q, want %s", i+1, got, first)
		}
	}
	for i, u := range urls {
		if code := getStatus(t, u.String()+"/readyz"); code != http.StatusOK {
			t.Errorf("instance %d: /readyz %d, want 200", i+1, code)
		}
	}

	composeAdmin(t, urls[0].String(), `{"route":"`+first+`","reason":"compose test"}`)
	waitPaused(t, urls[1].String(), first)
	for i := range urls {
		if got := composeAsk(t, lb.URL); got != second {
			t.Fatalf("after the pause, request %d through the proxy answered by %q, want %s", i+1, got, second)
		}
	}
	if used := composeRoute(t, urls[1].String(), first).Budget.RPD.Used; used < 2 {
		t.Errorf("tollfree-b counts %d of %s's requests today, want both instances' 2", used, first)
	}

	for i, p := range procs {
		p.Signal(syscall.SIGTERM)
		if err := p.Wait(15 * time.Second); err != nil {
			t.Errorf("instance %d: exit after SIGTERM: %v; output:\n%s", i+1, err, p.Output())
		}
	}
}

// readCompose reads compose.yaml's services (anchors merged).
func readCompose(t *testing.T) map[string]composeService {
	t.Helper()
	b, err := os.ReadFile(repoPath("compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	for _, name := range []string{"emulator", "tollfree-a", "tollfree-b"} {
		if len(c.Services[name].Command) == 0 {
			t.Fatalf("compose.yaml: service %s has no command", name)
		}
	}
	return c.Services
}

// startComposeGateway starts one gateway service of compose.yaml: its
// command and environment, its config with the container addresses
// changed to this machine's, on a free port of 127.0.0.1.
func startComposeGateway(t *testing.T, bin string, s composeService, emuURL, redisURL string) (*testenv.Proc, *url.URL) {
	t.Helper()
	b, err := os.ReadFile(repoPath("deploy", "compose", "tollfree.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	for old, repl := range map[string]string{"http://emulator:9000": emuURL, "data_dir: /data": "data_dir: " + t.TempDir()} {
		if !strings.Contains(conf, old) {
			t.Fatalf("deploy/compose/tollfree.yaml lacks %q: update this test", old)
		}
		conf = strings.ReplaceAll(conf, old, repl)
	}
	cfg := filepath.Join(t.TempDir(), "tollfree.yaml")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if s.Environment["REDIS_URL"] == "" {
		t.Fatal("compose.yaml: a gateway without REDIS_URL")
	}
	env := []string{"TOLLFREE_ADMIN_TOKEN=" + composeAdminToken}
	for k, v := range s.Environment {
		if k == "REDIS_URL" {
			v = redisURL
		}
		env = append(env, k+"="+v)
	}
	args := replaceArg(t, replaceArg(t, s.Command, "0.0.0.0:8080", "127.0.0.1:0"), "/config/tollfree.yaml", cfg)
	p := testenv.Start(t, env, bin, args...)
	u, err := url.Parse(p.WaitOutput(listening, 30*time.Second)[1])
	if err != nil {
		t.Fatal(err)
	}
	return p, u
}

// replaceArg returns args with old replaced by repl; old must be there.
func replaceArg(t *testing.T, args []string, old, repl string) []string {
	t.Helper()
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == old {
			out[i] = repl
			return out
		}
	}
	t.Fatalf("compose.yaml: command %q lacks %s: update this test", args, old)
	return nil
}

// roundRobin is nginx's part: one address spreading requests over urls in
// turn.
func roundRobin(t *testing.T, urls []*url.URL) *httptest.Server {
	var n atomic.Uint64
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(urls[(n.Add(1)-1)%uint64(len(urls))])
	}}
	lb := httptest.NewServer(rp)
	t.Cleanup(lb.Close)
	return lb
}

// composeAsk sends one chat request on the compose chain and returns the
// route that answered; it wants a 200.
func composeAsk(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Post(base+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"answer","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat: status %d: %s", resp.StatusCode, b)
	}
	return resp.Header.Get("X-Tollfree-Route")
}

func getStatus(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// composeAdmin pauses through base's admin API.
func composeAdmin(t *testing.T, base, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/admin/pause", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+composeAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /admin/pause: status %d: %s", resp.StatusCode, b)
	}
}

// composeRoute returns route id as base's /status.json tells it, read with
// the admin token: the instances listen beyond loopback with no gateway
// key, so their status is private.
func composeRoute(t *testing.T, base, id string) status.Route {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/status.json", nil)
	req.Header.Set("Authorization", "Bearer "+composeAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s status.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatalf("/status.json: %v", err)
	}
	for _, r := range s.Routes {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("/status.json has no route %s", id)
	return status.Route{}
}

// waitPaused waits, up to 5 s, for base's /status.json to show id paused:
// the other instance wrote the pause to Redis, and this one reads it from
// there (waiting for a process, not a clock).
func waitPaused(t *testing.T, base, id string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := composeRoute(t, base, id)
		if r.State == status.Paused {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the other instance's /status.json shows %s %q, not paused: the pause is not shared", id, r.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
