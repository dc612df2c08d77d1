package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/secret"
)

// TestDoctorRefused: a local Ollama that is not running (nothing listens
// at its base URL) is "unreachable", with the command that starts it, not
// "overloaded"; and with stderr not a terminal, no progress bar is drawn.
func TestDoctorRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	cfg := writeFile(t, "tollfree.yaml", `
providers:
  ollama: {preset: ollama, base_url: http://`+addr+`/v1}
chains:
  answer: {routes: [ollama/llama3.2]}
`)
	var stdout, stderr bytes.Buffer
	code := run([]string{"doctor", "-config", cfg, "-thinking=false"}, &stdout, &stderr)
	out := stdout.String()
	if code == 0 {
		t.Errorf("doctor exited 0 with its only route unreachable; stdout:\n%s", out)
	}
	want := "ollama/llama3.2: unreachable (connection refused: is it running? `ollama serve`)"
	if !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "overloaded") {
		t.Errorf("a refused connection is called overloaded:\n%s", out)
	}
	if strings.Contains(stderr.String(), "\r") || strings.Contains(stderr.String(), "probing:") {
		t.Errorf("stderr is not a terminal but got the progress bar: %q", stderr.String())
	}
}

// TestProgressOnlyOnATerminal: progress goes to a terminal only; a file,
// a pipe or a buffer (what tests, logs and CI give) gets none.
func TestProgressOnlyOnATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, w := range map[string]any{"file": f, "pipe": w, "buffer": &bytes.Buffer{}, "wrapped file": secret.NewWriter(f, nil)} {
		if isTerminal(w.(interface{ Write([]byte) (int, error) })) {
			t.Errorf("%s: taken for a terminal", name)
		}
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !isTerminal(secret.NewWriter(tty, nil)) {
			t.Errorf("the controlling terminal, wrapped, is not taken for a terminal")
		}
	}
}

// TestSimProgressLines: on a terminal, sim prints a line per policy with
// how long it took.
func TestSimProgressLines(t *testing.T) {
	var b bytes.Buffer
	p := simProgress(&b)
	p("tollfree", 0, 2)
	p("naive", 1, 2)
	p("", 2, 2)
	got := b.String()
	for _, want := range []string{"  [1/2] tollfree ... done in ", "\n  [2/2] naive ... done in "} {
		if !strings.Contains(got, want) {
			t.Errorf("got %q, want it to contain %q", got, want)
		}
	}
	if strings.Count(got, "\n") != 2 {
		t.Errorf("got %q, want two whole lines", got)
	}
}

// TestSimQuietOffTerminal: `tollfree sim` with stderr not a terminal
// prints no per-policy progress.
func TestSimQuietOffTerminal(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"sim", "-requests", "2", "-incidents=false"}, &stdout, &stderr); code != 0 {
		t.Fatalf("sim exited %d: %s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "[1/4]") {
		t.Errorf("stderr is not a terminal but got progress: %q", stderr.String())
	}
	if !strings.Contains(stdout.String(), "2 questions from ") {
		t.Errorf("no result table:\n%s", stdout.String())
	}
}
