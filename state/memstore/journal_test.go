package memstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
)

// callerDay is a spend on a visitor's rolling day, as quota makes it.
func callerDay(i int, slot, amount int64) state.Spend {
	return state.Spend{Key: fmt.Sprintf("caller:%032x|day", i), Slot: slot, Slots: 24, Limit: 0, Amount: amount, TTL: 25 * time.Hour}
}

// lines returns counters.json's lines, checking each is whole JSON.
func lines(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, countersFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("counters.json line %d is not JSON: %q", len(out)+1, sc.Text())
		}
		out = append(out, sc.Text())
	}
	return out
}

func fileSize(t *testing.T, dir string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, countersFile))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestFlushAppendsWhatChanged: with a thousand visitors counted, a flush
// after one more request appends that request's counter alone, and a
// restart, even one after a crash, reads the snapshot and the journal.
func TestFlushAppendsWhatChanged(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	const every = time.Second
	s := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every})
	var spends []state.Spend
	for i := range 1000 {
		spends = append(spends, callerDay(i, 100, 1))
	}
	mustSpend(t, s, spends...)
	flushed(t, clk, every)
	before := fileSize(t, dir)
	if got := len(lines(t, dir)); got != 1001 {
		t.Fatalf("counters.json after the first flush has %d lines, want a header and 1000 counters", got)
	}

	mustSpend(t, s, callerDay(7, 100, 2))
	flushed(t, clk, every)
	got := lines(t, dir)
	if len(got) != 1002 || fileSize(t, dir)-before > 100 {
		t.Fatalf("a flush after one request grew counters.json by %d lines (%d bytes), want 1 line: %q",
			len(got)-1001, fileSize(t, dir)-before, got[1001:])
	}
	flushed(t, clk, every) // nothing changed: nothing written
	if n := len(lines(t, dir)); n != 1002 {
		t.Errorf("a flush with nothing changed wrote %d lines", n-1002)
	}

	// A crash: open the folder again without closing s.
	s2 := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every})
	checkSums(t, s2, []int64{3, 1, 0}, callerDay(7, 100, 0), callerDay(999, 100, 0), callerDay(1000, 100, 0))
}

// TestTornLastLine: a crash in the middle of an append leaves a torn last
// line; the store loads every line before it, and its first flush writes
// the file whole again, so later appends do not follow the torn part.
func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	s, err := Open(Options{Dir: dir, Clock: clk, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	mustSpend(t, s, callerDay(1, 100, 2), rpm(100, 0, 3))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	full := lines(t, dir)
	f, err := os.OpenFile(filepath.Join(dir, countersFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	torn := full[len(full)-1]
	if _, err := f.WriteString(torn[:len(torn)/2]); err != nil {
		t.Fatal(err)
	}
	f.Close()

	const every = time.Second
	s2 := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every, Logger: discard})
	checkSums(t, s2, []int64{2, 3}, callerDay(1, 100, 0), rpm(100, 0, 0))
	mustSpend(t, s2, callerDay(1, 100, 1))
	flushed(t, clk, every)
	lines(t, dir) // every line whole again
	s3 := open(t, Options{Dir: dir, Clock: clk})
	checkSums(t, s3, []int64{3, 3}, callerDay(1, 100, 0), rpm(100, 0, 0))
}

// TestLoadsVersion1: counters.json as the previous version wrote it (one
// object rewritten whole) loads, and the first flush turns it into a
// journal.
func TestLoadsVersion1(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	exp := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	v1 := `{"version":1,"saved":"` + exp(0) + `","counters":{` +
		`"groq/llama|rpm":[{"slot":99,"n":2,"expires":"` + exp(time.Minute) + `"},{"slot":100,"n":3,"expires":"` + exp(2*time.Minute) + `"}],` +
		`"groq/llama|rpd":[{"slot":20000,"n":40,"expires":"` + exp(48*time.Hour) + `"}],` +
		`"gone|rpm":[{"slot":90,"n":5,"expires":"` + exp(-time.Second) + `"}]}}`
	if err := os.WriteFile(filepath.Join(dir, countersFile), []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	const every = time.Second
	s := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every})
	want := []int64{5, 40, 0}
	checkSums(t, s, want, rpm(100, 0, 0), rpd(20000, 0, 0), state.Spend{Key: "gone|rpm", Slot: 90, Slots: 6, TTL: time.Minute})
	flushed(t, clk, every)
	got := lines(t, dir)
	if !strings.Contains(got[0], `"version":2`) || len(got) != 3 {
		t.Fatalf("counters.json after the first flush = %q, want a version-2 header and 2 counters", got)
	}
	checkSums(t, open(t, Options{Dir: dir, Clock: clk}), want, rpm(100, 0, 0), rpd(20000, 0, 0), state.Spend{Key: "gone|rpm", Slot: 90, Slots: 6, TTL: time.Minute})
}

