package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestServeCapsConnections: `tollfree serve` holds at most
// server.max_connections connections; one over the cap is answered 503 at
// once, GET /healthz still 200; and the server shuts down promptly.
func TestServeCapsConnections(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tollfree.yaml")
	yaml := fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %s
call_log: "off"
server: {max_connections: 1}
providers:
  lab: {dialect: openai, base_url: "http://127.0.0.1:9/v1", models: {m: {}}}
chains:
  answer: {routes: [lab/m]}
`, dir)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"-config", cfg}, outW, io.Discard)
		outW.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no address: %v", err)
	}
	go io.Copy(io.Discard, out)
	addr, _, _ := strings.Cut(strings.TrimPrefix(line, "tollfree listening on http://"), " ")

	held, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	fmt.Fprint(held, "GET /v1/models HTTP/1.1\r\nHost: gateway\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(held), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the connection within the cap: %v %v", resp, err)
	}
	resp.Body.Close()

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	for path, want := range map[string]int{"/v1/models": 503, "/healthz": 200} {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s over the cap: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s over the cap: %d, want %d", path, resp.StatusCode, want)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not shut down within 10s")
	}
}

// TestServeProfiler: `tollfree serve -pprof` serves Go's profiler on the
// address it prints, with the mutex profile sampled (empty otherwise: a
// contended lock would not show).
func TestServeProfiler(t *testing.T) {
	t.Cleanup(func() { runtime.SetMutexProfileFraction(0) })
	noKeys(t)
	t.Chdir(t.TempDir()) // the built-in presets keep their data in ./.tollfree
	s := startServe(t, []string{"-pprof", "127.0.0.1:0", "-listen", "127.0.0.1:0"}, 1)
	if s.profiler == "" {
		t.Fatal("serve -pprof printed no profiler address")
	}
	resp, err := http.Get(s.profiler + "mutex?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "sampling period=100") {
		t.Errorf("GET %smutex?debug=1: %d, %q; want 200 and a sampled mutex profile", s.profiler, resp.StatusCode, body)
	}
}
