// Package statuspage serves the operator's view of a running gateway:
// /status, an HTML page embedded in the binary (one html/template file, no
// build step, no external asset), and /status.json, the status.Snapshot it
// is rendered from. The page refreshes itself by fetching its own live part
// every few seconds while it is visible, and offers the admin actions
// (package admin) when an admin token is configured and typed in; Pause
// first asks, in a dialog the refresh leaves alone, for how long and why.
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
package statuspage

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tollfree/tollfree/internal/figures"
	"github.com/tollfree/tollfree/status"
)

//go:embed page.html
var files embed.FS

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

// pageTemplate parses page.html the first time a page is rendered. Most
// gateways serve many requests and few status pages: parsed in New, it
// cost each process (and each reload) 120 KB of heap that stayed live
// whether or not anyone looked (issue 18 item 7). It is immutable once
// parsed, so every Page shares it; TestTemplateParses parses it.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page.html").Funcs(funcs).ParseFS(files, "page.html"))
})

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

// view is what the template gets.
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
				p.render(w, http.StatusUnauthorized, "page", v)
			}
			return
		}
		snap, ok := p.get(w, r)
		if !ok {
			return
		}
		v.Snapshot = snap
		name := "page"
		if live {
			name = "live"
		}
		p.render(w, http.StatusOK, name, v)
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

// render executes the template name with v and writes it with the page's
// headers and status.
func (p *Page) render(w http.ResponseWriter, code int, name string, v view) {
	var buf bytes.Buffer
	if err := pageTemplate().ExecuteTemplate(&buf, name, v); err != nil {
		p.o.Logger.Error("status: rendering the page failed", "err", err)
		http.Error(w, "the status page could not be rendered", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
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

var funcs = template.FuncMap{
	"pct": func(f *float64) string {
		if f == nil {
			return "–"
		}
		return percent(*f)
	},
	"ms": func(ms int64) string {
		switch {
		case ms <= 0:
			return "–"
		case ms < 1000:
			return strconv.FormatInt(ms, 10) + " ms"
		}
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
	},
	// until says when t comes, relative to now: "until 10:05:30 UTC (in
	// 4m 30s)", the time a <time> element the page's script shows in the
	// viewer's zone.
	"until": func(t *time.Time, now time.Time) template.HTML {
		if t == nil {
			return "until lifted"
		}
		return "until " + stamp(*t, now) + template.HTML(" (in "+human(t.Sub(now))+")")
	},
	"stamp": stamp,
	"ago": func(t *time.Time, now time.Time) string {
		if t == nil {
			return ""
		}
		return human(now.Sub(*t)) + " ago"
	},
	"iso": func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	},
	"clock":  func(t time.Time) string { return t.UTC().Format("15:04:05 UTC") },
	"latest": latest,
	// width is a window's fill as a CSS percentage.
	"width": func(w status.Window) string { return percent(w.Fraction()) },
	"level": func(w status.Window) string {
		switch f := w.Fraction(); {
		case f >= 1:
			return "full"
		case f >= 0.8:
			return "high"
		}
		return "ok"
	},
	"count":     count,
	"hasPrefix": strings.HasPrefix,
	"bars":      bars,
	"plural":    plural,
	"methods":   methods,
}

// plural counts n things: "1 polite retry", "2 polite retries". n is any
// integer (a count of the snapshot, or a len in the template).
func plural(n any, one, many string) (string, error) {
	var v int64
	switch x := n.(type) {
	case int:
		v = int64(x)
	case int64:
		v = x
	case uint64:
		v = int64(min(x, math.MaxInt64))
	default:
		return "", fmt.Errorf("plural: %T is not a count", n)
	}
	if v == 1 {
		return "1 " + one, nil
	}
	return strconv.FormatInt(v, 10) + " " + many, nil
}

// stamp is a time as a <time> element: its text the time in UTC, as a page
// read without its script shows it, its datetime attribute for the script
// to show it in the viewer's zone, keeping the UTC text as its title.
func stamp(t, now time.Time) template.HTML {
	utc := clockTime(t, now)
	return template.HTML(`<time datetime="` + t.UTC().Format(time.RFC3339) + `" title="` + utc + `">` + utc + `</time>`)
}

// latest says what a failing route's latest attempts were: "lost 2 of its
// last 2 attempts in silence (hedge races another route won)", "3 of its
// last 4 attempts failed, 1 of them lost in silence".
func latest(l *status.Latest) (string, error) {
	if l == nil {
		return "", nil
	}
	last, err := plural(l.Judged, "attempt", "attempts")
	if err != nil {
		return "", err
	}
	last = strings.TrimPrefix(last, "1 ")
	switch {
	case l.Silent == l.Failed:
		return fmt.Sprintf("silent on %d of its last %s: it lost the race to another route", l.Silent, last), nil
	case l.Silent > 0:
		return fmt.Sprintf("%d of its last %s failed, %d of them silent until another route answered", l.Failed, last, l.Silent), nil
	}
	return fmt.Sprintf("%d of its last %s failed", l.Failed, last), nil
}

// methods lists the rescues of a route by method, in figures.Methods'
// order: "prefix 2, instruct 1".
func methods(by map[string]uint64) string {
	var parts []string
	for _, m := range figures.Methods {
		if n := by[m]; n > 0 {
			parts = append(parts, m+" "+strconv.FormatUint(n, 10))
		}
	}
	return strings.Join(parts, ", ")
}

// percent formats a fraction as a percentage to a tenth, without trailing
// zeros: 0.9 is "90%", 0.12345 is "12.3%".
func percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) + "%"
}

// bar is one window drawn as a bar.
type bar struct {
	Label string
	W     status.Window
}

// bars lists the windows worth drawing: those with a limit.
func bars(ws status.Windows) []bar {
	var out []bar
	for _, b := range [...]bar{
		{"requests this month", ws.RPMo}, {"tokens this month", ws.TPMo}, {"requests today", ws.RPD}, {"requests this hour", ws.RPH}, {"requests this minute", ws.RPM},
		{"tokens today", ws.TPD}, {"tokens this hour", ws.TPH}, {"tokens this minute", ws.TPM},
	} {
		if b.W.Limit > 0 {
			out = append(out, b)
		}
	}
	return out
}

// count formats a count briefly: 950, 12.3k, 1.2M.
func count(n int64) string {
	switch {
	case n < 10_000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

func clockTime(t, now time.Time) string {
	t = t.UTC()
	if t.Sub(now) >= 24*time.Hour || t.YearDay() != now.UTC().YearDay() {
		return t.Format("Jan 2 15:04 UTC")
	}
	return t.Format("15:04:05 UTC")
}

// human formats a duration briefly: 45s, 4m 30s, 3h 10m, 2d 4h.
func human(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		if s%60 == 0 {
			return fmt.Sprintf("%dm", s/60)
		}
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd %dh", s/86400, s%86400/3600)
}
