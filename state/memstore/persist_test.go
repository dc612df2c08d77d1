package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/state"
)

// fullDisk is a FileWriter that fails with ENOSPC while full is set, as a
// full disk does, and otherwise writes the files for real.
type fullDisk struct{ full atomic.Bool }

func (d *fullDisk) WriteFile(dir, name string, data []byte) error {
	if d.full.Load() {
		return &os.PathError{Op: "write", Path: filepath.Join(dir, name+".tmp"), Err: syscall.ENOSPC}
	}
	return ReplaceFile(dir, name, data)
}

func (d *fullDisk) AppendFile(dir, name string, data []byte) error {
	if d.full.Load() {
		// A full disk takes part of an append.
		_ = Disk{}.AppendFile(dir, name, data[:len(data)/2])
		return &os.PathError{Op: "write", Path: filepath.Join(dir, name), Err: syscall.ENOSPC}
	}
	return Disk{}.AppendFile(dir, name, data)
}

func (d *fullDisk) WriteFileFrom(dir, name string, write func(io.Writer) error) error {
	if d.full.Load() {
		return &os.PathError{Op: "write", Path: filepath.Join(dir, name+".tmp"), Err: syscall.ENOSPC}
	}
	return Disk{}.WriteFileFrom(dir, name, write)
}

// TestRestWrittenOnceTheDiskFrees: a rest and a pause set while the disk is
// full hold in memory, say they are not persisted, and reach rests.json at
// the first flush after the disk frees, as do the counts (issue 10).
func TestRestWrittenOnceTheDiskFrees(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	disk := &fullDisk{}
	var logs bytes.Buffer
	const every = time.Second
	s := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every, Files: disk, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()

	disk.full.Store(true)
	rest := state.Rest{Key: "groq/llama", Until: t0.Add(time.Hour), Class: "rate_day", Since: t0}
	pause := state.Rest{Key: "provider:groq", Class: "paused", Manual: true, Since: t0}
	for _, r := range []state.Rest{rest, pause} {
		if err := s.SetRest(ctx, r); !errors.Is(err, state.ErrNotPersisted) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("SetRest on a full disk = %v, want ErrNotPersisted wrapping ENOSPC", err)
		}
	}
	mustSpend(t, s, rpd(20000, 0, 3))
	checkRests(t, s, clk.Now(), rest, pause)
	if err := s.Health(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Health on a full disk = %v, want ENOSPC", err)
	}
	flushed(t, clk, every) // still full: retried and failing again
	flushed(t, clk, every)
	if n := strings.Count(logs.String(), "writing the state file failed"); n != 2 {
		t.Errorf("logged the failure %d times, want once per file:\n%s", n, logs.String())
	}

	disk.full.Store(false)
	flushed(t, clk, every)
	if err := s.Health(); err != nil {
		t.Errorf("Health after the disk freed = %v, want nil", err)
	}
	if !strings.Contains(logs.String(), "works again") {
		t.Errorf("recovery not logged:\n%s", logs.String())
	}
	// A crash now loses nothing: the files hold the rests and counts.
	s2 := open(t, Options{Dir: dir, Clock: clk})
	checkRests(t, s2, clk.Now(), rest, pause)
	checkSums(t, s2, []int64{3}, rpd(20000, 0, 0))
}

// TestClearRestOnAFullDiskIsRetried: a resume while the disk is full is
// written later too; the pause does not come back after a restart.
func TestClearRestOnAFullDiskIsRetried(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	disk := &fullDisk{}
	const every = time.Second
	s := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every, Files: disk, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	pause := state.Rest{Key: "provider:groq", Class: "paused", Manual: true, Since: t0}
	if err := s.SetRest(ctx, pause); err != nil {
		t.Fatalf("SetRest: %v", err)
	}
	disk.full.Store(true)
	if err := s.ClearRest(ctx, pause.Key, true); !errors.Is(err, state.ErrNotPersisted) {
		t.Fatalf("ClearRest on a full disk = %v, want ErrNotPersisted", err)
	}
	checkRests(t, s, clk.Now())
	disk.full.Store(false)
	flushed(t, clk, every)
	checkRests(t, open(t, Options{Dir: dir, Clock: clk}), clk.Now())
}

// slowDisk holds its first write of rests.json until gate is closed, and
// counts the writes of rests.json.
type slowDisk struct {
	Disk
	entered, gate chan struct{}
	writes        atomic.Int32
}

func (d *slowDisk) WriteFile(dir, name string, data []byte) error {
	if name == restsFile && d.writes.Add(1) == 1 {
		close(d.entered)
		<-d.gate
	}
	return d.Disk.WriteFile(dir, name, data)
}

// TestRestsQueuedBehindAWriteAreWrittenTogether: while one rest is being
// written (a slow disk), the rests that routes failing meanwhile set are
// in effect at once, and reach the disk together in one more write, not
// one write each; every SetRest returns only once its rest is on disk.
func TestRestsQueuedBehindAWriteAreWrittenTogether(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	disk := &slowDisk{entered: make(chan struct{}), gate: make(chan struct{})}
	s := open(t, Options{Dir: dir, Clock: clk, Files: disk, Logger: slog.New(slog.DiscardHandler)})
	var once sync.Once
	release := func() { once.Do(func() { close(disk.gate) }) }
	t.Cleanup(release) // before the store's Close, should the test stop early
	ctx := context.Background()
	const n = 16
	rests := make([]state.Rest, n)
	for i := range rests {
		rests[i] = state.Rest{Key: fmt.Sprintf("p/m%02d", i), Until: t0.Add(time.Hour), Class: "overloaded", Since: t0}
	}
	errs := make(chan error, n)
	go func() { errs <- s.SetRest(ctx, rests[0]) }()
	<-disk.entered // the first write is under way, and held
	for _, r := range rests[1:] {
		go func() { errs <- s.SetRest(ctx, r) }()
	}
	// Each is in effect before any is written: a request sees it.
	testenv.WaitFor(t, "every rest in effect while the first is being written", func() bool {
		got, err := s.Rests(ctx, clk.Now())
		return err == nil && len(got) == n
	})
	release()
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("SetRest: %v", err)
		}
	}
	if got := disk.writes.Load(); got > 2 {
		t.Errorf("rests.json was written %d times for %d rests set during one write, want 2", got, n)
	}
	// Every SetRest has returned: a crash now keeps every rest.
	reopened, err := Open(Options{Dir: dir, Clock: clk})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer reopened.Close()
	checkRests(t, reopened, clk.Now(), rests...)
}
