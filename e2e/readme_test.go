package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A README's commands are tests (issue 34): a shell block whose fence is
// preceded by a marker comment is run as written, from the checkout's
// root, in bash with -e and pipefail, and what the comment says the reader
// sees must be in its output:
//
//	<!-- readme-test expect="answered by" expect='"mode":"model"' timeout=4m -->
//	```sh
//	go run ./cmd/tollfree demo -requests 3
//	```
//
// A command the block sends to the background (a gateway, the emulator)
// runs in the block's own process group, stopped when the block ends. The
// provider keys of the machine are not passed: the README must say what to
// set (for the emulator, any value).

// readmeBlock is one marked block of a README.
type readmeBlock struct {
	file    string // relative to the checkout
	line    int    // of the fence
	script  string
	expect  []string
	timeout time.Duration
}

var (
	readmeMarker = regexp.MustCompile(`^<!--\s*readme-test\b(.*?)-->\s*$`)
	readmeAttr   = regexp.MustCompile(`(\w+)="([^"]*)"|(\w+)='([^']*)'|(\w+)=(\S+)`)
)

// readmeBlocks returns the marked blocks of the README at path (from the
// checkout's root).
func readmeBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile(repoPath(path))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []readmeBlock
	for i := 0; i < len(lines); i++ {
		m := readmeMarker.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		blk := readmeBlock{file: path, timeout: 3 * time.Minute}
		for _, a := range readmeAttr.FindAllStringSubmatch(m[1], -1) {
			k, v := a[1], a[2]
			switch {
			case a[3] != "":
				k, v = a[3], a[4]
			case a[5] != "":
				k, v = a[5], a[6]
			}
			switch k {
			case "expect":
				blk.expect = append(blk.expect, v)
			case "timeout":
				d, err := time.ParseDuration(v)
				if err != nil {
					t.Fatalf("%s:%d: timeout=%s: %v", path, i+1, v, err)
				}
				blk.timeout = d
			default:
				t.Fatalf("%s:%d: unknown readme-test attribute %q", path, i+1, k)
			}
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j >= len(lines) || !strings.HasPrefix(lines[j], "```sh") {
			t.Fatalf("%s:%d: a readme-test marker must come right before a ```sh block", path, i+1)
		}
		blk.line = j + 1
		var script []string
		for j++; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
			script = append(script, lines[j])
		}
		blk.script = strings.Join(script, "\n")
		out = append(out, blk)
		i = j
	}
	return out
}

// readmeEnv is this process's environment without any provider key or
// base URL, nor CI's GOFLAGS: a README's block sets what it needs.
func readmeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") || strings.HasSuffix(k, "_TOKEN") ||
			strings.HasSuffix(k, "_MODEL") || k == "HF_TOKEN" || k == "GITHUB_TOKEN" || k == "REDIS_URL" || k == "GOFLAGS" ||
			strings.HasPrefix(k, "TOLLFREE_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runReadmeBlock runs blk as written and returns what it printed.
func runReadmeBlock(t *testing.T, blk readmeBlock) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), blk.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", blk.script)
	cmd.Dir = repoRoot(t)
	cmd.Env = readmeEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Stop the block's whole group: what it left in the background too.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A file, not a pipe: what the block left in the background holds it
	// open, and Wait must not wait for them to end.
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		// The group's last members get a moment to stop (a gateway
		// flushing its state), then are killed.
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(-cmd.Process.Pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond) // real processes, not a clock
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	b, _ := os.ReadFile(f.Name())
	out := string(b)
	if err != nil {
		t.Fatalf("%s:%d: the block failed: %v\n--- block\n%s\n--- output\n%s", blk.file, blk.line, err, blk.script, lastLines(out, 60))
	}
	return out
}

// TestREADMECommands runs every marked block of the README and of each
// example's README as a reader would, offline against the emulator.
func TestREADMECommands(t *testing.T) {
	checkLeaks(t)
	files := []string{"README.md"}
	more, err := filepath.Glob(repoPath("examples", "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range more {
		files = append(files, strings.TrimPrefix(filepath.ToSlash(f), "../"))
	}
	n := 0
	for _, f := range files {
		for _, blk := range readmeBlocks(t, f) {
			n++
			t.Run(fmt.Sprintf("%s:%d", blk.file, blk.line), func(t *testing.T) {
				out := runReadmeBlock(t, blk)
				for _, want := range blk.expect {
					if !strings.Contains(out, want) {
						t.Errorf("%s:%d: the output lacks %q, which the README says the reader sees:\n%s", blk.file, blk.line, want, lastLines(out, 60))
					}
				}
			})
		}
	}
	if n < 6 {
		t.Errorf("found %d marked blocks in %v: each example's README and the main one mark theirs", n, files)
	}
	// Every example README shows a run that needs no key.
	for _, f := range files[1:] {
		if len(readmeBlocks(t, f)) == 0 {
			t.Errorf("%s has no block marked readme-test: say how to run it without keys (against tollfree emulator)", f)
		}
	}
}
