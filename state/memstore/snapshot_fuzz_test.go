package memstore

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
)

// FuzzSnapshot loads fuzzed counters.json and rests.json. Open must either
// fail with an error naming the file, or load a state that keeps the
// loader's promises (no expired slot, slots sorted, no ended rest, no rest
// without a key), and that state must survive a save and a second load
// unchanged: what a restart reads is what the last run had.
func FuzzSnapshot(f *testing.F) {
	// Seeds: files as Store writes them (TestRestartKeepsCountsRestsAndPauses).
	f.Add([]byte(`{"version":1,"saved":"2026-11-29T12:00:00Z","counters":{"groq/llama|rpm":[{"slot":178048080,"n":3,"expires":"2026-11-29T12:02:00Z"}],"groq/llama|rpd":[{"slot":20786,"n":40,"expires":"2026-12-01T12:00:00Z"},{"slot":20785,"n":2,"expires":"2026-11-30T00:00:00Z"}]}}`),
		[]byte(`{"version":1,"rests":[{"key":"groq/llama","until":"2026-11-29T12:05:00Z","class":"rate_minute","reason":"rate_minute: Rate limit reached","since":"2026-11-29T12:00:00Z"},{"key":"provider:gemini","until":"0001-01-01T00:00:00Z","class":"paused","reason":"paused by hand","manual":true,"since":"2026-11-29T11:00:00Z"}]}`))
	f.Add([]byte(`{"version":1,"counters":{"a":[{"slot":5,"n":1,"expires":"2026-11-29T12:00:01Z"},{"slot":5,"n":-2,"expires":"2099-01-01T00:00:00Z"}]}}`),
		[]byte(`{"version":1,"rests":[{"key":"","until":"2099-01-01T00:00:00Z"},{"key":"x","until":"2026-11-29T11:59:59Z"},{"key":"x","until":"2026-11-29T12:00:01+01:00"}]}`))
	// A clock set centuries ahead once wrapped the expiry around to the past.
	f.Add([]byte(`{"version":1,"counters":{"a":[{"slot":1,"n":1,"expires":"3000-01-01T00:00:00Z"}]}}`), []byte(nil))
	f.Add([]byte(`{"version":2}`), []byte(`{"rests":[]}`))
	// Version 2: a snapshot, a journal, a torn last line.
	f.Add([]byte("{\"version\":2,\"saved\":\"2026-11-29T12:00:00Z\"}\n"+
		`{"k":"groq/llama|rpm","s":[[178048080,3,1764417720000000000],[178048081,1,1764417730000000000]]}`+"\n"+
		`{"h":"9c1185a5c5e9fc54","s":[[494608,2,1764680400000000000]]}`+"\n"+
		`{"k":"caller|day","s":[[494608,2,1764680400000000000]]}`+"\n"+
		`{"h":"9c1185a5c5e9fc54","s":[[494608,5,17646`), []byte(nil))
	f.Add([]byte(`{"version":1,"counters":null}`), []byte(`[]`))
	f.Add([]byte(`{`), []byte(`{"version":1,"rests":[{"key":"\u00e9\u2028","until":"9999-12-31T23:59:59.999999999Z"}]}`))
	f.Fuzz(func(t *testing.T, counters, rests []byte) {
		dir := t.TempDir()
		for name, data := range map[string][]byte{countersFile: counters, restsFile: rests} {
			if len(data) > 0 {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		clk := clock.NewFake(t0)
		s, err := Open(Options{Dir: dir, Clock: clk})
		if err != nil {
			if !strings.Contains(err.Error(), countersFile) && !strings.Contains(err.Error(), restsFile) {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		defer s.Close()
		checkLoaded(t, s)

		// Save everything, as a running store would, then load it again.
		s.mu.Lock()
		s.rewrite = true
		all := s.restsLocked()
		s.mu.Unlock()
		if err := s.flushCounts(); err != nil {
			t.Fatalf("flushCounts: %v", err)
		}
		if err := s.writeRests(all); err != nil {
			t.Fatalf("writeRests: %v", err)
		}
		again, err := Open(Options{Dir: dir, Clock: clk})
		if err != nil {
			t.Fatalf("a saved snapshot does not load: %v", err)
		}
		defer again.Close()
		if a, b := dump(s), dump(again); !reflect.DeepEqual(a, b) {
			t.Fatalf("state changed across save and load:\nbefore %v\nafter  %v", a, b)
		}
	})
}

// checkLoaded checks what load promises about the state it builds.
func checkLoaded(t *testing.T, s *Store) {
	t.Helper()
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, c := range s.counters {
		key := c.key
		if state.HashKey(key) != h {
			t.Fatalf("counter %q held under hash %x, not its key's", key, h)
		}
		if len(c.slots) == 0 {
			t.Fatalf("counter %q loaded without slots", key)
		}
		if _, ok := s.small.get(h, now.UnixNano()); ok {
			t.Fatalf("counter %q loaded both full and small", key)
		}
		if !slices.IsSortedFunc(c.slots, func(a, b slot) int { return cmp.Compare(a.idx, b.idx) }) {
			t.Fatalf("counter %q: slots not sorted: %v", key, c.slots)
		}
		for _, sl := range c.slots {
			if sl.expires <= now.UnixNano() {
				t.Fatalf("counter %q: slot %d loaded expired (%d <= %d)", key, sl.idx, sl.expires, now.UnixNano())
			}
		}
	}
	for key, r := range s.rests {
		if key == "" || r.Key != key || !r.Active(now) {
			t.Fatalf("rest %q loaded: %+v", key, r)
		}
	}
}

// dump is a store's state in comparable form: slots as they are, rests
// with their times in UTC (a file may carry any zone).
func dump(s *Store) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{}
	for _, c := range s.counters {
		out["c "+c.key] = append([]slot(nil), c.slots...)
	}
	now := s.clock.Now().UnixNano()
	for i := range nShards {
		s.small.each(i, now, func(h uint64, e entry) { out[fmt.Sprintf("h %016x", h)] = e })
	}
	for key, r := range s.rests {
		r.Until, r.Since = r.Until.UTC(), r.Since.UTC()
		out["r "+key] = r
	}
	return out
}
