package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/config"
)

// The owned_by of /v1/models' entries: a chain's says it is the gateway's;
// a route's is its provider's name (issue 16).
const ownedByChain = "tollfree chain"

// lookupModel returns the chain a request's model names: a chain, or a
// route as a chain of one (config.Plan.Model). Otherwise it answers the
// request itself, naming what to send instead, and returns nil.
func (s *Server) lookupModel(w http.ResponseWriter, model string, who caller.Identity) *config.Chain {
	if ch := s.plan.Model(model); ch != nil {
		return ch
	}
	chains := chainList(s.plan, who)
	if model == "" {
		writeError(w, http.StatusBadRequest, `the request has no "model": name a chain (`+chains+`) or a route (provider/model, listed by GET /v1/models)`, "invalid_request_error", "model", "model_not_found")
		return nil
	}
	q := strconv.Quote(model)
	if rc := s.plan.RouteChains[model]; rc != nil && who.Chains == nil {
		r := rc.Routes[0]
		writeError(w, http.StatusBadRequest, "the route "+q+" is not enabled on this gateway ("+r.DisabledReason+" where the gateway runs, then restart it); use a chain ("+chains+") or an enabled route (GET /v1/models)", "invalid_request_error", "model", "model_not_enabled")
		return nil
	}
	hint := ""
	if m := s.plan.SuggestModel(model); m != "" && (who.Chains == nil || who.Allows(m)) {
		hint = " (did you mean " + strconv.Quote(m) + "?)"
	}
	writeError(w, http.StatusNotFound, "the model "+q+" names no chain or route of this gateway"+hint+"; use a chain ("+chains+") or a route (provider/model) listed by GET /v1/models", "invalid_request_error", "model", "model_not_found")
	return nil
}

// models lists the chains the caller may use, then, for a caller not
// bound to a list of chains, every enabled route it may name instead.
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET")
		return
	}
	who, ok := s.identify(w, r)
	if !ok {
		return
	}
	b := []byte(`{"object":"list","data":[`)
	n := 0
	entry := func(id, owner string) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `{"id":`...)
		b = strconv.AppendQuote(b, id)
		b = append(b, `,"object":"model","created":0,"owned_by":`...)
		b = strconv.AppendQuote(b, owner)
		b = append(b, '}')
	}
	for _, name := range s.plan.ChainOrder {
		if who.Allows(name) { // a key sees the chains it may use
			entry(name, ownedByChain)
		}
	}
	for _, id := range s.plan.RouteOrder {
		if ch := s.plan.RouteChains[id]; ch != nil && !ch.Routes[0].Disabled && who.Allows(id) {
			entry(id, ch.Routes[0].Provider.Name)
		}
	}
	b = append(b, "]}"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// root answers GET /: a browser is sent to the status page, when this
// server has one; any other client gets a small JSON index of the API.
// Any other path is a 404 naming the endpoints.
func (s *Server) root(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path+"; this gateway serves POST /v1/chat/completions and GET /v1/models", "invalid_request_error", "", "not_found")
		return
	}
	if s.hasStatus && strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Redirect(w, r, "/status", http.StatusFound)
		return
	}
	b := []byte(`{"object":"tollfree","api":"/v1","chat":"/v1/chat/completions","models":"/v1/models","health":"/healthz"`)
	if s.hasStatus {
		b = append(b, `,"status":"/status"`...)
	}
	b = append(b, '}')
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// healthStatus is /healthz's "status": "ok", or "degraded" with the
// reason when a chain has no route it can call (issue 16: every request
// would get its fallback). /healthz still answers 200: the gateway is up
// and answering, and restarting it would not help.
func healthStatus(p *config.Plan) (status, reason string) {
	var why []string
	for _, r := range p.Readiness() {
		if r.Enabled == 0 && r.Total > 0 {
			why = append(why, r.String())
		}
	}
	if len(why) == 0 {
		return "ok", ""
	}
	return "degraded", strings.Join(why, "; ")
}