// TestExpiredCountersLeaveMemoryAndDisk: visitors' counters whose window
// passed are gone from memory within a sweep, and from the file at its
// next rewrite.
func TestExpiredCountersLeaveMemoryAndDisk(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	const every = time.Second
	s := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every})
	for i := range 500 {
		sp := callerDay(i, 100, 1)
		sp.TTL = time.Minute
		mustSpend(t, s, sp)
	}
	mustSpend(t, s, rpd(20000, 0, 1))
	flushed(t, clk, every)
	flushed(t, clk, time.Minute)
	for range nShards / sweepShards {
		flushed(t, clk, every)
	}
	for i := range 500 {
		if held(s, callerDay(i, 0, 0).Key) {
			t.Fatalf("visitor %d's counter still in memory after its TTL and a sweep", i)
		}
	}
	if !held(s, rpd(0, 0, 0).Key) {
		t.Fatal("the day's counter left memory before its TTL")
	}
	s.countsFileMu.Lock()
	err := s.rewriteCounts()
	s.countsFileMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if got := lines(t, dir); len(got) != 2 {
		t.Errorf("counters.json after a rewrite = %d lines, want a header and the day's counter:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestPromotionSurvivesRestart: a counter that gains a second slot moves
// from the compact table to a full counter and back once a slot expires;
// each change is appended under another name (hash, then key), and a
// restart reads the last, never both.
func TestPromotionSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	const every = time.Second
	s := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every})
	minute := func(slot, amount int64) state.Spend {
		return state.Spend{Key: "k|rpm", Slot: slot, Slots: 6, Amount: amount, TTL: 2 * time.Minute}
	}
	mustSpend(t, s, minute(100, 1))
	flushed(t, clk, every)
	mustSpend(t, s, minute(101, 2)) // a second slot: promoted
	flushed(t, clk, every)
	checkSums(t, restarted(t, dir, clk), []int64{3}, minute(101, 0))

	flushed(t, clk, 5*time.Minute) // both slots expired
	mustSpend(t, s, minute(200, 4))
	mustSpend(t, s, state.Spend{Key: "mute", Slot: 1, Slots: 1, Amount: 1 << 40, TTL: time.Hour}) // past 32 bits
	flushed(t, clk, every)
	checkSums(t, restarted(t, dir, clk), []int64{4, 0, 1 << 40},
		minute(200, 0), minute(101, 0), state.Spend{Key: "mute", Slot: 1, Slots: 1, TTL: time.Hour})
}

// restarted opens a copy of counters.json in dir, as a restart after a
// crash would read it, without a second store flushing into dir (or
// arming a timer on clk) while the first still runs.
func restarted(t *testing.T, dir string, clk *clock.Fake) *Store {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, countersFile))
	if err != nil {
		t.Fatal(err)
	}
	cp := t.TempDir()
	if err := os.WriteFile(filepath.Join(cp, countersFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{Dir: cp, Clock: clock.NewFake(clk.Now())})
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// noSync is Disk without fsync, for tests that flush thousands of times.
type noSync struct{ Disk }

func (noSync) AppendFile(dir, name string, data []byte) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (noSync) WriteFileFrom(dir, name string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o600)
}

