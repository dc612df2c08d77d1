package memstore

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tollfree/tollfree/state"
)

// File names under Options.Dir.
const (
	countersFile = "counters.json"
	restsFile    = "rests.json"
	fileVersion  = 1
)

// countersJSON is the on-disk form of the counters.
type countersJSON struct {
	Version  int                   `json:"version"`
	Saved    time.Time             `json:"saved"`
	Counters map[string][]slotJSON `json:"counters"`
}

type slotJSON struct {
	Slot    int64     `json:"slot"`
	N       int64     `json:"n"`
	Expires time.Time `json:"expires"`
}

// restsJSON is the on-disk form of the rests: a version, and each rest in
// state.Rest's JSON form, the one every Store writes.
type restsJSON struct {
	Version int          `json:"version"`
	Rests   []state.Rest `json:"rests"`
}

// flushCounts writes counters.json if the counts changed since the last
// write.
func (s *Store) flushCounts() error {
	if s.dir == "" {
		return nil
	}
	s.countsFileMu.Lock()
	defer s.countsFileMu.Unlock()
	s.mu.Lock()
	if !s.dirty {
		s.mu.Unlock()
		return nil
	}
	snap := countersJSON{Version: fileVersion, Saved: s.clock.Now().UTC(), Counters: make(map[string][]slotJSON, len(s.counters))}
	for key, c := range s.counters {
		slots := make([]slotJSON, len(c.slots))
		for i, sl := range c.slots {
			slots[i] = slotJSON{Slot: sl.idx, N: sl.n, Expires: time.Unix(0, sl.expires).UTC()}
		}
		snap.Counters[key] = slots
	}
	s.dirty = false
	s.mu.Unlock()
	data, err := json.Marshal(snap)
	if err == nil {
		err = s.files.WriteFile(s.dir, countersFile, data)
	}
	s.persisted(countersFile, err)
	if err != nil {
		s.mu.Lock()
		s.dirty = true // try again at the next flush
		s.mu.Unlock()
		return fmt.Errorf("write %s: %w", countersFile, err)
	}
	return nil
}

// flushRests writes rests.json if its last write failed, so that a rest or
// pause decided while the disk was full reaches the disk once it frees.
func (s *Store) flushRests() error {
	if s.dir == "" {
		return nil
	}
	s.restsFileMu.Lock()
	defer s.restsFileMu.Unlock()
	s.mu.Lock()
	if !s.restsDirty {
		s.mu.Unlock()
		return nil
	}
	rests := s.restsLocked(time.Time{}, true)
	s.mu.Unlock()
	return s.saveRests(rests)
}

// saveRests writes rests, the newest rests in memory, and notes whether
// rests.json is now behind them; s.restsFileMu must be held.
func (s *Store) saveRests(rests []state.Rest) error {
	err := s.writeRests(rests)
	s.mu.Lock()
	s.restsDirty = err != nil
	s.mu.Unlock()
	s.persisted(restsFile, err)
	return err
}

// writeRests writes rests.json; s.restsFileMu must be held.
func (s *Store) writeRests(rests []state.Rest) error {
	if s.dir == "" {
		return nil
	}
	doc := restsJSON{Version: fileVersion, Rests: rests}
	data, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode %s: %w", restsFile, err)
	}
	if err := s.files.WriteFile(s.dir, restsFile, data); err != nil {
		return fmt.Errorf("write %s: %w", restsFile, err)
	}
	return nil
}

// ReplaceFile replaces dir/name with data atomically, the default
// FileWriter: write a temporary file, sync it, rename it over the old one,
// then sync the folder so the rename itself survives a power cut. A failure
// leaves the old file whole and no temporary file behind.
func ReplaceFile(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, name+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync() // best effort: not every platform syncs a folder
		_ = d.Close()
	}
	return nil
}

// load reads the files under s.dir, creating the folder if needed. Expired
// slots and ended rests are left out.
func (s *Store) load() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("create data folder: %w", err)
	}
	now := s.clock.Now()
	var counts countersJSON
	if err := readJSON(filepath.Join(s.dir, countersFile), &counts,
		"move it away to start with empty counters"); err != nil {
		return err
	}
	for key, slots := range counts.Counters {
		c := &counter{slots: make([]slot, 0, max(len(slots), 8))}
		for _, sl := range slots {
			if sl.Expires.After(now) {
				c.slots = append(c.slots, slot{idx: sl.Slot, n: sl.N, expires: unixNanos(sl.Expires)})
			}
		}
		slices.SortFunc(c.slots, func(a, b slot) int { return cmp.Compare(a.idx, b.idx) })
		if len(c.slots) > 0 {
			s.counters[key] = c
		}
	}
	var rests restsJSON
	if err := readJSON(filepath.Join(s.dir, restsFile), &rests,
		"move it away to start without rests and pauses, then set the pauses again"); err != nil {
		return err
	}
	for _, r := range rests.Rests {
		if r.Key != "" && r.Active(now) {
			s.rests[r.Key] = r
		}
	}
	return s.loadNotes(now)
}

// unixNanos is t in Unix nanoseconds, with a time past 2262 (a file written
// on a clock set wrong) held at the latest representable instant: UnixNano
// alone wraps it around to a random expiry.
func unixNanos(t time.Time) int64 {
	if t.After(time.Unix(0, math.MaxInt64)) {
		return math.MaxInt64
	}
	return t.UnixNano()
}

// readJSON decodes path into v; a missing file leaves v alone. A file that
// does not decode is an error naming the file and saying what to do.
func readJSON(path string, v any, remedy string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s is corrupt (%w); %s", path, err, remedy)
	}
	var version struct {
		Version int `json:"version"`
	}
	_ = json.Unmarshal(data, &version)
	if version.Version != fileVersion {
		return fmt.Errorf("%s has version %d, want %d; %s", path, version.Version, fileVersion, remedy)
	}
	return nil
}
