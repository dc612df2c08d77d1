package config

import (
	"errors"
	"fmt"
	"strings"
)

// ChainReadiness is how many of a chain's routes can be called, and what
// would enable the others (issue 16: a gateway whose keys are all unset
// used to say "listening" and answer every request with its fallback).
type ChainReadiness struct {
	Chain   string
	Enabled int
	Total   int
	// Fixes say what enables the disabled routes, one per distinct reason,
	// in route order: "set GEMINI_API_KEY (gemini/gemini-2.5-flash)".
	Fixes []string
	// Loud is set when the chain's fallback is the built-in defaults'
	// (Fallback.Implied): with no route enabled, a request gets a 503
	// no_route_enabled, not the fallback.
	Loud bool
}

// Readiness returns every chain's ChainReadiness, in config order.
func (p *Plan) Readiness() []ChainReadiness {
	out := make([]ChainReadiness, 0, len(p.ChainOrder))
	for _, name := range p.ChainOrder {
		out = append(out, chainReadiness(p.Chains[name]))
	}
	return out
}

func chainReadiness(c *Chain) ChainReadiness {
	r := ChainReadiness{Chain: c.Name, Total: len(c.Routes), Loud: c.Fallback.Implied}
	var reasons []string
	byReason := map[string][]string{}
	for _, rt := range c.Routes {
		if !rt.Disabled {
			r.Enabled++
			continue
		}
		if _, ok := byReason[rt.DisabledReason]; !ok {
			reasons = append(reasons, rt.DisabledReason)
		}
		byReason[rt.DisabledReason] = append(byReason[rt.DisabledReason], rt.ID)
	}
	var sets []string
	for _, reason := range reasons {
		ids := byReason[reason]
		what := ids[0]
		if len(ids) > 1 {
			prov, _, _ := strings.Cut(ids[0], "/")
			what = fmt.Sprintf("%s: %d routes", prov, len(ids))
		}
		// "no key: set GEMINI_API_KEY" and "no base URL: set X" both
		// come down to a variable to set; they share one "set" list.
		_, fix, _ := strings.Cut(reason, ": ")
		if v, ok := strings.CutPrefix(fix, "set "); ok {
			sets = append(sets, v+" ("+what+")")
			continue
		}
		if fix == "" {
			fix = reason
		}
		r.Fixes = append(r.Fixes, fix+" ("+what+")")
	}
	if len(sets) > 0 {
		r.Fixes = append([]string{"set " + strings.Join(sets, ", ")}, r.Fixes...)
	}
	if r.Enabled == 0 {
		for _, pat := range c.Patterns {
			r.Fixes = append(r.Fixes, PatternNote(pat))
		}
	}
	return r
}

// String is the line `tollfree check` and `serve` print: "chain answer: 1
// of 3 routes enabled; set GEMINI_API_KEY (gemini/gemini-2.5-flash),
// CEREBRAS_API_KEY (cerebras/llama3.1-8b)".
func (r ChainReadiness) String() string {
	noun := "routes"
	if r.Total == 1 {
		noun = "route"
	}
	s := fmt.Sprintf("chain %s: %d of %d %s enabled", r.Chain, r.Enabled, r.Total, noun)
	switch {
	case r.Enabled == 0 && r.Loud:
		s += ", so every request gets a 503 no_route_enabled"
	case r.Enabled == 0:
		s += ", so every request gets its fallback"
	}
	if len(r.Fixes) > 0 {
		s += "; " + strings.Join(r.Fixes, "; ")
	}
	return s
}

// ErrNoChains is wrapped by Serves's error: a plan with no chains answers
// nothing.
var ErrNoChains = errors.New("the config has no chains, so the gateway would answer nothing")

// Serves reports an error wrapping ErrNoChains when the plan, read from
// the config named name, has no chain. Parse accepts such a plan (a
// library user may add nothing but keys); `tollfree check` and `serve`
// refuse it (issue 16: an empty file used to pass check and serve only
// 404s).
func (p *Plan) Serves(name string) error {
	if len(p.ChainOrder) > 0 {
		return nil
	}
	return fmt.Errorf("%s: %w; add one, say\n\n  providers:\n    groq: {}          # key from GROQ_API_KEY\n  chains:\n    answer:\n      routes: [groq/llama-3.3-70b-versatile]\n\nor start from examples/tollfree.yaml", name, ErrNoChains)
}

// NoRouteEnabledError is a request to a chain with no route enabled (no
// key set for any of them) whose fallback the config did not ask for
// (Fallback.Implied): answered 503 no_route_enabled, naming what to set.
type NoRouteEnabledError struct {
	Chain string
	// Fixes are the chain's ChainReadiness.Fixes.
	Fixes []string
}

func (e *NoRouteEnabledError) Error() string {
	s := "chain " + e.Chain + " has no route enabled, so nothing can answer"
	if len(e.Fixes) > 0 {
		s += "; " + strings.Join(e.Fixes, "; ")
	}
	return s + " (tollfree check lists every route and why it is off)"
}

// NoRouteEnabled returns the error a request to c gets when no route of c
// is enabled and its fallback is the built-in defaults' (Implied); nil
// otherwise.
func NoRouteEnabled(c *Chain) *NoRouteEnabledError {
	if !c.Fallback.Implied {
		return nil
	}
	r := chainReadiness(c)
	if r.Enabled > 0 {
		return nil
	}
	return &NoRouteEnabledError{Chain: c.Name, Fixes: r.Fixes}
}
