package e2e_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
)

// liveConfig is a config over the emulated provider capd whose model
// "slow" streams one chunk per second of the emulator's fake clock, so
// that a test holds a stream in flight as long as it likes. capped tries
// m1 (2 requests a day) then m2; rested tries r1 then m2. GRACE is
// server.shutdown_grace, EXTRA more chains.
const liveConfig = `
data_dir: DATA
rest: {overloaded: 1h}
server: {shutdown_grace: GRACE}
providers:
  capd:
    base_url: EMU/capd/v1
    api_key: ${CAPD_API_KEY}
    models:
      m1: {rpd: 2}
      m2: {}
      r1: {}
      slow: {}
chains:
  capped: {routes: [capd/m1, capd/m2], margin: 0}
  rested: {routes: [capd/r1, capd/m2]}
  slow: {routes: [capd/slow], attempt_timeout: 10m, deadline: 10m}
EXTRA`

// liveServer is `tollfree serve` over liveConfig, its config file and the
// emulator's fake clock.
type liveServer struct {
	*served
	emu    *emulator.Emulator
	clk    *clock.Fake
	cfg    string
	data   string
	grace  string
	emuURL string
}

func startLive(t *testing.T, bin, grace, extra string) *liveServer {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
	emu := emulator.New(emulator.Options{Clock: clk})
	emu.AddProvider(emulator.Provider{Name: "capd", Key: capdKey})
	for _, id := range []string{"m1", "m2", "r1"} {
		emu.AddModel("capd", emulator.Model{ID: id})
	}
	emu.AddModel("capd", emulator.Model{ID: "slow", ChunkDelay: time.Second, Answer: "one two three four five"})
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	ls := &liveServer{emu: emu, clk: clk, cfg: filepath.Join(t.TempDir(), "tollfree.yaml"), data: t.TempDir(), grace: grace, emuURL: srv.URL}
	ls.write(t, extra)
	ls.served = serve(t, bin, ls.cfg)
	return ls
}

// write rewrites the config file with extra chains.
func (ls *liveServer) write(t *testing.T, extra string) {
	t.Helper()
	yaml := strings.NewReplacer("DATA", ls.data, "EMU", ls.emuURL, "GRACE", ls.grace, "EXTRA", extra).Replace(liveConfig)
	if err := os.WriteFile(ls.cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// status posts one chat request on model and returns the status.
func (ls *liveServer) status(t *testing.T, model string) int {
	t.Helper()
	resp, err := http.Post(ls.url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"What does tollfree do?"}]}`))
	if err != nil {
		t.Fatalf("ask %s: %v", model, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// liveStream is a streamed answer being read.
type liveStream struct {
	body io.ReadCloser
	r    *bufio.Reader
}

// stream starts a streamed request on the slow chain and reads its first
// content chunk: from then on the answer is in flight.
func (ls *liveServer) stream(t *testing.T) *liveStream {
	t.Helper()
	resp, err := http.Post(ls.url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"slow","stream":true,"messages":[{"role":"user","content":"Tell me slowly."}]}`))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: status %d: %s", resp.StatusCode, b)
	}
	s := &liveStream{body: resp.Body, r: bufio.NewReader(resp.Body)}
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before its first chunk: %v", err)
		}
		if strings.Contains(line, `"content":"one`) {
			return s
		}
	}
}

// rest reads the rest of the stream while the emulator's clock is driven
// one chunk delay at a time (drive false: the clock stands still).
func (s *liveStream) rest(t *testing.T, clk *clock.Fake, drive bool) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for drive && clk.BlockUntil(ctx, 1) == nil {
			clk.Advance(time.Second)
		}
	}()
	defer func() { cancel(); <-done }()
	b, _ := io.ReadAll(s.r) // an aborted stream ends in an error: what came is what counts
	return string(b)
}

// TestServeLive runs the tollfree binary, built once for its subtests:
// shutdown on SIGTERM and the config reloaded while serving (issue 17).
func TestServeLive(t *testing.T) {
	checkLeaks(t)
	bin := testenv.BuildTollfree(t)
	t.Run("SIGTERM lets a stream finish", func(t *testing.T) { testStopFinishes(t, bin) })
	t.Run("SIGTERM past the grace", func(t *testing.T) { testStopCuts(t, bin) })
	t.Run("reload on edit", func(t *testing.T) { testReloadEdit(t, bin) })
	t.Run("reload on SIGHUP", func(t *testing.T) { testReloadHUP(t, bin) })
	t.Run("broken edit refused", func(t *testing.T) { testReloadBroken(t, bin) })
	t.Run("reload to no route enabled", func(t *testing.T) { testReloadNoRoute(t, bin) })
}

