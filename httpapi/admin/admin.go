// Package admin owns the operator's hands on a running gateway: probe a
// route now, pause a route or a whole provider, resume it. The actions are
// a small JSON API behind an admin token, compared in constant time; with
// no token configured the actions are off and answer 403.
//
//	POST /admin/pause   {"route": "groq/llama-3.3-70b-versatile"}  or {"provider": "groq"}
//	                    optional "reason" (shown on the status page, at most 120 characters)
//	                    and "for" (a duration such as "2h"; absent: until resumed)
//	POST /admin/resume  {"route": ...} or {"provider": ...}
//	POST /admin/probe   {"route": ...} or {"provider": ...} (probes its first enabled route)
//	POST /admin/check   any body: 200 {"action": "check", "ok": true} when the token is the
//	                    admin token (the status page acknowledges a token as it is typed)
//
// Send the token as "Authorization: Bearer <token>". A pause set here is a
// manual rest (rest.Pause): only a resume lifts it, whatever the
// router sees meanwhile. A probe calls the route with a tiny request; when
// it answers, an automatic rest of the route and its provider is lifted but
// a pause set by hand stays (seed 004: "resumes any that were paused
// automatically, while leaving manual pauses alone"). Resume lifts any
// rest, automatic or manual. The token travels in a header, never a
// cookie, so another site cannot make a browser act on the operator's
// behalf.
//
// Replies are JSON. A pause or resume in effect that could not be saved to
// disk yet (a full disk) answers 200 with a "warning". Errors: 401 missing
// or wrong token, 403 actions off,
// 404 unknown action, route or provider, 405 not POST, 400 a body that
// does not parse, 409 a disabled route or provider, 502 a probe the route
// failed (with its failure class).
package admin

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/state"
)

// Prober calls one route now; *route.Router implements it.
type Prober interface {
	Probe(ctx context.Context, routeID string, maxTokens int) (*route.Attempt, error)
}

// Options configure a Handler. Plan, Store and Prober are required.
type Options struct {
	Plan   *config.Plan
	Store  state.Store
	Prober Prober
	// Token is the admin token; "" turns the actions off.
	Token  string
	Clock  clock.Clock
	Logger *slog.Logger
}

// Handler serves the admin API under /admin/. It is safe for concurrent
// use.
type Handler struct {
	o     Options
	token []byte
}

// New returns a Handler.
func New(o Options) *Handler {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{o: o, token: []byte(o.Token)}
}

// Request is the body of an action.
type Request struct {
	Route    string `json:"route,omitempty"`
	Provider string `json:"provider,omitempty"`
	// Reason is shown on the status page for a pause.
	Reason string `json:"reason,omitempty"`
	// For bounds a pause ("2h"); "" pauses until resumed.
	For string `json:"for,omitempty"`
}

// Reply is the answer to an action.
type Reply struct {
	OK     bool   `json:"ok"`
	Action string `json:"action"`
	// Key is the rest key acted on: a route ID or "provider:<name>".
	Key   rest.Key   `json:"key"`
	Until *time.Time `json:"until,omitempty"`
	// Probe results: the route probed, its outcome class, latency, and the
	// redacted reason of a failure.
	Route     string `json:"route,omitempty"`
	Class     string `json:"class,omitempty"`
	LatencyMS int64  `json:"latency_ms,omitempty"`
	Error     string `json:"error,omitempty"`
	// Warning says that a pause or resume took effect but could not be
	// written to disk yet (state.ErrNotPersisted): it is retried, and a
	// restart before it succeeds would lose it.
	Warning string `json:"warning,omitempty"`
}

const maxReason = 120