// TestJournalIsRewritten: counters changed flush after flush grow the
// journal until it passes twice the snapshot and a megabyte; the file is
// then written whole, so it stays bounded by what is live, not by how
// long the site has run.
func TestJournalIsRewritten(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	s := open(t, Options{Dir: dir, Clock: clk, FlushEvery: time.Hour, Files: noSync{}})
	var largest int64
	for i := range 5000 {
		var spends []state.Spend
		for j := range 10 {
			spends = append(spends, callerDay(j, 100, 1))
		}
		mustSpend(t, s, spends...)
		if err := s.flushCounts(); err != nil {
			t.Fatalf("flush %d: %v", i, err)
		}
		largest = max(largest, fileSize(t, dir))
	}
	if largest > minJournal+64<<10 {
		t.Errorf("counters.json reached %d bytes holding 10 counters, want it rewritten once the journal passes %d", largest, minJournal)
	}
	checkSums(t, open(t, Options{Dir: dir, Clock: clk}), []int64{5000}, callerDay(3, 100, 0))
}

// TestCorruptJournalLine: a line that does not read, other than the last,
// is an error naming the file and the line.
func TestCorruptJournalLine(t *testing.T) {
	dir := t.TempDir()
	content := "{\"version\":2}\n{\"h\":\"zz\"}\n{\"k\":\"a\",\"s\":[]}\n"
	if err := os.WriteFile(filepath.Join(dir, countersFile), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{Dir: dir})
	if err == nil {
		s.Close()
		t.Fatal("Open with a corrupt line: no error")
	}
	for _, want := range []string{filepath.Join(dir, countersFile), "line 2", "move it away"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open error = %q, want it to contain %q", err, want)
		}
	}
}

var discard = slog.New(slog.DiscardHandler)

// TestSameKeyTwiceInOneSpend: a key spent twice in one call, in two slots,
// is promoted by the first spend; the second adds to the full counter, and
// a restart reads both.
func TestSameKeyTwiceInOneSpend(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	const every = time.Second
	s := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every})
	minute := func(slot, amount int64) state.Spend {
		return state.Spend{Key: "k|rpm", Slot: slot, Slots: 6, Amount: amount, TTL: 2 * time.Minute}
	}
	mustSpend(t, s, minute(100, 1))
	mustSpend(t, s, minute(101, 2), minute(102, 4))
	checkSums(t, s, []int64{7}, minute(102, 0))
	flushed(t, clk, every)
	checkSums(t, restarted(t, dir, clk), []int64{7}, minute(102, 0))
}

// TestSpendDoesNotAllocateWithADir: with a Dir, a Spend also lists the
// counters it changed for the next flush; once the list has grown to a
// flush's worth, and is reused flush after flush, it allocates nothing.
func TestSpendDoesNotAllocateWithADir(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir(), FlushEvery: time.Hour})
	spends := []state.Spend{rpm(100, 1<<40, 1), rpd(20000, 1<<40, 1), callerDay(1, 100, 1)}
	spends[0].Slot = 101 // a full counter: rpm gets a second slot
	mustSpend(t, s, rpm(100, 0, 1))
	for range 2000 {
		mustSpend(t, s, spends...)
	}
	if err := s.flushCounts(); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := s.Spend(context.Background(), spends); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Spend allocates %v times per call, want 0", allocs)
	}
}

// TestGivenBackToZeroLeavesMemoryAndDisk: a counter given back to 0 (a
// request in flight, given back at its answer; redisstore taking a
// mirrored count out) leaves the compact table at once, not at its TTL,
// and a restart does not bring back the count the journal held before.
func TestGivenBackToZeroLeavesMemoryAndDisk(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	const every = time.Second
	s := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every})
	conc := func(i int, amount int64) state.Spend {
		return state.Spend{Key: fmt.Sprintf("caller:%032x|conc", i), Slot: 100, Slots: 2, Limit: 2, Amount: amount, TTL: 6 * time.Minute}
	}
	for i := range 100 {
		mustSpend(t, s, conc(i, 1))
	}
	flushed(t, clk, every) // the journal holds each at 1
	for i := range 100 {
		if err := s.Add(context.Background(), []state.Spend{conc(i, -1)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		if held(s, conc(i, 0).Key) {
			t.Fatalf("counter %d given back to 0 is still in memory, until its TTL", i)
		}
	}
	flushed(t, clk, every)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := open(t, Options{Dir: dir, Clock: clk, FlushEvery: every})
	for i := range 100 {
		checkSums(t, r, []int64{0}, conc(i, 0))
		if held(r, conc(i, 0).Key) {
			t.Fatalf("counter %d given back to 0 is in memory again after a restart", i)
		}
	}
}
