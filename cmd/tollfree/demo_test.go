package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

// TestDemo runs `tollfree demo` for a bounded number of questions, sped up,
// and reads what it printed: the gateway's addresses, a line for each
// question, the hedge over Flash-Lite's hang, and the summary; and never any
// prompt or answer text. Sped-up time stretches with the machine's load, so
// it asserts what does not depend on timing; package demo's tests cover the
// lines themselves and the scenario.
func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"demo", "-listen", "127.0.0.1:0", "-speed", "10", "-every", "2s", "-requests", "12"}, &stdout, &stderr)
	out := stdout.String()
	removeDemoData(t, out)
	if code != 0 {
		t.Fatalf("tollfree demo exited %d; stderr:\n%s\nstdout:\n%s", code, stderr.String(), out)
	}
	lines := strings.Split(out, "\n")
	line := func(prefix string) string {
		for _, l := range lines {
			if i := strings.Index(l, " "); i > 0 && strings.HasPrefix(l[i+1:], prefix) {
				return l
			}
		}
		t.Errorf("no line starts with %q after its time; output:\n%s", prefix, out)
		return ""
	}
	for _, tc := range []struct {
		name string
		got  string
		want []string
	}{
		{"status page", out, []string{"status page: http://127.0.0.1:", "/status\n", "gateway:     http://127.0.0.1:"}},
		{"first question", line("q1 (projects) "), []string{"answered by gemini/gemini-2.5-flash-lite in "}},
		// Flash-Lite's fourth call hangs; Groq races it after 3 s.
		{"hedge over a hang", line("q4 (talks) "), []string{"answered by groq/llama-3.3-70b-versatile in ", ", hedged"}},
		// The raced route is named on the line, or on a line of its own
		// when its record comes after the answer.
		{"raced route", out, []string{"q4 (talks) ", "raced", "gemini/gemini-2.5-flash-lite: silent for 3"}},
		{"last question", line("q12 (talks) "), []string{"answered by "}},
		{"summary", out, []string{"\n12 questions: ", " 0 without an answer\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, w := range tc.want {
				if !strings.Contains(tc.got, w) {
					t.Errorf("got %q, want it to contain %q", tc.got, w)
				}
			}
		})
	}
	t.Run("no prompt or answer text", func(t *testing.T) {
		for _, secret := range []string{"Mission Control answers only", "What projects has", "Hello from the tollfree emulator", "demo-groq-key"} {
			if strings.Contains(out, secret) {
				t.Errorf("the output contains %q", secret)
			}
		}
	})
}

// TestDemoListenTaken: a taken -listen address falls back to a free port.
func TestDemoListenTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stdout, stderr bytes.Buffer
	code := run([]string{"demo", "-listen", ln.Addr().String(), "-speed", "50", "-requests", "1"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("tollfree demo exited %d; stderr:\n%s", code, stderr.String())
	}
	out := stdout.String()
	removeDemoData(t, out)
	if !strings.Contains(out, "status page: http://127.0.0.1:") || strings.Contains(out, "status page: http://"+ln.Addr().String()) {
		t.Errorf("got %q, want the status page on another loopback port than the taken %s", out, ln.Addr())
	}
	if !strings.Contains(out, "1 questions: 1 answered by a route") {
		t.Errorf("got %q, want one question answered", out)
	}
}

// TestDemoFlags: bad flags are a usage error (exit 2), not a run.
func TestDemoFlags(t *testing.T) {
	for _, args := range [][]string{
		{"demo", "-speed", "0"},
		{"demo", "-every", "-1s"},
		{"demo", "-requests", "-3"},
		{"demo", "-nope"},
	} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(args, &stdout, &stderr); got != 2 {
				t.Errorf("run(%q) = %d, want 2; stdout %q", args, got, stdout.String())
			}
		})
	}
}

// TestDemoDuration: -duration ends a run by itself, questions in flight
// included, and still prints the summary.
func TestDemoDuration(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"demo", "-listen", "127.0.0.1:0", "-speed", "10", "-duration", "500ms"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("tollfree demo exited %d; stderr:\n%s", code, stderr.String())
	}
	out := stdout.String()
	removeDemoData(t, out)
	for _, want := range []string{"q1 (projects) ", " questions: ", "status page was at http://127.0.0.1:"} {
		if !strings.Contains(out, want) {
			t.Errorf("got %q, want it to contain %q", out, want)
		}
	}
}
