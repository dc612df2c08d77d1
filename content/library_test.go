package content

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/search"
)

var t0 = time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)

// syncBuffer is a log sink safe for the poller and the test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type fixture struct {
	t   *testing.T
	dir string
	clk *clock.Fake
	log *syncBuffer
	lib *Library
}

func open(t *testing.T, dir string) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: dir, clk: clock.NewFake(t0), log: &syncBuffer{}}
	f.lib = Open(dir, Options{Clock: f.clk, Logger: slog.New(slog.NewTextHandler(f.log, nil))})
	t.Cleanup(f.lib.Close)
	return f
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// poll moves the clock one interval once the poller waits for it, then
// waits until the poller has checked the folder and waits again.
func (f *fixture) poll() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.clk.BlockUntilDeadline(ctx, f.clk.Now().Add(DefaultPoll)); err != nil {
		f.t.Fatalf("the poller is not waiting for its next check: %v", err)
	}
	f.clk.Advance(DefaultPoll)
	if err := f.clk.BlockUntilDeadline(ctx, f.clk.Now().Add(DefaultPoll)); err != nil {
		f.t.Fatalf("the poller did not finish its check: %v", err)
	}
}

// TestEditChangesVersion: an edit on disk is served after the next poll,
// and the change is announced; a poll that finds nothing new changes
// nothing.
func TestEditChangesVersion(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "guide.md", "# Guide\n\nExport your data as CSV.")
	f := open(t, dir)
	v1 := f.lib.Version()
	if v1 == "" || f.lib.Current() == nil || !f.lib.Status().Available() {
		t.Fatalf("after Open: version %q, status %+v; want the content served", v1, f.lib.Status())
	}
	changed := f.lib.Changed()
	f.poll()
	select {
	case <-changed:
		t.Fatalf("a poll with no edit announced a change: %+v", f.lib.Status())
	default:
	}
	before := f.lib.Current()
	write(t, dir, "guide.md", "# Guide\n\nExport your data as JSON, not CSV.")
	f.poll()
	select {
	case <-changed:
	default:
		t.Fatal("an edit was not announced after the next poll")
	}
	if v2 := f.lib.Version(); v2 == v1 || v2 == "" {
		t.Errorf("after an edit: version %q, want a new one (was %q)", v2, v1)
	}
	if before.Version() != v1 {
		t.Errorf("the index held before the reload changed under its reader: %q", before.Version())
	}
	if hits := f.lib.Search("json", 1); len(hits) != 1 {
		t.Errorf("Search(json) after the edit = %v, want the edited page", hits)
	}
	if !strings.Contains(f.log.String(), "content: loaded") {
		t.Errorf("log = %q, want the new version logged", f.log.String())
	}
}

// TestBrokenFileSkippedAndReported: a broken page is skipped, reported
// once (not at every poll), and the rest is served.
func TestBrokenFileSkippedAndReported(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "good.md", "# Good\n\nA page about exports.")
	write(t, dir, "latin1.txt", "caf\xe9")
	f := open(t, dir)
	st := f.lib.Status()
	if !st.Available() || st.Pages != 1 || len(st.Skipped) != 1 || st.Skipped[0].Path != "latin1.txt" {
		t.Fatalf("status = %+v, want good.md served and latin1.txt skipped", st)
	}
	if len(f.lib.Search("exports", 1)) == 0 {
		t.Error("Search(exports) found nothing, want the good page")
	}
	write(t, dir, "other.md", "# Other\n\nMore.")
	f.poll()
	if n := strings.Count(f.log.String(), "latin1.txt is not valid UTF-8"); n != 1 {
		t.Errorf("the skipped file was logged %d times across a reload, want once:\n%s", n, f.log.String())
	}
	if !strings.Contains(f.log.String(), "save it as UTF-8") {
		t.Errorf("log = %q, want the fix", f.log.String())
	}
	// Fixed, it is served.
	write(t, dir, "latin1.txt", "café")
	f.poll()
	if st := f.lib.Status(); st.Pages != 3 || len(st.Skipped) != 0 {
		t.Errorf("after the fix: status %+v, want 3 pages, none skipped", st)
	}
}

