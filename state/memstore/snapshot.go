package memstore

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/tollfree/tollfree/state"
)

// File names under Options.Dir.
const (
	countersFile = "counters.json"
	restsFile    = "rests.json"
	fileVersion  = 1 // of rests.json and notes.json; counters.json: countersVersion
)

// countersJSON is counters.json as version 1 wrote it, one object rewritten
// whole each flush; load migrates it (journal.go).
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

// flushRests writes rests.json if its last write failed, so that a rest or
// pause decided while the disk was full reaches the disk once it frees.
func (s *Store) flushRests() error {
	if s.dir == "" {
		return nil
	}
	s.restsFileMu.Lock()
	defer s.restsFileMu.Unlock()
	s.mu.Lock()
	if s.restsWritten >= s.restsGen {
		s.mu.Unlock()
		return nil
	}
	rests, cur := s.allRests(), s.restsGen
	s.mu.Unlock()
	return s.saveRests(rests, cur)
}

// saveRests writes rests, change gen of the rests in memory, and notes it
// written; s.restsFileMu must be held.
func (s *Store) saveRests(rests []state.Rest, gen uint64) error {
	err := s.writeRests(rests)
	s.mu.Lock()
	if err == nil {
		s.restsWritten = gen
	}
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
func ReplaceFile(dir, name string, data []byte) error {
	return replaceFrom(dir, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// replaceFrom is ReplaceFile with the content written by write, through a
// buffer.
func replaceFrom(dir, name string, write func(io.Writer) error) (err error) {
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
	// 32 KB: a flush every second made a 256 KB buffer each time, most
	// of a megabyte of heap under load (issue 18, item 7).
	bw := bufio.NewWriterSize(f, 32<<10)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
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

// AppendWriter is a FileWriter that can also append to a file and replace
// one from a stream: what lets counters.json be a journal. Disk is one.
type AppendWriter interface {
	FileWriter
	// AppendFile appends data to dir/name, creating it, and syncs it.
	AppendFile(dir, name string, data []byte) error
	// WriteFileFrom replaces dir/name, as WriteFile does, with what write
	// writes.
	WriteFileFrom(dir, name string, write func(io.Writer) error) error
}

// Disk is the default Options.Files: ReplaceFile, and appends synced to
// disk before they return.
type Disk struct{}

var _ AppendWriter = Disk{}

// WriteFile is ReplaceFile.
func (Disk) WriteFile(dir, name string, data []byte) error { return ReplaceFile(dir, name, data) }

// WriteFileFrom replaces dir/name with what write writes, as ReplaceFile.
func (Disk) WriteFileFrom(dir, name string, write func(io.Writer) error) error {
	return replaceFrom(dir, name, write)
}

// AppendFile appends data to dir/name and syncs it.
func (Disk) AppendFile(dir, name string, data []byte) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// load reads the files under s.dir, creating the folder if needed. Expired
// slots and ended rests are left out.
func (s *Store) load() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("create data folder: %w", err)
	}
	now := s.clock.Now()
	if err := s.loadCounts(now.UnixNano()); err != nil {
		return err
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
	s.publishRestsLocked()
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
