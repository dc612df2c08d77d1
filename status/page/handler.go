// Package page serves the operator's view of a running gateway:
// /status, an HTML page embedded in the binary (no build step, no external
// asset), and /status.json, the status.Snapshot it is rendered from. The
// page refreshes itself by fetching its own live part every few seconds
// while it is visible, and offers the admin actions (package admin) when an
// admin token is configured and typed in; Pause first asks, in a dialog the
// refresh leaves alone, for how long and why.
//
// The page leads the eye: chains, routes and providers come in the
// snapshot's order of urgency (status.Snapshot.RoutesByUrgency), troubles
// first. Times are <time> elements written in UTC, which the page's script
// shows in the viewer's zone, keeping the UTC time as their title: read
// without the script, the page still says UTC.
//
// A private page (Options.Authorized; the gateway's default when callers
// need a key) answers 401 without a token: /status.json with an error, and
// /status with the page stripped of all data, which asks for a token and
// sends it as a bearer token with its own fetches, since a browser opening
// a page cannot.
//
// Nothing is worked out unless someone looks: each request reads one fresh
// snapshot. The page shows only what a snapshot holds: names from the plan,
// failure classes, counts, times and redacted reasons; never a key, a
// prompt or an answer.
//
// # Why the page is written by hand
//
// The page's static parts, its style and its script, are two embedded
// files (head.html, foot.html); the parts a snapshot fills in are written
// by plain Go (page.go), escaping every value that comes from data as
// html/template did (escaper). The page was an html/template file until
// that cost too much: text/template, under html/template, calls
// reflect.Value.MethodByName with names it learns at run time, so the
// linker cannot tell which methods are dead and keeps every exported
// method of every type converted to an interface anywhere in the program.
// With the Redis client in the binary that made cmd/tollfree 25.0 MB
// instead of 16.5 MB (CGO_ENABLED=0, -trimpath, -ldflags "-s -w"), and
// the process's resident memory under load 3-4 MB larger, in file pages of
// the binary: too much for the target of 30 MB at 64 connections. Nothing
// in the binary may import text/template for the same reason.
package page

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/tollfree/tollfree/status"
)

// Snapshotter is where the page reads from; *status.Source implements it.
type Snapshotter interface {
	Snapshot(ctx context.Context) (*status.Snapshot, error)
}

// Options configure a Page. Status is required.
type Options struct {
	Status Snapshotter
	// Refresh is how often the page refreshes itself. Default 3s.
	Refresh time.Duration
	Logger  *slog.Logger
	// Authorized, when set, makes the page private: a request it refuses
	// gets 401 and no snapshot. For /status that 401 carries the page
	// without data, which asks for a token and sends it with its own
	// fetches (a browser cannot send one when it opens a page). Nil: the
	// page is public.
	Authorized func(*http.Request) bool
}

// Page serves /status and /status.json. It is safe for concurrent use.
type Page struct {
	o Options
}

// snapshotWait bounds the reads of one snapshot.
const snapshotWait = 3 * time.Second

// New returns a Page.
func New(o Options) *Page {
	if o.Refresh <= 0 {
		o.Refresh = 3 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Page{o: o}
}

// view is what the page is written from.
type view struct {
	*status.Snapshot
	RefreshMS int64
	// Private: the page's fetches need a token, which it asks for.
	Private bool
	// Locked: this request brought no token; the snapshot is empty and the
	// page shows only where to type one.
	Locked bool
}

func (p *Page) snapshot(w http.ResponseWriter, r *http.Request) (*status.Snapshot, bool) {
	ctx, cancel := context.WithTimeout(r.Context(), snapshotWait)
	defer cancel()
	snap, err := p.o.Status.Snapshot(ctx)
	if err != nil {
		if r.Context().Err() == nil {
			p.o.Logger.Warn("status: snapshot failed", "err", err)
			http.Error(w, "the status could not be read in time; reload the page", http.StatusServiceUnavailable)
		}
		return nil, false
	}
	return snap, true
}

// get answers a method other than GET with 405, and otherwise takes the
// snapshot both views show.
func (p *Page) get(w http.ResponseWriter, r *http.Request) (*status.Snapshot, bool) {
	if !methodGet(w, r) {
		return nil, false
	}
	return p.snapshot(w, r)
}

// HTML serves the page. With ?part=live it serves only the live part, for
// the page's own refresh.
func (p *Page) HTML() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		live := r.URL.Query().Get("part") == "live"
		v := view{RefreshMS: p.o.Refresh.Milliseconds(), Private: p.o.Authorized != nil}
		if !p.allowed(w, r) {
			switch {
			case live:
				refuse(w, "text/plain; charset=utf-8", []byte("this status page needs a token: send Authorization: Bearer <gateway key or admin token>\n"))
			case methodGet(w, r):
				v.Snapshot, v.Locked = &status.Snapshot{}, true
				p.render(w, http.StatusUnauthorized, v.page())
			}
			return
		}
		snap, ok := p.get(w, r)
		if !ok {
			return
		}
		v.Snapshot = snap
		body := v.page
		if live {
			body = v.live
		}
		p.render(w, http.StatusOK, body())
	})
}

// allowed reports whether r may see the snapshot; a refused request gets
// WWW-Authenticate, its caller writes the rest.
func (p *Page) allowed(w http.ResponseWriter, r *http.Request) bool {
	if p.o.Authorized == nil || p.o.Authorized(r) {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="tollfree status"`)
	return false
}

// methodGet answers a method other than GET or HEAD with 405.
func methodGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return false
	}
	return true
}

// refuse answers 401 with body.
func refuse(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusUnauthorized)
	w.Write(body)
}

// render writes body, an HTML page or its live part, with the page's
// headers and status.
func (p *Page) render(w http.ResponseWriter, code int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.WriteHeader(code)
	w.Write(body)
}

// JSON serves the snapshot as JSON.
func (p *Page) JSON() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.allowed(w, r) {
			refuse(w, "application/json", []byte(`{"error":{"message":"this status needs a token: send Authorization: Bearer <gateway key or admin token>","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`+"\n"))
			return
		}
		snap, ok := p.get(w, r)
		if !ok {
			return
		}
		b, err := json.MarshalIndent(snap, "", "  ")
		if err != nil {
			http.Error(w, "the status could not be encoded", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(append(b, '\n'))
	})
}