// TestMissingFolderThenCreated: a missing folder is unavailable, not
// fatal; it is warned about once; it is served once it appears.
func TestMissingFolderThenCreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "content")
	f := open(t, dir)
	st := f.lib.Status()
	if st.Available() || f.lib.Current() != nil || f.lib.Version() != "" || !errors.Is(st.Err, os.ErrNotExist) {
		t.Fatalf("missing folder: status %+v, want unavailable with a not-exist error", st)
	}
	if len(f.lib.Search("anything", 1)) != 0 {
		t.Error("Search on a missing folder found something")
	}
	f.poll()
	f.poll()
	logged := f.log.String()
	if n := strings.Count(logged, "content: unavailable"); n != 1 {
		t.Errorf("the missing folder was warned about %d times, want once:\n%s", n, logged)
	}
	if !strings.Contains(logged, dir) || !strings.Contains(logged, "create the folder") {
		t.Errorf("warning = %q, want the path and the fix", logged)
	}
	write(t, dir, "index.md", "# Home\n\nWelcome.")
	f.poll()
	if st := f.lib.Status(); !st.Available() || st.Err != nil || st.Pages != 1 {
		t.Errorf("after the folder appeared: status %+v, want it served", st)
	}
}

// TestFailedReloadKeepsIndex: when the content breaks (every page gone or
// unreadable), the previous index is still served and the failure shows.
func TestFailedReloadKeepsIndex(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "guide.md", "# Guide\n\nExport your data.")
	f := open(t, dir)
	v1 := f.lib.Version()
	write(t, dir, "guide.md", "caf\xe9") // the only page, now broken
	f.poll()
	st := f.lib.Status()
	if f.lib.Version() != v1 || st.Version != v1 || !errors.Is(st.Err, search.ErrNoContent) {
		t.Errorf("after a failed reload: version %q status %+v, want %q kept and the failure shown", f.lib.Version(), st, v1)
	}
	if len(f.lib.Search("export", 1)) == 0 {
		t.Error("the previous index no longer answers")
	}
	if !strings.Contains(f.log.String(), "previous version is still served") {
		t.Errorf("log = %q, want the failed reload warned", f.log.String())
	}
	// Removing the folder is a failure too: the index stays.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	f.poll()
	if f.lib.Version() != v1 || f.lib.Status().Err == nil {
		t.Errorf("after the folder went: version %q status %+v, want %q kept", f.lib.Version(), f.lib.Status(), v1)
	}
}

// TestOnChange: the callback hears each change, with the new status.
func TestOnChange(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.md", "# A\n\nalpha")
	clk := clock.NewFake(t0)
	var mu sync.Mutex
	var got []string
	lib := Open(dir, Options{Clock: clk, OnChange: func(s Status) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, s.Version)
	}})
	defer lib.Close()
	f := &fixture{t: t, dir: dir, clk: clk, lib: lib}
	write(t, dir, "b.md", "# B\n\nbeta")
	f.poll()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[1] != lib.Version() || got[0] == got[1] {
		t.Errorf("OnChange heard %v, want the first load and the new version %s", got, lib.Version())
	}
}

// TestCloseStopsPolling: Close returns once the poller is gone, and twice
// is fine; the index stays readable.
func TestCloseStopsPolling(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.md", "# A\n\nalpha")
	clk := clock.NewFake(t0)
	lib := Open(dir, Options{Clock: clk})
	lib.Close()
	lib.Close()
	if n := clk.Waiters(); n != 0 {
		t.Errorf("%d timers pending after Close, want none", n)
	}
	if lib.Version() == "" {
		t.Error("the index is gone after Close")
	}
}
