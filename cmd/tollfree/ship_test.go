package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
)

// TestVersionOf: the stamped version wins; else the module version with
// the commit and a dirty mark; never empty.
func TestVersionOf(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{
		{"stamped", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.1"}}, "v1.2.3"},
		{"no build info", "", nil, "devel"},
		{"go install from a tag", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"clone, clean", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "false")}, "devel 0123456789ab"},
		{"clone, edited", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "true")}, "devel 0123456789ab-dirty"},
		{"no vcs", "", &debug.BuildInfo{}, "devel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(tt.stamped, tt.bi); got != tt.want {
				t.Errorf("versionOf(%q, ...) = %q, want %q", tt.stamped, got, tt.want)
			}
		})
	}
}

// TestVersionCommand: `tollfree version` exits 0 and prints a version.
func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"version"}, &out, io.Discard); code != 0 {
		t.Fatalf("tollfree version exited %d", code)
	}
	if !strings.HasPrefix(out.String(), "tollfree devel") {
		t.Errorf("tollfree version printed %q, want tollfree devel...", out.String())
	}
}

// TestHealthCommand: `tollfree health URL` exits 0 on a 200 and 1
// otherwise, saying what answered: the container's HEALTHCHECK.
func TestHealthCommand(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		fmt.Fprint(w, `{"ready":false}`)
	}))
	defer srv.Close()
	if code := run([]string{"health", srv.URL + "/readyz"}, io.Discard, io.Discard); code != 0 {
		t.Errorf("health on a 200: exit %d, want 0", code)
	}
	status = http.StatusServiceUnavailable
	var errOut bytes.Buffer
	if code := run([]string{"health", srv.URL + "/readyz"}, io.Discard, &errOut); code != 1 {
		t.Errorf("health on a 503: exit %d, want 1", code)
	}
	if !strings.Contains(errOut.String(), "503") {
		t.Errorf("health on a 503 said %q, want the status", errOut.String())
	}
	srv.Close()
	if code := run([]string{"health", srv.URL + "/readyz"}, io.Discard, io.Discard); code != 1 {
		t.Errorf("health with nothing listening: exit %d, want 1", code)
	}
	if code := run([]string{"health", "a", "b"}, io.Discard, io.Discard); code != 1 {
		t.Errorf("health with two URLs: exit %d, want 1", code)
	}
}

// TestHealthWait: health -wait asks again until the URL answers 200 (a
// gateway started in the background by a script), and gives up, failing,
// when the wait is over.
func TestHealthWait(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	if code := run([]string{"health", "-wait", "30s", srv.URL + "/healthz"}, io.Discard, io.Discard); code != 0 || asked.Load() != 3 {
		t.Errorf("health -wait on a gateway ready at the third ask: exit %d after %d asks, want 0 after 3", code, asked.Load())
	}
	srv.Close()
	if code := run([]string{"health", "-wait", "600ms", srv.URL + "/healthz"}, io.Discard, io.Discard); code != 1 {
		t.Errorf("health -wait with nothing listening: exit %d, want 1", code)
	}
}

// TestEmulatorCommand: `tollfree emulator` serves the free tiers, any key
// accepted, in the real wire format, and stops with its context.
func TestEmulatorCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- emulate(ctx, []string{"-listen", "127.0.0.1:0"}, outW)
		outW.Close()
	}()
	lines := bufio.NewReader(out)
	first, err := lines.ReadString('\n')
	if err != nil {
		t.Fatalf("emulator printed nothing: %v", err)
	}
	go io.Copy(io.Discard, lines)
	base, _, _ := strings.Cut(strings.TrimPrefix(first, "emulated free tiers on "), " ")
	req, _ := http.NewRequest(http.MethodPost, base+"/groq/v1/chat/completions",
		strings.NewReader(`{"model":"llama-3.1-8b-instant","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer any-key-at-all")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"chat.completion"`) {
		t.Errorf("groq on the emulator: %d %s", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("emulator after cancel: %v", err)
	}
}
