package httpapi

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// This file is /readyz (issue 17): whether this instance should be sent
// requests, for a load balancer, an orchestrator or the container's
// HEALTHCHECK. /healthz says the process is alive and answers 200 as long
// as it does; /readyz answers 503 when sending it requests is pointless:
// no route of any chain is enabled (every answer would be a fallback), the
// gateway is shutting down (Drain), or it is saturated: every connection
// it takes is serving a request (LimitListener). A chain without routes, a state
// store carrying on locally while Redis is away, or content that cannot be
// read leave it ready but "degraded": it serves, and restarting it or
// taking it out of the pool would not help.

// readiness is /readyz's body.
type readiness struct {
	// Ready is true when the status is 200.
	Ready bool `json:"ready"`
	// Status is ok, degraded, no route enabled, saturated or shutting
	// down.
	Status string `json:"status"`
	// Reason says what is degraded or missing, and how to fix it.
	Reason string `json:"reason,omitempty"`
	// Config is "loaded": a gateway without a valid config does not start.
	Config string `json:"config"`
	// Chains are the routes enabled per chain.
	Chains map[string]chainReady `json:"chains"`
	// Checks are /healthz's lines: the state store, the call log, the
	// state files, each chain's content.
	Checks map[string]string `json:"checks,omitempty"`
	// Connections are the client connections held, when capped
	// (LimitListener).
	Connections *connLoad `json:"connections,omitempty"`
}

// connLoad is the connections held and the cap.
type connLoad struct {
	Open int `json:"open"`
	Max  int `json:"max"`
}

type chainReady struct {
	Enabled int `json:"enabled"`
	Routes  int `json:"routes"`
}

// Drain marks the server as shutting down: /readyz answers 503 from now
// on, so that load balancers send new requests elsewhere, while every
// other endpoint keeps serving until the HTTP server itself stops. Safe
// for concurrent use.
func (s *Server) Drain() { s.draining.Store(true) }

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	rd := readiness{Status: "ok", Config: "loaded", Chains: make(map[string]chainReady)}
	enabled := 0
	var why []string
	for _, c := range s.plan.Readiness() {
		rd.Chains[c.Chain] = chainReady{Enabled: c.Enabled, Routes: c.Total}
		enabled += c.Enabled
		if c.Enabled == 0 && c.Total > 0 {
			why = append(why, c.String())
		}
	}
	if s.health != nil {
		rd.Checks = s.health()
		for _, k := range slices.Sorted(maps.Keys(rd.Checks)) {
			if failing(rd.Checks[k]) {
				why = append(why, k+": "+rd.Checks[k])
			}
		}
	}
	saturated := false
	if l, ok := r.Context().Value(connLoadKey{}).(*limitListener); ok {
		var cl connLoad
		cl.Open, cl.Max, saturated = l.saturated()
		rd.Connections = &cl
	}
	switch {
	case s.draining.Load():
		rd.Status, why = "shutting down", []string{"the gateway is stopping: requests in flight finish, new ones should go to another instance"}
	case enabled == 0:
		rd.Status = "no route enabled"
	case saturated:
		// Issue 32: one client held every connection and /readyz said
		// 200; a load balancer should send new clients elsewhere.
		rd.Status = "saturated"
		why = append(why, "every connection the gateway takes (server.max_connections) is serving a request; new ones get 503 too_many_connections")
	case len(why) > 0:
		rd.Status = "degraded"
	}
	rd.Ready = rd.Status == "ok" || rd.Status == "degraded"
	rd.Reason = strings.Join(why, "; ")
	b, _ := json.Marshal(rd)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !rd.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	w.Write(b)
}

// failing reports whether a /healthz line says something is not working
// (the words health.go, content.go and cmd/tollfree's store lines use).
func failing(line string) bool {
	for _, p := range []string{"failing", "unavailable", "stale", "local ("} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}