// Authorized reports whether r carries the admin token. It is false when
// no token is configured.
func (h *Handler) Authorized(r *http.Request) bool {
	if len(h.token) == 0 {
		return false
	}
	got, ok := caller.Bearer(r.Header.Get("Authorization"))
	return ok && subtle.ConstantTimeCompare([]byte(got), h.token) == 1
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "admin actions are POST requests")
		return
	}
	if len(h.token) == 0 {
		writeError(w, http.StatusForbidden, "admin_off", "admin actions are off: set admin_token in the config to turn them on")
		return
	}
	if !h.Authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tollfree admin"`)
		writeError(w, http.StatusUnauthorized, "invalid_admin_token", "missing or wrong admin token: send Authorization: Bearer <admin_token>")
		return
	}
	action := strings.TrimPrefix(r.URL.Path, "/admin/")
	if action == "check" {
		// The token is the admin token: nothing else to do.
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"action":"check","ok":true}` + "\n"))
		return
	}
	if action != "pause" && action != "resume" && action != "probe" {
		writeError(w, http.StatusNotFound, "unknown_action", "no admin action "+quote(action)+"; use pause, resume, probe or check")
		return
	}
	var req Request
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<10))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", `the body must be JSON such as {"route": "groq/llama-3.3-70b-versatile"} or {"provider": "groq"}`)
		return
	}
	key, status, msg := h.target(req, action)
	if status != 0 {
		code := "not_found"
		if status == http.StatusConflict {
			code = "disabled"
		} else if status == http.StatusBadRequest {
			code = "invalid_target"
		}
		writeError(w, status, code, msg)
		return
	}
	switch action {
	case "pause":
		h.pause(w, r, key, req)
	case "resume":
		h.resume(w, r, key)
	case "probe":
		h.probe(w, r, key)
	}
}

// target checks the route or provider named by req and returns its rest
// key, or an HTTP status and message.
func (h *Handler) target(req Request, action string) (key rest.Key, status int, msg string) {
	p := h.o.Plan
	switch {
	case req.Route != "" && req.Provider != "":
		return rest.Key{}, http.StatusBadRequest, "name a route or a provider, not both"
	case req.Route != "":
		rt := p.Routes[req.Route]
		if rt == nil {
			return rest.Key{}, http.StatusNotFound, "no route " + quote(req.Route) + " in the plan; see /status.json for the routes"
		}
		if action == "probe" && rt.Disabled {
			return rest.Key{}, http.StatusConflict, rt.ID + " is disabled (" + rt.DisabledReason + "); it cannot be probed"
		}
		return rest.RouteKey(rt.ID), 0, ""
	case req.Provider != "":
		pr := p.Providers[req.Provider]
		if pr == nil {
			return rest.Key{}, http.StatusNotFound, "no provider " + quote(req.Provider) + " in the plan; see /status.json for the providers"
		}
		if action == "probe" && pr.Disabled {
			return rest.Key{}, http.StatusConflict, pr.Name + " is disabled (" + pr.DisabledReason + "); it cannot be probed"
		}
		return rest.ProviderKey(pr.Name), 0, ""
	}
	return rest.Key{}, http.StatusBadRequest, `name a "route" or a "provider"`
}

func (h *Handler) pause(w http.ResponseWriter, r *http.Request, key rest.Key, req Request) {
	now := h.o.Clock.Now()
	var until time.Time
	if req.For != "" {
		d, err := time.ParseDuration(req.For)
		if err != nil || d <= 0 {
			writeError(w, http.StatusBadRequest, "invalid_for", `"for" must be a positive duration such as "30m" or "2h"`)
			return
		}
		until = now.Add(d)
	}
	_, err := rest.Pause(r.Context(), h.o.Store, key, now, until, cleanReason(req.Reason))
	rep := Reply{OK: true, Action: "pause", Key: key, Until: timePtr(until)}
	if !h.stored(w, err, &rep) {
		return
	}
	h.o.Logger.Info("admin: paused", "key", key.String(), "until", until)
	writeJSON(w, http.StatusOK, rep)
}

func (h *Handler) resume(w http.ResponseWriter, r *http.Request, key rest.Key) {
	rep := Reply{OK: true, Action: "resume", Key: key}
	if !h.stored(w, rest.Resume(r.Context(), h.o.Store, key), &rep) {
		return
	}
	h.o.Logger.Info("admin: resumed", "key", key.String())
	writeJSON(w, http.StatusOK, rep)
}

// stored sorts the store's answer to a pause or resume. A change that took
// effect but is not on disk yet (state.ErrNotPersisted: a full disk) is a
// success with a warning, since the gateway already acts on it; anything
// else means it did not take effect, answered 503. It reports whether to
// answer rep.
func (h *Handler) stored(w http.ResponseWriter, err error, rep *Reply) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, state.ErrNotPersisted):
		h.o.Logger.Warn("admin: "+rep.Action+" in effect but not yet saved", "key", rep.Key.String(), "err", err)
		rep.Warning = "the " + rep.Action + " is in effect, but saving it to disk failed (see the gateway's log and /healthz); " +
			"the gateway retries every second, and a restart before it succeeds would forget it"
		return true
	}
	h.o.Logger.Warn("admin: "+rep.Action+" failed", "key", rep.Key.String(), "err", err)
	writeError(w, http.StatusServiceUnavailable, "store_unavailable", "the "+rep.Action+" could not be stored: the state store did not answer; try again")
	return false
}

func (h *Handler) probe(w http.ResponseWriter, r *http.Request, key rest.Key) {
	id, _ := key.Route()
	if name, ok := key.Provider(); ok {
		id = ""
		for _, rid := range h.o.Plan.RouteOrder {
			if rt := h.o.Plan.Routes[rid]; rt.Provider.Name == name && !rt.Disabled {
				id = rid
				break
			}
		}
		if id == "" {
			writeError(w, http.StatusConflict, "disabled", "provider "+name+" has no enabled route to probe")
			return
		}
	}
	a, err := h.o.Prober.Probe(r.Context(), id, 8)
	rep := Reply{OK: err == nil, Action: "probe", Key: key, Route: id}
	if err != nil {
		if r.Context().Err() != nil {
			return // the operator went away
		}
		if a != nil {
			rep.Error = a.Error
			if a.Class != failure.OK {
				rep.Class = a.Class.String()
			}
		}
		if rep.Error == "" {
			rep.Error = "the probe failed without an answer (budget spent or the deadline passed)"
		}
		h.o.Logger.Info("admin: probe failed", "route", id, "reason", rep.Error)
		writeJSON(w, http.StatusBadGateway, rep)
		return
	}
	rep.Class, rep.LatencyMS = a.Class.String(), a.Latency.Milliseconds()
	h.o.Logger.Info("admin: probe answered", "route", id, "latency", a.Latency)
	writeJSON(w, http.StatusOK, rep)
}

// cleanReason keeps printable characters of an operator's reason, at most
// maxReason of them.
func cleanReason(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.TrimSpace(s))
	if rs := []rune(s); len(rs) > maxReason {
		s = string(rs[:maxReason])
	}
	return s
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}