var shuttingDown = regexp.MustCompile(`shutting down`)

// testStopFinishes: a stream in flight when SIGTERM comes finishes with
// [DONE]; a new connection is refused meanwhile; the call log has the
// request's line; the exit status is 0.
func testStopFinishes(t *testing.T, bin string) {
	ls := startLive(t, bin, "30s", "")
	s := ls.stream(t)
	ls.proc.Signal(syscall.SIGTERM)
	ls.proc.WaitOutput(shuttingDown, 10*time.Second)
	if c, err := net.Dial("tcp", strings.TrimPrefix(ls.url, "http://")); err == nil {
		c.Close()
		t.Errorf("a new connection after SIGTERM was accepted, want refused")
	}
	if got := s.rest(t, ls.clk, true); !strings.Contains(got, "data: [DONE]") || !strings.Contains(got, "five") {
		t.Errorf("the stream in flight at SIGTERM ended without its whole answer and [DONE]:\n%s", got)
	}
	if err := ls.proc.Wait(30 * time.Second); err != nil {
		t.Errorf("tollfree serve after SIGTERM: %v, want exit status 0; output:\n%s", err, ls.proc.Output())
	}
	b, err := os.ReadFile(filepath.Join(ls.data, "calls.jsonl"))
	if err != nil {
		t.Fatalf("the call log: %v", err)
	}
	if !strings.Contains(string(b), `"route":"capd/slow"`) {
		t.Errorf("the call log has no line for the streamed request:\n%s", b)
	}
}

