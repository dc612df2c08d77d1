package cache

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

// Disk is a Backend of one file per key under a folder, so that answers
// outlive a restart. Files are written to a temporary name and renamed into
// place, so a reader sees a whole value or none. Each file starts with a
// magic word and its expiry; expired files are removed when read, and by
// Prune. Disk is safe for concurrent use, and by several processes sharing
// the folder. Its size is not bounded: call Prune from time to time.
type Disk struct {
	dir   string
	clock clock.Clock
}

var (
	_ Backend   = (*Disk)(nil)
	_ TTLGetter = (*Disk)(nil)
)

// diskMagic opens every cache file; a new file layout takes a new magic.
const diskMagic = "tfc1"

// diskHeader is the magic and the expiry in unix nanoseconds (0: never).
const diskHeader = len(diskMagic) + 8

// tempPrefix names files still being written; Prune removes old ones left
// by a crash.
const tempPrefix = ".tmp-"

// tempMaxAge is how old a temporary file must be before Prune removes it.
const tempMaxAge = time.Hour

// NewDisk returns a Disk storing under dir, creating it if needed, timed by
// c (clock.Real when nil).
func NewDisk(dir string, c clock.Clock) (*Disk, error) {
	if c == nil {
		c = clock.Real{}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cache: open disk: %w", err)
	}
	return &Disk{dir: dir, clock: c}, nil
}

// path is dir/ab/abcd...: 256 sub-folders keep directories small.
func (d *Disk) path(k Key) string {
	h := k.String()
	return filepath.Join(d.dir, h[:2], h)
}

// Get returns the value of k; an expired or unreadable file is a miss, and
// an expired one is removed.
func (d *Disk) Get(ctx context.Context, k Key) ([]byte, bool, error) {
	v, _, ok, err := d.GetTTL(ctx, k)
	return v, ok, err
}

// GetTTL is Get that also returns how long the value has left (0: never
// expires).
func (d *Disk) GetTTL(ctx context.Context, k Key) ([]byte, time.Duration, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, false, fmt.Errorf("cache: disk get: %w", err)
	}
	p := d.path(k)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("cache: disk get: %w", err)
	}
	exp, ok := parseHeader(b)
	if !ok {
		// Not a file of ours, or cut short: drop it rather than fail forever.
		os.Remove(p)
		return nil, 0, false, nil
	}
	var left time.Duration
	if exp != 0 {
		left = time.Unix(0, exp).Sub(d.clock.Now())
		if left <= 0 {
			os.Remove(p)
			return nil, 0, false, nil
		}
	}
	return b[diskHeader:], left, true, nil
}

func parseHeader(b []byte) (exp int64, ok bool) {
	if len(b) < diskHeader || string(b[:len(diskMagic)]) != diskMagic {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b[len(diskMagic):diskHeader])), true
}

// Set writes v under k for ttl (no expiry when ttl <= 0).
func (d *Disk) Set(ctx context.Context, k Key, v []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cache: disk set: %w", err)
	}
	var exp int64
	if ttl > 0 {
		exp = d.clock.Now().Add(ttl).UnixNano()
	}
	p := d.path(k)
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cache: disk set: %w", err)
	}
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("cache: disk set: %w", err)
	}
	var hdr [diskHeader]byte
	copy(hdr[:], diskMagic)
	binary.BigEndian.PutUint64(hdr[len(diskMagic):], uint64(exp))
	_, err = f.Write(hdr[:])
	if err == nil {
		_, err = f.Write(v)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("cache: disk set: %w", err)
	}
	return nil
}

// Prune removes every expired or unreadable entry file, and temporary files
// older than an hour left by a crashed writer. Files it did not name (not a
// 64-digit hex name, nor a temporary one) are left alone. It returns how many files it
// removed. It stops early, returning ctx's error, when ctx ends.
func (d *Disk) Prune(ctx context.Context) (removed int, err error) {
	now := d.clock.Now()
	err = filepath.WalkDir(d.dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if de.IsDir() {
			return nil
		}
		stale, err := d.stale(p, de, now)
		if err != nil || !stale {
			return err
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		removed++
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("cache: disk prune: %w", err)
	}
	return removed, nil
}

// stale reports whether Prune should remove the file at p.
func (d *Disk) stale(p string, de fs.DirEntry, now time.Time) (bool, error) {
	name := de.Name()
	if !strings.HasPrefix(name, tempPrefix) && !isEntryName(name) {
		return false, nil
	}
	if strings.HasPrefix(name, tempPrefix) {
		info, err := de.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return now.Sub(info.ModTime()) > tempMaxAge, nil
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	var hdr [diskHeader]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return true, nil // shorter than a header: not a whole entry
	}
	exp, ok := parseHeader(hdr[:])
	if !ok {
		return true, nil
	}
	return exp != 0 && !now.Before(time.Unix(0, exp)), nil
}

// isEntryName reports whether name is a key in hex, as path writes it.
func isEntryName(name string) bool {
	if len(name) != 2*len(Key{}) {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil
}
