package memstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
)

// countingDisk is Disk, counting the bytes it appends and rewrites.
type countingDisk struct {
	Disk
	appended, rewritten atomic.Int64
}

func (d *countingDisk) AppendFile(dir, name string, data []byte) error {
	d.appended.Add(int64(len(data)))
	return d.Disk.AppendFile(dir, name, data)
}

func (d *countingDisk) WriteFileFrom(dir, name string, write func(io.Writer) error) error {
	return d.Disk.WriteFileFrom(dir, name, func(w io.Writer) error {
		return write(countingWriter{w, &d.rewritten})
	})
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// visitor returns the spends quota.Enter makes for a visitor under
// per-visitor limits of an hour, a day, tokens a day and requests at once,
// and a site-wide day: keys, slots and TTLs as quota builds them
// (quota/ask.go), so the counters are the ones a day of visitors leaves.
// The limits are high enough that no request is refused: a refused one
// would count nowhere, and write nothing.
func visitor(id int, now time.Time, spends []state.Spend) []state.Spend {
	sum := sha256.Sum256([]byte("visitor:" + strconv.Itoa(id)))
	key := "caller:" + hex.EncodeToString(sum[:16])
	unix := now.Unix()
	tenMin, hour := unix/600, unix/3600
	return append(spends[:0],
		state.Spend{Key: key + "|conc", Slot: tenMin, Slots: 2, Limit: 1 << 20, Amount: 1, TTL: 30 * time.Minute},
		state.Spend{Key: key + "|hour", Slot: tenMin, Slots: 6, Limit: 1 << 20, Amount: 1, TTL: 70 * time.Minute},
		state.Spend{Key: key + "|day", Slot: hour, Slots: 24, Limit: 1 << 20, Amount: 1, TTL: 25 * time.Hour},
		state.Spend{Key: key + "|tokens", Slot: hour, Slots: 24, Limit: 1 << 30, Amount: 900, TTL: 25 * time.Hour},
		state.Spend{Key: "site|day", Slot: hour, Slots: 24, Limit: 1 << 40, Amount: 1, TTL: 25 * time.Hour},
	)
}

// ask spends as Enter does, then gives back as Leave does (the request
// left the concurrent count, and used 700 tokens, not 900).
func ask(b *testing.B, s *Store, spends []state.Spend) {
	ctx := context.Background()
	if failed, err := s.Spend(ctx, spends); err != nil || failed != -1 {
		b.Fatalf("Spend = %d, %v", failed, err)
	}
	conc, tokens := spends[0], spends[3]
	conc.Amount, conc.Limit = -1, 0
	tokens.Amount, tokens.Limit = -200, 0
	if err := s.Add(ctx, []state.Spend{conc, tokens}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFlush measures what persisting the counts costs, a flush after
// each 1,000 requests, with 10,000 and with 1,000,000 visitors already
// counted today (issue 18: the cost must not grow with them). Each op is
// one flush; B/flush is what it appended, rewrite-B/flush the whole-file
// rewrites shared among the flushes (none within a short run when the
// state is large: one is due when the journal passes twice the snapshot).
//
//	go test -run '^$' -bench Flush -benchtime 200x ./state/memstore/
func BenchmarkFlush(b *testing.B) {
	for _, known := range []int{10_000, 1_000_000} {
		b.Run(strconv.Itoa(known), func(b *testing.B) {
			start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			clk := clock.NewFake(start)
			disk := &countingDisk{}
			s, err := Open(Options{Dir: b.TempDir(), Clock: clk, FlushEvery: time.Hour, Files: disk})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var spends []state.Spend
			for i := range known {
				spends = visitor(i, start, spends)
				ask(b, s, spends)
			}
			if err := s.flushCounts(); err != nil { // the snapshot of the day so far
				b.Fatal(err)
			}
			disk.appended.Store(0)
			disk.rewritten.Store(0)
			next := 0
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				clk.Advance(time.Second)
				for range 1000 {
					spends = visitor(next%known, clk.Now(), spends)
					ask(b, s, spends)
					next += 7919 // a prime: visitors spread over the known ones
				}
				b.StartTimer()
				if err := s.flushCounts(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(disk.appended.Load())/float64(b.N), "B/flush")
			b.ReportMetric(float64(disk.rewritten.Load())/float64(b.N), "rewrite-B/flush")
		})
	}
}

// BenchmarkOpen measures a start after a day of a million visitors: Open
// reading a counters.json of 4 million counters (252 MB), as the rewrite
// wrote it. Each op is one Open.
//
//	go test -run '^$' -bench Open -benchtime 2x ./state/memstore/
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	s, err := Open(Options{Dir: dir, Clock: clk, FlushEvery: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	var spends []state.Spend
	for i := range 1_000_000 {
		spends = visitor(i, start, spends)
		ask(b, s, spends)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		s, err := Open(Options{Dir: dir, Clock: clk, FlushEvery: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.mu.Lock()
		n := s.small.len(clk.Now().UnixNano()) + len(s.counters)
		s.mu.Unlock()
		if n != 4_000_001 {
			b.Fatalf("loaded %d counters, want 4,000,001", n)
		}
		s.Close()
		b.StartTimer()
	}
}
