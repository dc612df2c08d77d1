package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

// listening is the line `tollfree serve` prints once it accepts requests.
var listening = regexp.MustCompile(`tollfree listening on (http://[0-9.:]+)`)

// served is one `tollfree serve` subprocess.
type served struct {
	proc *testenv.Proc
	url  string
}

// serve starts `tollfree serve -config cfg` on a free port, with env added
// to the environment, and waits until it listens.
func serve(t *testing.T, bin, cfg string, env ...string) *served {
	t.Helper()
	p := testenv.Start(t, append([]string{"CAPD_API_KEY=" + capdKey}, env...), bin, "serve", "-config", cfg, "-listen", "127.0.0.1:0")
	m := p.WaitOutput(listening, 30*time.Second)
	return &served{proc: p, url: m[1]}
}

// ask sends one chat request on chain and returns the route that answered;
// it wants a 200.
func (s *served) ask(t *testing.T, chain string) string {
	t.Helper()
	resp, err := http.Post(s.url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"`+chain+`","messages":[{"role":"user","content":"What does tollfree do?"}]}`))
	if err != nil {
		t.Fatalf("ask %s: %v", chain, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ask %s: status %d: %s", chain, resp.StatusCode, b)
	}
	return resp.Header.Get("X-Tollfree-Route")
}

// health returns /healthz as a map.
func (s *served) health(t *testing.T) map[string]string {
	t.Helper()
	resp, err := http.Get(s.url + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	defer resp.Body.Close()
	var h map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("/healthz is not a JSON object of strings: %v", err)
	}
	return h
}

// savedDailyUse reads the capd/m1 requests counted today in the snapshot
// under dir (data_dir/state), through a copy, so that the live files are
// never opened by a second store.
func savedDailyUse(t *testing.T, dir string, plan *config.Plan) int64 {
	t.Helper()
	cp := t.TempDir()
	for _, name := range []string{"counters.json", "rests.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cp, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := memstore.Open(memstore.Options{Dir: cp})
	if err != nil {
		t.Fatalf("reading the snapshot: %v", err)
	}
	defer ms.Close()
	left, err := quota.New(quota.Options{Store: ms}).Left(context.Background(), plan.Routes["capd/m1"])
	if err != nil {
		t.Fatal(err)
	}
	return left.Route.RPD.Used
}

// TestServe runs the tollfree binary, built once for all its subtests.
//
// restart: a rest, a pause and today's counts survive a restart of
// `tollfree serve`, stopped with SIGTERM (nothing lost) or killed with
// SIGKILL (rests and pauses kept: they are written before the request that
// caused them is answered; counts kept up to the last snapshot, taken every
// second). Everything is checked through behaviour: which routes the
// emulator sees called.
//
// redis outage: see testServeRedis (redis_test.go).
func TestServe(t *testing.T) {
	checkLeaks(t)
	bin := testenv.BuildTollfree(t)
	t.Run("restart after SIGTERM", func(t *testing.T) { testRestart(t, bin, syscall.SIGTERM) })
	t.Run("restart after SIGKILL", func(t *testing.T) { testRestart(t, bin, syscall.SIGKILL) })
	t.Run("redis outage", func(t *testing.T) { testServeRedis(t, bin) })
}

func testRestart(t *testing.T, bin string, sig syscall.Signal) {
	const capRPD = 8
	emu, emuURL := newCapd(t, clock.Real{})
	data := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "tollfree.yaml")
	yaml := capdYAML(emuURL, data, capRPD)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	plan, err := config.Parse(cfg, []byte(yaml), capdEnv)
	if err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(data, "state")

	// A pause set by hand before the first start, in the store's own files.
	ms, err := memstore.Open(memstore.Options{Dir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	pause := state.Rest{Key: "capd/p1", Class: "paused", Reason: "by hand", Manual: true, Since: time.Now()}
	if err := ms.SetRest(context.Background(), pause); err != nil {
		t.Fatal(err)
	}
	if err := ms.Close(); err != nil {
		t.Fatal(err)
	}

	first := serve(t, bin, cfg)
	if h := first.health(t); h["state"] != "local" {
		t.Errorf("/healthz state = %q, want local (no redis: in the config)", h["state"])
	}
	emu.Script("capd", "r1", emulator.Step{Kind: emulator.HighDemand}) // rests r1 for rest.overloaded: 1h
	if r := first.ask(t, "rested"); r != "capd/m2" {
		t.Fatalf("rested chain answered by %s, want capd/m2 after capd/r1's 503", r)
	}
	if r := first.ask(t, "paused"); r != "capd/m2" {
		t.Errorf("paused chain answered by %s, want capd/m2", r)
	}
	for range 4 {
		if r := first.ask(t, "capped"); r != "capd/m1" {
			t.Fatalf("capped chain answered by %s, want capd/m1 (under its cap)", r)
		}
	}
	lost := 0 // counts the stop may lose
	switch sig {
	case syscall.SIGTERM:
		if err := first.proc.Stop(sig, 30*time.Second); err != nil {
			t.Fatalf("tollfree serve after SIGTERM: %v, want exit status 0; output:\n%s", err, first.proc.Output())
		}
	case syscall.SIGKILL:
		// The snapshot of the 4 spends lands within a second; 2 more spent
		// just before the kill may be lost.
		start := time.Now()
		for savedDailyUse(t, stateDir, plan) < 4 {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("counters.json holds %d capd/m1 spends after 10s, want 4", savedDailyUse(t, stateDir, plan))
			}
			time.Sleep(20 * time.Millisecond) // waiting for the process's flush, not a clock
		}
		t.Logf("4 spends reached counters.json %s after the last was answered", time.Since(start).Round(time.Millisecond))
		for range 2 {
			first.ask(t, "capped")
		}
		lost = 2
		var ee *exec.ExitError
		if err := first.proc.Stop(sig, 30*time.Second); !errors.As(err, &ee) {
			t.Fatalf("tollfree serve after SIGKILL: %v, want killed", err)
		}
	}
	if n := emu.Calls("capd", "r1"); n != 1 {
		t.Fatalf("capd/r1 called %d times before the restart, want 1", n)
	}

	second := serve(t, bin, cfg)
	if r := second.ask(t, "rested"); r != "capd/m2" {
		t.Errorf("after restart: rested chain answered by %s, want capd/m2 (capd/r1 rests for 1h)", r)
	}
	if n := emu.Calls("capd", "r1"); n != 1 {
		t.Errorf("after restart: resting capd/r1 called %d times, want 1 (its rest was forgotten)", n)
	}
	if r := second.ask(t, "paused"); r != "capd/m2" {
		t.Errorf("after restart: paused chain answered by %s, want capd/m2", r)
	}
	if n := emu.Calls("capd", "p1"); n != 0 {
		t.Errorf("paused capd/p1 called %d times, want 0 (the pause was forgotten)", n)
	}
	// Counts continue: capd/m1 stops at its cap across the restart, give or
	// take what the stop may lose.
	for range capRPD {
		second.ask(t, "capped")
	}
	if n := emu.Calls("capd", "m1"); n < capRPD || n > capRPD+lost {
		t.Errorf("capd/m1 called %d times across the restart, want %d to %d (cap %d; %d spends may be lost)", n, capRPD, capRPD+lost, capRPD, lost)
	}
	if r := second.ask(t, "capped"); r != "capd/m2" {
		t.Errorf("capped chain answered by %s once capd/m1 reached its cap, want capd/m2", r)
	}
	if err := second.proc.Stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("tollfree serve after SIGTERM: %v; output:\n%s", err, second.proc.Output())
	}
}
