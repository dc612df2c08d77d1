package config

// Routes as models (issue 16): a client may name a route
// ("groq/llama-3.3-70b-versatile") as its request's model, as LiteLLM
// users expect. The gateway serves it as a chain of that one route, with a
// chain's defaults (attempt timeout, deadline, no hedging, an error for a
// fallback), so the gateway's rests, budgets and caller limits apply to
// it as to any chain. Compile builds these chains once, with the plan: a
// request only looks one up.

// routeChains builds the chain of one of every route of p that no chain
// hides (hide_route: naming the route as a model would tell a caller what
// the chain keeps hidden).
func (l *loader) routeChains(p *Plan) map[string]*Chain {
	hidden := map[string]bool{}
	for _, name := range p.ChainOrder {
		if ch := p.Chains[name]; ch.HideRoute {
			for _, r := range ch.Routes {
				hidden[r.ID] = true
			}
		}
	}
	out := make(map[string]*Chain, len(p.RouteOrder))
	for _, id := range p.RouteOrder {
		if hidden[id] || p.Chains[id] != nil {
			continue // a chain of that name wins
		}
		c := &ChainConfig{Routes: []RouteRef{{Route: id}}}
		chainDefaults(c)
		ch := l.compileChain(p, id, c)
		ch.Callers = CallerLimits{} // a chain's own caller limits are by name; a route has none
		out[id] = ch
	}
	return out
}

// Model returns the chain a request's model names: a chain, or an
// enabled route served as a chain of one. It returns nil when the name is
// neither, or names a disabled route (see Route).
func (p *Plan) Model(name string) *Chain {
	if ch := p.Chains[name]; ch != nil {
		return ch
	}
	if ch := p.RouteChains[name]; ch != nil && !ch.Routes[0].Disabled {
		return ch
	}
	return nil
}

// SuggestModel returns the chain or route a mistyped model most likely
// meant ("groq/llama-3.3-70b-versatile" for "groq/llama-3.3-70b"), or "".
func (p *Plan) SuggestModel(name string) string {
	valid := append([]string(nil), p.ChainOrder...)
	for _, id := range p.RouteOrder {
		if ch := p.RouteChains[id]; ch != nil && !ch.Routes[0].Disabled {
			valid = append(valid, id)
		}
	}
	s, _ := closest(name, valid)
	return s
}
