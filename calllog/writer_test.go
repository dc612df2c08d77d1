package calllog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fullDisk is an io.Writer that behaves as a file on a full disk while
// failures is above 0: the first failing write takes a few bytes, as
// write(2) does when the last blocks run out, and every failing write
// returns ENOSPC.
type fullDisk struct {
	bytes.Buffer
	failures int
	cut      bool // a failing write already took its few bytes
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if d.failures > 0 {
		d.failures--
		n := 0
		if !d.cut {
			d.cut, n = true, min(len(p), 7)
			d.Buffer.Write(p[:n])
		}
		return n, &os.PathError{Op: "write", Path: "calls.jsonl", Err: syscall.ENOSPC}
	}
	return d.Buffer.Write(p)
}

func rec(id string) *Record {
	return &Record{Time: time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC), RequestID: id, Route: "groq/a", Outcome: "ok"}
}

// readAll returns the request ids of every record in b and the bad lines.
func readAll(t *testing.T, b []byte) (ids []string, bad int) {
	t.Helper()
	r := NewReader(bytes.NewReader(b))
	var rc Record
	for {
		err := r.Next(&rc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		ids = append(ids, rc.RequestID)
	}
	bad, _ = r.Bad()
	return ids, bad
}

// TestWriterRecoversFromAFullDisk: records written while the disk is full
// are held and written whole once it frees; writing never stops for good,
// and the log hears of it once each way (issue 10).
func TestWriterRecoversFromAFullDisk(t *testing.T) {
	disk := &fullDisk{failures: 3}
	var logs bytes.Buffer
	w := NewWriter(disk, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, id := range []string{"r1", "r2", "r3"} {
		w.Write(rec(id))
	}
	if h := w.Health(); !errors.Is(h.Err, syscall.ENOSPC) || h.Pending == 0 {
		t.Fatalf("Health while failing = %+v, want ENOSPC and records pending", h)
	}
	w.Write(rec("r4")) // the disk has room again
	if h := w.Health(); h.Err != nil || h.Dropped != 0 || h.Pending != 0 {
		t.Errorf("Health after recovery = %+v, want no error, nothing dropped or pending", h)
	}
	ids, bad := readAll(t, disk.Bytes())
	if strings.Join(ids, ",") != "r1,r2,r3,r4" || bad != 0 {
		t.Errorf("log holds %v with %d bad lines, want r1..r4 and none bad:\n%s", ids, bad, disk.Bytes())
	}
	if n := strings.Count(logs.String(), "write failed"); n != 1 {
		t.Errorf("failure logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "writing again") {
		t.Errorf("recovery not logged:\n%s", logs.String())
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestWriterDropsAndCountsPastMaxPending: a disk full for long holds at
// most MaxPending bytes; later records are dropped and counted, and the
// log says so once.
func TestWriterDropsAndCountsPastMaxPending(t *testing.T) {
	disk := &fullDisk{failures: 1 << 30}
	var logs bytes.Buffer
	w := NewWriter(disk, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	line := len(rec("r0000").appendJSON(nil))
	total := MaxPending/line + 50
	for i := range total {
		w.Write(rec(fmt.Sprintf("r%04d", i)))
	}
	h := w.Health()
	if h.Dropped < 40 || h.Pending > MaxPending {
		t.Errorf("Health = %+v, want about 50 dropped and at most %d pending", h, MaxPending)
	}
	if n := strings.Count(logs.String(), "dropped"); n != 1 {
		t.Errorf("drops logged %d times, want once:\n%s", n, logs.String())
	}
	disk.failures = 0
	w.Write(rec("last"))
	ids, bad := readAll(t, disk.Bytes())
	if want := total - int(h.Dropped) + 1; len(ids) != want || ids[len(ids)-1] != "last" {
		t.Errorf("log holds %d records ending %q, want %d ending \"last\"", len(ids), ids[len(ids)-1], want)
	}
	if bad != 0 {
		t.Errorf("%d bad lines, want none: partial writes must be completed", bad)
	}
	if got := w.Health().Dropped; got != h.Dropped {
		t.Errorf("Dropped = %d after recovery, want it kept at %d", got, h.Dropped)
	}
}

// TestOpenEndsATornLine: a log whose last line was cut by a kill gets a
// newline before the next record, so that record parses and only the cut
// line is bad.
func TestOpenEndsATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	whole := string(rec("r1").appendJSON(nil))
	if err := os.WriteFile(path, []byte(whole+whole[:30]), 0o640); err != nil {
		t.Fatal(err)
	}
	w, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	w.Write(rec("r2"))
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ids, bad := readAll(t, b)
	if strings.Join(ids, ",") != "r1,r2" || bad != 1 {
		t.Errorf("log holds %v with %d bad lines, want r1,r2 and the cut line bad:\n%s", ids, bad, b)
	}
	// A log that ends whole is left alone.
	w, err = Open(path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	w.Write(rec("r3"))
	w.Close()
	b2, _ := os.ReadFile(path)
	if string(b2) != string(b)+string(rec("r3").appendJSON(nil)) {
		t.Errorf("reopening a whole log changed it:\n%s", b2)
	}
}

// TestWriterKeepsRetryAndContinuation: a polite retry and a stream's
// continuation are written on their line and read back (issue 13), so that
// `tollfree log stats` can count them.
func TestWriterKeepsRetryAndContinuation(t *testing.T) {
	var b bytes.Buffer
	w := New(&b)
	r := rec("r1")
	r.Stream, r.Part, r.Retry, r.Continuation = true, 1, true, "instruct"
	w.Write(r)
	w.Write(rec("r2"))
	line, _, _ := strings.Cut(b.String(), "\n")
	if want := `"stream":true,"part":1,"retry":true,"continuation":"instruct"}`; !strings.HasSuffix(line, want) {
		t.Errorf("line %s\nwant it to end %s", line, want)
	}
	if strings.Contains(strings.Split(b.String(), "\n")[1], "retry") {
		t.Errorf("a first try says retry: %s", b.String())
	}
	rd := NewReader(&b)
	var got Record
	if err := rd.Next(&got); err != nil {
		t.Fatal(err)
	}
	if !got.Retry || got.Continuation != "instruct" {
		t.Errorf("read back retry %v, continuation %q; want true, instruct", got.Retry, got.Continuation)
	}
}