// testStopCuts: a stream still in flight when the grace runs out gets an
// error event (never a [DONE]: the answer is cut), a request not yet
// answered a 503, and the exit status is still 0.
func testStopCuts(t *testing.T, bin string) {
	ls := startLive(t, bin, "1s", "")
	s := ls.stream(t)
	ls.emu.Script("capd", "slow", emulator.Step{Kind: emulator.Hang}) // until the fake clock moves: never
	whole := make(chan string, 1)
	go func() {
		resp, err := http.Post(ls.url+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"slow","messages":[{"role":"user","content":"Tell me."}]}`))
		if err != nil {
			whole <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		whole <- resp.Status + " " + string(b)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ls.clk.BlockUntil(ctx, 2); err != nil { // the stream's next chunk and the hang
		t.Fatalf("the whole answer's call never reached the emulator: %v", err)
	}
	ls.proc.Signal(syscall.SIGTERM)
	got := s.rest(t, ls.clk, false) // the emulator never sends the rest
	if strings.Contains(got, "[DONE]") || !strings.Contains(got, "shut down before this answer finished") {
		t.Errorf("the stream cut at the end of the grace, want an error event and no [DONE]:\n%s", got)
	}
	// Nothing of the whole answer was sent: its 503 must not speak of
	// text received (issue 32: it said "the text received so far is
	// incomplete").
	if got := <-whole; !strings.HasPrefix(got, "503 ") || !strings.Contains(got, `"shutting_down"`) || strings.Contains(got, "received so far") {
		t.Errorf("the whole answer cut at the end of the grace: %s, want a 503 shutting_down that speaks of no text received", got)
	}
	if err := ls.proc.Wait(30 * time.Second); err != nil {
		t.Errorf("tollfree serve past the grace: %v, want exit status 0; output:\n%s", err, ls.proc.Output())
	}
}

const addedChain = `  added: {routes: [capd/m2]}
`

var reloaded = regexp.MustCompile(`config reloaded: 4 chains, \d+ routes enabled`)

// testReloadEdit: an edit of the config file is served without a restart,
// with the rests and counts of before; a stream in flight finishes on the
// config it started with.
func testReloadEdit(t *testing.T, bin string) {
	ls := startLive(t, bin, "30s", "")
	for range 2 {
		if r := ls.ask(t, "capped"); r != "capd/m1" {
			t.Fatalf("capped answered by %s, want capd/m1 under its cap of 2", r)
		}
	}
	ls.emu.Script("capd", "r1", emulator.Step{Kind: emulator.HighDemand}) // rests r1 for 1h
	if r := ls.ask(t, "rested"); r != "capd/m2" {
		t.Fatalf("rested answered by %s, want capd/m2 after capd/r1's 503", r)
	}
	if st := ls.status(t, "added"); st != http.StatusNotFound {
		t.Fatalf("chain added before it is: status %d, want 404", st)
	}
	s := ls.stream(t)
	ls.write(t, addedChain)
	ls.proc.WaitOutput(reloaded, 30*time.Second) // the file is looked at every 2s
	if r := ls.ask(t, "added"); r != "capd/m2" {
		t.Errorf("the chain added by the edit answered by %s, want capd/m2", r)
	}
	if r := ls.ask(t, "capped"); r != "capd/m2" {
		t.Errorf("after the reload, capped answered by %s, want capd/m2 (capd/m1 spent its 2 today)", r)
	}
	if r := ls.ask(t, "rested"); r != "capd/m2" || ls.emu.Calls("capd", "r1") != 1 {
		t.Errorf("after the reload, rested answered by %s and capd/r1 called %d times, want capd/m2 and 1 (r1 rests for 1h)", r, ls.emu.Calls("capd", "r1"))
	}
	if got := s.rest(t, ls.clk, true); !strings.Contains(got, "data: [DONE]") {
		t.Errorf("the stream in flight during the reload did not finish:\n%s", got)
	}
	if err := ls.proc.Stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("tollfree serve after SIGTERM: %v; output:\n%s", err, ls.proc.Output())
	}
}

// testReloadHUP: SIGHUP reloads the config at once.
func testReloadHUP(t *testing.T, bin string) {
	ls := startLive(t, bin, "30s", "")
	ls.write(t, addedChain)
	ls.proc.Signal(syscall.SIGHUP)
	ls.proc.WaitOutput(regexp.MustCompile(`config reloaded: 4 chains.*trigger=SIGHUP`), 30*time.Second)
	if r := ls.ask(t, "added"); r != "capd/m2" {
		t.Errorf("the chain added before SIGHUP answered by %s, want capd/m2", r)
	}
	if err := ls.proc.Stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("tollfree serve after SIGTERM: %v; output:\n%s", err, ls.proc.Output())
	}
}

// testReloadBroken: an edit that does not load is refused, its error
// logged with its line, and the config before keeps serving.
func testReloadBroken(t *testing.T, bin string) {
	ls := startLive(t, bin, "30s", "")
	ls.write(t, "  added: {routes: [capd/m2], margin: lots}\n")
	ls.proc.Signal(syscall.SIGHUP)
	m := ls.proc.WaitOutput(regexp.MustCompile(`config reload refused: (.*)`), 30*time.Second)
	if !strings.Contains(m[1], "tollfree.yaml:18") || !strings.Contains(m[1], "still serving the previous config") {
		t.Errorf("the refusal does not name the line of the error (tollfree.yaml:18): %s", m[0])
	}
	if r := ls.ask(t, "capped"); r != "capd/m1" {
		t.Errorf("after a refused reload, capped answered by %s, want capd/m1", r)
	}
	if st := ls.status(t, "added"); st != http.StatusNotFound {
		t.Errorf("the refused config's chain: status %d, want 404", st)
	}
	if err := ls.proc.Stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("tollfree serve after SIGTERM: %v; output:\n%s", err, ls.proc.Output())
	}
}

// testReloadNoRoute: a reload whose config leaves no route enabled (its
// key variable unset) is served, but logged at ERROR with the fix (the
// variable to set), not at INFO (issue 32: "config reloaded: 3 chains, 0
// routes enabled" was an INFO line like any other).
func testReloadNoRoute(t *testing.T, bin string) {
	ls := startLive(t, bin, "30s", "")
	yaml := strings.NewReplacer("DATA", ls.data, "EMU", ls.emuURL, "GRACE", ls.grace, "EXTRA", "", "${CAPD_API_KEY}", "${CAPD_UNSET_KEY}").Replace(liveConfig)
	if err := os.WriteFile(ls.cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	ls.proc.Signal(syscall.SIGHUP)
	m := ls.proc.WaitOutput(regexp.MustCompile(`level=(\w+) msg="config reloaded: 3 chains, 0 routes enabled[^"]*".*`), 30*time.Second)
	if m[1] != "ERROR" || !strings.Contains(m[0], "CAPD_UNSET_KEY") {
		t.Errorf("a reload to no route enabled logged %q, want an ERROR line naming the variable to set (CAPD_UNSET_KEY)", m[0])
	}
	if err := ls.proc.Stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("tollfree serve after SIGTERM: %v; output:\n%s", err, ls.proc.Output())
	}
}
