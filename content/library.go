package content

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/watch"
	"github.com/tollfree/tollfree/search"
)

// DefaultPoll is how often a Library looks for changes by default.
const DefaultPoll = 2 * time.Second

// Options tune Open. The zero value works.
type Options struct {
	// Search is passed to search.Open on every load (BaseURL for links,
	// size caps).
	Search search.Options
	// Poll is how often the folder is checked for changes. Default 2 s;
	// zero means the default.
	Poll time.Duration
	// Clock drives the polls. Default the wall clock.
	Clock clock.Clock
	// Logger receives a warning for each skipped file and each failure to
	// load (once each, with the path and the fix), and an info line for
	// each new version. Default none.
	Logger *slog.Logger
	// OnChange, when set, is called after each change of Status (a new
	// version, a failure, a recovery), from the polling goroutine, never
	// under a lock. It must not block for long.
	OnChange func(Status)
}

// Status is what a Library holds and how its last load went.
type Status struct {
	// Dir is the folder (or file) as given to Open.
	Dir string
	// Version is the served index's version; "" when none was ever loaded.
	Version string
	// Pages is the number of pages served.
	Pages int
	// Skipped lists the files the served index left out, and why.
	Skipped []search.Problem
	// Err is why the last load failed (a missing folder, no page); nil
	// when it worked. The previous index, if any, is still served.
	Err error
}

// Available says whether an index is served.
func (s Status) Available() bool { return s.Version != "" }

// Library is a folder of pages kept indexed while it changes. Its methods
// are safe for concurrent use.
type Library struct {
	dir   string
	o     Options
	cur   atomic.Pointer[search.Index]
	watch *watch.Watcher

	mu      sync.Mutex // guards status, changed, logged
	status  Status
	changed chan struct{}   // closed at the next change of status
	logged  map[string]bool // warnings logged and still true
}

// Open reads the pages under dir (a folder, or one file: search.Open) and
// keeps them indexed, checking for changes every Options.Poll until Close.
// It never fails: a folder it cannot read leaves the Library unavailable
// (Current returns nil) until a poll finds it readable, and the warning is
// logged at once. Close stops the polling.
func Open(dir string, o Options) *Library {
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Library{
		dir: dir, o: o, status: Status{Dir: dir}, changed: make(chan struct{}), logged: map[string]bool{},
		watch: watch.New(watch.Folder(dir), watch.Options{Every: o.Poll, Clock: o.Clock}),
	}
	l.load()
	l.watch.Start(l.load)
	return l
}

// Current is the index served now; nil while the content is unavailable.
// It is immutable: a reload swaps in a new one.
func (l *Library) Current() *search.Index { return l.cur.Load() }

// Version is the served content's version (search.Index.Version); "" while
// the content is unavailable. A cache keyed by it retires every answer
// when the content changes.
func (l *Library) Version() string {
	if ix := l.cur.Load(); ix != nil {
		return ix.Version()
	}
	return ""
}

// Search ranks the served sections for query (search.Index.Search); nil
// while the content is unavailable.
func (l *Library) Search(query string, n int) []search.Hit {
	if ix := l.cur.Load(); ix != nil {
		return ix.Search(query, n)
	}
	return nil
}

// Status is what is served and how the last load went.
func (l *Library) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.status
}

// Changed returns a channel closed at the next change of Status: a new
// version, a failure, a recovery. Call it again for the change after.
func (l *Library) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// Poll is the interval between checks.
func (l *Library) Poll() time.Duration { return l.o.Poll }

// Close stops the polling and waits for it. The index stays readable.
func (l *Library) Close() { l.watch.Close() }

// load indexes the folder anew and serves the result, or keeps the index
// it had when that fails.
func (l *Library) load() {
	ix, err := search.Open(l.dir, l.o.Search)
	if err == nil {
		l.cur.Store(ix)
	}
	l.mu.Lock()
	prev := l.status
	if err == nil {
		l.status = Status{Dir: l.dir, Version: ix.Version(), Pages: ix.Pages(), Skipped: ix.Skipped()}
	} else {
		l.status.Err = err
	}
	st := l.status
	changed := differ(prev, st)
	if changed {
		close(l.changed)
		l.changed = make(chan struct{})
	}
	warn := l.newWarnings(st)
	l.mu.Unlock()
	l.report(prev, st, warn)
	if changed && l.o.OnChange != nil {
		l.o.OnChange(st)
	}
}

func differ(a, b Status) bool {
	return a.Version != b.Version || errText(a.Err) != errText(b.Err) || len(a.Skipped) != len(b.Skipped)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// newWarnings returns the warnings of st not logged yet, and forgets the
// ones no longer true, so a problem that comes back is logged again.
func (l *Library) newWarnings(st Status) []string {
	now := make(map[string]bool, len(st.Skipped)+1)
	var fresh []string
	add := func(w string) {
		now[w] = true
		if !l.logged[w] {
			fresh = append(fresh, w)
		}
	}
	if st.Err != nil {
		add(st.Err.Error())
	}
	for _, p := range st.Skipped {
		add(p.String())
	}
	l.logged = now
	return fresh
}

// report logs what changed: each new warning once, and each new version.
func (l *Library) report(prev, st Status, warn []string) {
	log := l.o.Logger
	for _, w := range warn {
		switch {
		case st.Err != nil && w == st.Err.Error() && st.Available():
			log.Warn("content: reloading failed; the previous version is still served until the folder is fixed",
				"dir", l.dir, "err", w, "version", st.Version, "checked_every", l.o.Poll.String())
		case st.Err != nil && w == st.Err.Error():
			log.Warn("content: unavailable; searches find nothing (the chain answers with its fallback message or error) until it can be read",
				"dir", l.dir, "err", w, "fix", "create the folder with .md, .txt or .html pages, or correct the path in the config",
				"checked_every", l.o.Poll.String())
		default:
			log.Warn("content: a file was skipped; the rest is served", "dir", l.dir, "problem", w)
		}
	}
	if st.Version != prev.Version {
		log.Info("content: loaded", "dir", l.dir, "version", st.Version, "pages", st.Pages, "skipped", len(st.Skipped))
	}
}
