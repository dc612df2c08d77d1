package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tollfree/tollfree/calllog"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state/memstore"
)

// fullLog is a call log's file on a disk that is full until free is
// called: the first failing write takes a few bytes, as write(2) does when
// the last blocks run out, and every failing write returns ENOSPC.
type fullLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	full bool
	cut  bool
}

func (d *fullLog) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.full {
		return d.buf.Write(p)
	}
	n := 0
	if !d.cut {
		d.cut, n = true, min(len(p), 9)
		d.buf.Write(p[:n])
	}
	return n, &os.PathError{Op: "write", Path: "calls.jsonl", Err: syscall.ENOSPC}
}

func (d *fullLog) free() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.full = false
}

func (d *fullLog) bytes() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return bytes.Clone(d.buf.Bytes())
}

// fullStateDisk is a memstore.FileWriter on a disk that is full while full
// is set, and writes the files for real otherwise.
type fullStateDisk struct{ full atomic.Bool }

func (d *fullStateDisk) WriteFile(dir, name string, data []byte) error {
	if d.full.Load() {
		return &os.PathError{Op: "write", Path: filepath.Join(dir, name), Err: syscall.ENOSPC}
	}
	return memstore.ReplaceFile(dir, name, data)
}

// readCallLog returns the request ids of the records in b, and how many
// lines were not records.
func readCallLog(t *testing.T, b []byte) (ids []string, bad int) {
	t.Helper()
	r := calllog.NewReader(bytes.NewReader(b))
	var rec calllog.Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading the call log: %v", err)
		}
		ids = append(ids, rec.RequestID)
	}
	bad, _ = r.Bad()
	return ids, bad
}

// healthz returns /healthz's lines.
func (h *harness) healthz() map[string]any {
	h.t.Helper()
	r := h.get("/healthz")
	if r.status != 200 {
		h.t.Fatalf("GET /healthz: %d %s", r.status, r.body)
	}
	return r.json(h.t)
}

// TestCallLogKeepsLoggingAfterDiskFull: a full disk does not stop the call
// log for good (issue 10 item 9). The record of a request answered while
// the disk was full is held and written once it frees, with the next one;
// /healthz says what is failing meanwhile.
func TestCallLogKeepsLoggingAfterDiskFull(t *testing.T) {
	checkLeaks(t)
	disk := &fullLog{full: true}
	h := harnessOf(t, startStackWith(t, stackOptions{config: answerChain, callLog: calllog.NewWriter(disk, calllog.Options{})}))

	first := h.ask("answer")
	if first.status != 200 {
		t.Fatalf("asking with the disk full: %d %s", first.status, first.body)
	}
	if got, _ := h.healthz()["call_log"].(string); !strings.Contains(got, "no space left on device") {
		t.Errorf("/healthz call_log = %q while the disk is full, want it to say so", got)
	}
	disk.free()
	second := h.ask("answer")
	if second.status != 200 {
		t.Fatalf("asking after the disk freed: %d %s", second.status, second.body)
	}
	ids, bad := readCallLog(t, disk.bytes())
	want := []string{first.header.Get("X-Request-Id"), second.header.Get("X-Request-Id")}
	if strings.Join(ids, ",") != strings.Join(want, ",") || bad != 0 {
		t.Errorf("call log holds %v and %d bad lines, want %v and none:\n%s", ids, bad, want, disk.bytes())
	}
	if got, _ := h.healthz()["call_log"].(string); got != "ok" {
		t.Errorf("/healthz call_log = %q after the disk freed, want ok", got)
	}
}

