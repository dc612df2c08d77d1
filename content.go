package tollfree

import (
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strconv"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/content"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/search"
)

// This file keeps the site's content live for the chains that read it
// (issue 14, item 1): one content.Library per folder, polled for changes,
// whose version is mixed into the chain's cache keys, so that an edit on
// disk retires every cached answer of the chain (seed 000), and whose
// condition is a line of /healthz. A folder that cannot be read degrades
// the chain's search to nothing (its fallback message or error answers)
// and is picked up when it appears: it never stops the gateway.

// shelf opens one content.Library per folder and options, shared by every
// chain that names it, and closes them with the gateway.
type shelf struct {
	clock  clock.Clock
	logger *slog.Logger
	libs   map[shelfKey]*content.Library
}

type shelfKey struct {
	dir string
	o   search.Options
}

func newShelf(c clock.Clock, logger *slog.Logger) *shelf {
	return &shelf{clock: c, logger: logger, libs: make(map[shelfKey]*content.Library)}
}

// open returns the live content of dir read with o, opening it on first
// use. It never fails: see content.Open.
func (s *shelf) open(dir string, o search.Options) *content.Library {
	k := shelfKey{dir: filepath.Clean(dir), o: o}
	if lib := s.libs[k]; lib != nil {
		return lib
	}
	lib := content.Open(dir, content.Options{Search: o, Clock: s.clock, Logger: s.logger})
	s.libs[k] = lib
	return lib
}

// close stops every library's polling.
func (s *shelf) close() {
	for _, lib := range s.libs {
		lib.Close()
	}
}

// openContents opens the live content of every chain that answers from
// one: a site assistant's content (linked from its base_url), else a
// keyword-search fallback's folder. Chains naming the same folder, read
// the same way, share one Library.
func openContents(p *config.Plan, sh *shelf) map[string]*content.Library {
	out := make(map[string]*content.Library)
	for _, name := range p.ChainOrder {
		ch := p.Chains[name]
		switch {
		case ch.Assistant != nil:
			out[name] = sh.open(ch.Assistant.Content, search.Options{BaseURL: ch.Assistant.BaseURL})
		case ch.Fallback.Kind == config.FallbackSearch:
			out[name] = sh.open(ch.Fallback.Content, search.Options{})
		}
	}
	return out
}

// contentVersion is what the chain's cache keys carry of its content: the
// live content's version (so an edit retires every cached answer) and the
// hand-set content_version, if any. A chain without live content keeps
// the key it always had.
func (g *Gateway) contentVersion(ch *config.Chain) string {
	lib := g.content[ch.Name]
	if lib == nil {
		return ch.ContentVersion
	}
	// The live version is 24 hex digits or "": the join is unambiguous.
	return lib.Version() + "+" + ch.ContentVersion
}

// contentHealth adds a /healthz line per chain with live content, saying
// whether it is served, how many files were skipped, and what a folder
// that cannot be read means for the chain. It names no path: /healthz is
// open to anyone, and the warning in the log has it.
func (g *Gateway) contentHealth(m map[string]string) {
	for name, lib := range g.content {
		m["content_"+name] = libraryHealth(lib.Status(), lib.Poll().String())
	}
}

func libraryHealth(st content.Status, every string) string {
	var s string
	switch {
	case !st.Available():
		return "unavailable (" + contentCause(st.Err) + "): searches find nothing, so the chain answers with its fallback message or error; checked every " + every
	case st.Err != nil:
		s = "stale (" + contentCause(st.Err) + "): version " + st.Version + " still served; checked every " + every
	default:
		s = "ok: " + strconv.Itoa(st.Pages) + " pages, version " + st.Version
	}
	if n := len(st.Skipped); n > 0 {
		s += "; " + strconv.Itoa(n) + " files skipped (the log names them)"
	}
	return s
}

// contentCause says why content could not be read, without its path.
func contentCause(err error) string {
	var pe *fs.PathError
	switch {
	case err == nil:
		return "not loaded"
	case errors.Is(err, search.ErrNoContent):
		return "no page to search"
	case errors.As(err, &pe):
		return pe.Err.Error()
	}
	return "cannot be read"
}
