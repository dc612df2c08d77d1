// Package watch tells when a file or a folder changed, for the two things
// tollfree reloads while it runs: its config file (cmd/tollfree serve) and
// the content folders its search fallback and site assistant read
// (package content).
//
// It polls: every Options.Every it takes a Sum of what it watches and,
// when the Sum differs from the last one, calls the change function.
// Polling needs nothing from the platform (inotify, kqueue and
// ReadDirectoryChangesW differ, miss edits on network and container
// mounts, and an editor's write-then-rename replaces the very file a
// notification was registered on), and a Sum of the contents (File) tells
// an edit within the same second, or a file put back as it was, right.
// golang.org/x/... has no file watcher, and fsnotify would add a
// dependency for something a two-second poll does as well here: the
// files are small and few.
//
// A Sum of "" means nothing could be read (a file being replaced, a
// missing file): it is no change, and the next readable Sum is compared
// with the last readable one.
package watch

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

// DefaultEvery is Options.Every's default.
const DefaultEvery = 2 * time.Second

// Sum fingerprints what a Watcher looks at: two equal Sums mean no change
// worth reloading for. "" means nothing could be read.
type Sum func() string

// File sums the contents of the file at path (SHA-256); "" when it cannot
// be read.
func File(path string) Sum {
	return func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			return ""
		}
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:])
	}
}

// Folder sums the names, sizes, modes and modification times of the files
// under dir (names starting with a dot left out, as search.Open leaves
// them; links followed), or the error that stops listing them: it changes
// when the content may have, and when the folder becomes unreadable or
// readable again.
func Folder(dir string) Sum {
	return func() string { return folderSum(dir) }
}

func folderSum(dir string) string {
	h := sha256.New()
	entry := func(rel string, info fs.FileInfo) {
		var n [24]byte
		binary.LittleEndian.PutUint64(n[0:], uint64(info.Size()))
		binary.LittleEndian.PutUint64(n[8:], uint64(info.ModTime().UnixNano()))
		binary.LittleEndian.PutUint64(n[16:], uint64(info.Mode()))
		io.WriteString(h, rel)
		h.Write([]byte{0})
		h.Write(n[:])
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			io.WriteString(h, "error\x00"+p+"\x00"+err.Error()+"\x00")
			if p == dir {
				return err
			}
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() && p != dir {
			return nil
		}
		info, err := os.Stat(p) // follows a link, as search.Open does
		if err != nil {
			io.WriteString(h, "error\x00"+p+"\x00"+err.Error()+"\x00")
			return nil
		}
		entry(p, info)
		return nil
	})
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Options configure a Watcher. Zero fields take the defaults.
type Options struct {
	// Every is the time between two looks. Default DefaultEvery.
	Every time.Duration
	// Clock times the looks. Default clock.Real.
	Clock clock.Clock
}

// Watcher calls its change function, from its own goroutine, each time a
// look finds a Sum other than the last readable one. It is safe for
// concurrent use.
type Watcher struct {
	sum     Sum
	o       Options
	changed func() // set by Start
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	last    string // the last readable Sum; the goroutine's own after Start
}

// New takes a first Sum at once: what the caller reads next is the state
// later looks compare with. Start begins the looks.
func New(sum Sum, o Options) *Watcher {
	if o.Every <= 0 {
		o.Every = DefaultEvery
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	return &Watcher{sum: sum, o: o, stop: make(chan struct{}), done: make(chan struct{}), last: sum()}
}

// Start looks every Every until Close, calling changed after each look
// that found a change. Call it once.
func (w *Watcher) Start(changed func()) {
	w.changed = changed
	go w.run()
}

func (w *Watcher) run() {
	defer close(w.done)
	for {
		t := w.o.Clock.NewTimer(w.o.Every)
		select {
		case <-w.stop:
			t.Stop()
			return
		case <-t.C():
		}
		if s := w.sum(); s != "" && s != w.last {
			w.last = s
			w.changed()
		}
	}
}

// Every is the time between two looks.
func (w *Watcher) Every() time.Duration { return w.o.Every }

// Close stops the looks and waits for a change function running to
// return. It may be called more than once, and on a Watcher never
// started.
func (w *Watcher) Close() {
	w.once.Do(func() { close(w.stop) })
	if w.changed != nil {
		<-w.done
	}
}