// TestCallLogTornLastLine: a call log whose last line a kill cut short gets
// the next run's first record on a line of its own, so the reader skips
// only the cut line and parses every whole record.
func TestCallLogTornLastLine(t *testing.T) {
	checkLeaks(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "calls.jsonl")
	old := `{"time":"2026-06-15T09:00:00Z","request_id":"req_old","chain":"answer","route":"groq/llama-3.3-70b-versatile","provider":"groq","model":"llama-3.3-70b-versatile","status":200,"outcome":"ok","cached":false,"latency_ms":1,"tokens_in":1,"tokens_out":1}` + "\n"
	if err := os.WriteFile(path, []byte(old+old[:70]), 0o640); err != nil {
		t.Fatal(err)
	}
	h := harnessOf(t, startStackWith(t, stackOptions{config: answerChain, dataDir: dir, callLogPath: path}))
	r := h.ask("answer")
	if r.status != 200 {
		t.Fatalf("ask: %d %s", r.status, r.body)
	}
	id := r.header.Get("X-Request-Id")
	// The call log flushes every second of real time: wait for the record.
	deadline := time.Now().Add(10 * time.Second)
	var b []byte
	for {
		b, _ = os.ReadFile(path)
		if bytes.Contains(b, []byte(id)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	ids, bad := readCallLog(t, b)
	if strings.Join(ids, ",") != "req_old,"+id || bad != 1 {
		t.Errorf("call log holds %v and %d bad lines, want [req_old %s] and the cut line bad:\n%s", ids, bad, id, b)
	}
}

// diskFullStack starts a gateway on answerChain with an admin token, over
// a local store whose disk is full until the test frees it.
func diskFullStack(t *testing.T) (*harness, *fullStateDisk, string) {
	t.Helper()
	clk := clock.NewFake(t0)
	dir := filepath.Join(t.TempDir(), "state")
	disk := &fullStateDisk{}
	disk.full.Store(true)
	st, err := memstore.Open(memstore.Options{Dir: dir, Clock: clk, Files: disk, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := harnessOf(t, startStackWith(t, stackOptions{config: "admin_token: ${TOLLFREE_ADMIN_TOKEN}\n" + answerChain,
		env: map[string]string{"TOLLFREE_ADMIN_TOKEN": adminToken}, clock: clk, store: st}))
	return h, disk, dir
}

// savedRests opens the state folder as a restart would and returns its
// rests by key.
func savedRests(t *testing.T, dir string, now time.Time) map[string]bool {
	t.Helper()
	st, err := memstore.Open(memstore.Options{Dir: dir, Clock: clock.NewFake(now), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("reopening the state: %v", err)
	}
	defer st.Close()
	rs, _ := st.Rests(context.Background(), now)
	keys := make(map[string]bool)
	for _, r := range rs {
		keys[r.Key] = true
	}
	return keys
}

// TestRestWrittenAfterDiskFrees: a rest decided while the disk is full
// holds at once and reaches the disk at the first flush after it frees, so
// that a restart does not forget it (issue 10 item 9).
func TestRestWrittenAfterDiskFrees(t *testing.T) {
	checkLeaks(t)
	h, disk, dir := diskFullStack(t)
	const gone = "groq/llama-3.3-70b-versatile"
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.RateDay})
	if r := h.ask("answer"); r.status != 200 {
		t.Fatalf("ask: %d %s", r.status, r.body)
	}
	if _, ok := h.rest(gone); !ok {
		t.Fatalf("%s is not resting after its daily 429", gone)
	}
	if got, _ := h.healthz()["state_files"].(string); !strings.Contains(got, "no space left on device") {
		t.Errorf("/healthz state_files = %q while the disk is full, want it to say so", got)
	}
	if savedRests(t, dir, h.clk.Now())[gone] {
		t.Fatalf("the rest is on disk although the disk is full")
	}

	disk.full.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	next := t0.Add(time.Second) // the store's flusher wakes every second
	if err := h.clk.BlockUntilDeadline(ctx, next); err != nil {
		t.Fatalf("the store's flusher is not waiting: %v", err)
	}
	h.clk.Advance(time.Second)
	// The flush runs on the store's goroutine: wait for it, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		saved := savedRests(t, dir, h.clk.Now())[gone]
		health, _ := h.healthz()["state_files"].(string)
		if saved && health == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the disk freed: rest on disk %v, /healthz state_files %q; want true, ok", saved, health)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAdminPauseWithFailingPersistence: a pause that took effect while the
// disk is full answers 200 with a warning, not 503, and holds.
func TestAdminPauseWithFailingPersistence(t *testing.T) {
	checkLeaks(t)
	h, _, _ := diskFullStack(t)
	const id = "groq/llama-3.3-70b-versatile"
	for _, action := range []string{"pause", "resume", "pause"} {
		r := h.admin(action, adminToken, `{"route":"`+id+`"}`)
		if r.status != 200 {
			t.Fatalf("%s with the disk full: status %d, want 200: %s", action, r.status, r.body)
		}
		m := r.json(t)
		if w, _ := m["warning"].(string); m["ok"] != true || !strings.Contains(w, "disk") {
			t.Errorf("%s with the disk full: %s, want ok and a warning about the disk", action, r.body)
		}
	}
	if rest, ok := h.rest(id); !ok || !rest.Manual {
		t.Fatalf("%s is not paused after the pause answered 200", id)
	}
	if r := h.ask("answer"); r.status != 200 {
		t.Fatalf("ask: %d %s", r.status, r.body)
	}
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 0 {
		t.Errorf("the paused route was called %d times", n)
	}
}
