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
	r := ChainReadiness{Chain: c.Name, Total: len(c.Routes)}
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
	if r.Enabled == 0 {
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
