package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildTollfree builds cmd/tollfree into a folder of tb's and returns the
// binary's path. It builds with -race when the test runs with it, so the
// build reuses the packages the test compiled. Build it once per test and
// share the path between subtests: a build takes seconds.
func BuildTollfree(tb testing.TB) string {
	tb.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(tb.TempDir(), "tollfree")
	args := []string{"build", "-o", out}
	if Race {
		args = append(args, "-race")
	}
	args = append(args, "github.com/tollfree/tollfree/cmd/tollfree")
	cmd := exec.Command(goBin, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("testenv: go build ./cmd/tollfree: %v\n%s", err, b)
	}
	return out
}

// Proc is a subprocess whose standard output and error are kept for the
// test to read. It is killed when the test ends if still running.
type Proc struct {
	tb   testing.TB
	cmd  *exec.Cmd
	out  *buffer
	done chan struct{} // closed when cmd has exited
	err  error         // cmd.Wait's, valid once done is closed
}

// buffer is a bytes.Buffer safe for the process's writers and the test.
type buffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Start runs bin with args and env added to the test's environment.
func Start(tb testing.TB, env []string, bin string, args ...string) *Proc {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	p := &Proc{tb: tb, cmd: cmd, out: &buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("testenv: starting %s: %v", filepath.Base(bin), err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	tb.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Output returns what the process wrote so far, stdout and stderr together.
func (p *Proc) Output() string { return p.out.String() }

// WaitOutput waits, up to timeout, for the output to match re and returns
// the first match's submatches. It fails the test if the process exits or
// the time runs out first.
func (p *Proc) WaitOutput(re *regexp.Regexp, timeout time.Duration) []string {
	p.tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if m := re.FindStringSubmatch(p.Output()); m != nil {
			return m
		}
		select {
		case <-p.done:
			p.tb.Fatalf("process exited (%v) before printing %q; output:\n%s", p.err, re, p.Output())
		default:
		}
		if time.Now().After(deadline) {
			p.tb.Fatalf("no %q within %s; output:\n%s", re, timeout, p.Output())
		}
		time.Sleep(5 * time.Millisecond) // waiting for a process, not a clock
	}
}

// Stop sends sig and waits, up to timeout, for the process to exit. It
// returns the exit error (nil for status 0; a signal death is an error).
func (p *Proc) Stop(sig syscall.Signal, timeout time.Duration) error {
	p.tb.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.tb.Fatalf("testenv: signal %v: %v", sig, err)
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		p.tb.Fatalf("process still running %s after %v; killed it; output:\n%s", timeout, sig, p.Output())
		return nil
	}
}

// Signal sends sig without waiting for the process to exit.
func (p *Proc) Signal(sig syscall.Signal) {
	p.tb.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.tb.Fatalf("testenv: signal %v: %v", sig, err)
	}
}

// Wait waits, up to timeout, for the process to exit, and returns its exit
// error (nil for status 0). It kills the process and fails the test when
// the time runs out.
func (p *Proc) Wait(timeout time.Duration) error {
	p.tb.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		p.tb.Fatalf("process still running after %v; killed it; output:\n%s", timeout, p.Output())
		return nil
	}
}
