package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDemoKeeps: the demo prints a fresh admin token with the status page,
// and the path of a call log it keeps, which `tollfree log stats FILE`
// reads after the run.
func TestDemoKeeps(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"demo", "-listen", "127.0.0.1:0", "-speed", "50", "-requests", "3"}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("tollfree demo exited %d; stderr:\n%s\nstdout:\n%s", code, stderr.String(), out)
	}
	if !regexp.MustCompile(`(?m)^status page: http://127\.0\.0\.1:\d+/status\n`).MatchString(out) {
		t.Errorf("no status page URL in:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^admin token: demo-admin-[0-9a-f]{32} `).MatchString(out) {
		t.Errorf("no admin token line in:\n%s", out)
	}
	m := regexp.MustCompile(`(?m)^call log kept: (\S+)  \(try: tollfree log stats (\S+)\)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no call log path at the end of:\n%s", out)
	}
	path := m[1]
	t.Cleanup(func() { os.RemoveAll(strings.TrimSuffix(path, "/calls.jsonl")) })
	if !strings.Contains(out, "call log:    "+path+"  (kept;") {
		t.Errorf("the call log %s is not printed at the start of:\n%s", path, out)
	}
	var stats, statsErr bytes.Buffer
	if code := run([]string{"log", "stats", path}, &stats, &statsErr); code != 0 {
		t.Fatalf("tollfree log stats %s exited %d: %s", path, code, statsErr.String())
	}
	if !strings.Contains(stats.String(), "gemini/gemini-2.5-flash-lite") {
		t.Errorf("log stats of the demo's call log names no route of its first answers:\n%s", stats.String())
	}
}

// TestDemoLinesAsTheyHappen reads the demo's output while it runs: each
// question's line, the hedged one included, arrives before the demo ends.
func TestDemoLinesAsTheyHappen(t *testing.T) {
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var stderr bytes.Buffer
		// The fifth question leaves 30 s of demo time after the fourth.
		done <- run([]string{"demo", "-listen", "127.0.0.1:0", "-speed", "60", "-every", "30s", "-requests", "5"}, pw, &stderr)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	want := []string{"q1 (projects) answered by ", "q2 (contact) answered by ", "q3 (stack) answered by ", "q4 (talks) answered by "}
	var seen []string
	for len(want) > 0 && sc.Scan() {
		line := sc.Text()
		seen = append(seen, line)
		if strings.Contains(line, want[0]) {
			want = want[1:]
		}
		if strings.Contains(line, " questions: ") {
			break
		}
	}
	if len(want) > 0 {
		t.Fatalf("the demo's output lacked %q before it ended:\n%s", want[0], strings.Join(seen, "\n"))
	}
	select {
	case code := <-done:
		t.Errorf("the demo had ended (exit %d) by the time its fourth line was read", code)
	default:
	}
	rest, _ := io.ReadAll(pr)
	removeDemoData(t, string(rest))
	if code := <-done; code != 0 {
		t.Errorf("tollfree demo exited %d", code)
	}
}

// TestDemoSpedUpIsHonest runs the demo at 3000 times the wall clock (a
// day in under 30 s): every delay it prints is one an emulated provider
// waited, so no question falls back, no attempt times out, and an answer
// not hedged takes its model's latency (at most 1 s), however slow the
// machine; were the machine's own time multiplied, a millisecond of it
// would read 3 s.
func TestDemoSpedUpIsHonest(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"demo", "-listen", "127.0.0.1:0", "-speed", "3000", "-every", "5s", "-requests", "40"}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("tollfree demo exited %d; stderr:\n%s\nstdout:\n%s", code, stderr.String(), out)
	}
	if !strings.Contains(out, "\n40 questions: 40 answered by a route, 0 by the fallback, 0 without an answer\n") {
		t.Errorf("want all 40 questions answered by a route; got:\n%s", out)
	}
	removeDemoData(t, out)
	if strings.Contains(out, "timeout after") {
		t.Errorf("an attempt timed out, which no emulated route does in 40 questions:\n%s", out)
	}
	// No latency bound per answer: the paced clock lets time run when the
	// machine holds work back for long (its safety valve), so what a
	// loaded machine adds shows there; what must not show is what the
	// providers did not cause: a fallback, a timeout, a hedge on every
	// question.
	answered := regexp.MustCompile(`(?m)^\S+ (q\d+) \(\S+\) answered by \S+ in (\S+)$`)
	n := len(answered.FindAllStringSubmatch(out, -1))
	if n < 20 {
		t.Errorf("only %d plain answers (not hedged, nothing failed before): want most of the 40:\n%s", n, out)
	}
}

// removeDemoData removes the data folder a demo run kept (its call log's
// folder, printed at the end of out).
func removeDemoData(t *testing.T, out string) {
	if m := regexp.MustCompile(`(?m)^call log kept: (\S+)/calls\.jsonl`).FindStringSubmatch(out); m != nil {
		t.Cleanup(func() { os.RemoveAll(m[1]) })
	}
}
