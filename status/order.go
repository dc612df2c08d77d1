package status

import (
	"cmp"
	"slices"
)

// urgency ranks a state for the page: lower needs a look sooner. A chain
// down comes with the failing routes, a degraded one with the resting.
func urgency(state string) int {
	switch state {
	case Failing, ChainDown:
		return 0
	case Resting, Gone, Exhausted, ChainDegraded:
		return 1
	case Partly:
		return 2
	case Paused:
		return 3
	case Ready: // also ChainReady
		return 4
	}
	return 5 // Disabled
}

// byUrgency returns a copy of xs sorted by the urgency of their state,
// keeping the given order within a rank.
func byUrgency[T any](xs []T, state func(*T) string) []T {
	out := slices.Clone(xs)
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(urgency(state(&a)), urgency(state(&b))) })
	return out
}

// RoutesByUrgency lists the routes failing first, then resting and
// exhausted, paused, ready, and disabled last, each group in the plan's
// order.
func (s *Snapshot) RoutesByUrgency() []Route {
	return byUrgency(s.Routes, func(r *Route) string { return r.State })
}

// ChainsByUrgency lists the chains down first, then degraded, then ready,
// each group in the plan's order.
func (s *Snapshot) ChainsByUrgency() []Chain {
	return byUrgency(s.Chains, func(c *Chain) string { return c.State })
}

// ProvidersByUrgency lists the providers as RoutesByUrgency the routes,
// those partly ready between the resting and the paused.
func (s *Snapshot) ProvidersByUrgency() []Provider {
	return byUrgency(s.Providers, func(p *Provider) string { return p.State })
}
