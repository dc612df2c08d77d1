package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Patterns (issue 35): a chain may opt in to the free models a provider
// lists with a route pattern, "openrouter/*:free": a glob over the model
// ids of the provider's list as package discover last read it, where *
// stands for any run of characters, / included. Nothing else is ever
// added to a chain: a free model shows up in free_unused until a chain
// names it or a pattern of a chain matches it.
//
// Compile keeps the pattern (Chain.Patterns) and gives the chain no route
// for it: before a list is read, a pattern expands to nothing, and a chain
// of patterns alone answers as a chain with no route enabled would (its
// fallback). Expand returns the plan with each pattern replaced by the
// routes it matches, for the gateway to serve instead, and is called
// again whenever a list is read: a model that turned paid or left the
// list drops out, a new free one comes in.
//
// A listed model matches a pattern when its id matches the glob, the
// provider's preset accepts it as a route (its catalog, or OpenRouter's
// any id ending in :free), and, where the list gives prices (OpenRouter),
// both its prompt and completion prices are 0. The routes a pattern
// expands to take its place in the chain, ordered by context length,
// largest first (the list's context_length, else the preset's
// max_context; ties by id); a route the chain names itself is not
// repeated.

// Listed is a model a provider's list offers, as package discover reads
// it.
type Listed struct {
	ID string
	// Context is the context length the list gives; 0 when it gives none.
	Context int
	// Priced is set when the list gives the model's prices; Free, when
	// both are 0.
	Priced, Free bool
}

// IsPattern reports whether a route as written is a pattern: its model
// holds a *.
func IsPattern(route string) bool {
	_, model, _ := strings.Cut(strings.TrimSpace(route), "/")
	return strings.Contains(model, "*")
}

// globMatch reports whether s matches pattern, where * is any run of
// characters (none included) and everything else is itself.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// PatternNote is what `check` says of a route pattern: "openrouter/*:free:
// expanded at serve time from openrouter's model list".
func PatternNote(pattern string) string {
	prov, _, _ := strings.Cut(pattern, "/")
	return pattern + ": expanded at serve time from " + prov + "'s model list"
}

// HasPatterns reports whether a chain of the plan has a route pattern.
func (p *Plan) HasPatterns() bool {
	for _, ch := range p.Chains {
		if len(ch.Patterns) > 0 {
			return true
		}
	}
	return false
}

// Expansion returns, by chain, the routes its patterns expand to in this
// plan, in the chain's order; nil when none.
func (p *Plan) Expansion() map[string][]string { return p.expansion }

// Expand returns the plan with each chain's patterns replaced by the
// routes they match in lists (by provider), and whether that differs
// from what p's patterns expand to; p itself when it does not. A provider
// with no list gives its patterns nothing. p is not changed.
func (p *Plan) Expand(lists map[string][]Listed) (*Plan, bool) {
	if p.base == nil || !p.HasPatterns() {
		return p, false
	}
	l := p.base
	exp := map[string][]string{}
	chains := map[string]*ChainConfig{}
	for _, name := range p.ChainOrder {
		c := l.f.Chains[name]
		if c == nil || len(p.Chains[name].Patterns) == 0 {
			continue
		}
		cc := *c
		cc.Routes = nil
		named := map[string]bool{}
		for _, ref := range c.Routes {
			if !IsPattern(ref.Route) {
				named[strings.TrimSpace(ref.Route)] = true
			}
		}
		for _, ref := range c.Routes {
			if !IsPattern(ref.Route) {
				cc.Routes = append(cc.Routes, ref)
				continue
			}
			for _, id := range l.matches(strings.TrimSpace(ref.Route), lists) {
				if named[id] {
					continue
				}
				named[id] = true
				// A pattern's rank, when it has one, is each of its routes'.
				cc.Routes = append(cc.Routes, RouteRef{Route: id, Rank: ref.Rank})
				exp[name] = append(exp[name], id)
			}
		}
		chains[name] = &cc
	}
	if sameExpansion(exp, p.expansion) {
		return p, false
	}
	np := *p
	np.Routes, np.RouteOrder, np.Chains = map[string]*Route{}, nil, map[string]*Chain{}
	for _, name := range p.ChainOrder {
		c := chains[name]
		if c == nil {
			c = l.f.Chains[name]
		}
		ch := l.compileChain(&np, name, c)
		ch.Patterns = p.Chains[name].Patterns
		np.Chains[name] = ch
	}
	np.RouteChains = l.routeChains(&np)
	np.expansion = exp
	return &np, true
}

func sameExpansion(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// matches returns the route ids the pattern ("openrouter/*:free")
// matches in its provider's list, largest context first.
func (l *loader) matches(pattern string, lists map[string][]Listed) []string {
	prov, glob, _ := strings.Cut(pattern, "/")
	type match struct {
		id  string
		ctx int
	}
	var found []match
	for _, m := range lists[prov] {
		if m.Priced && !m.Free || !globMatch(glob, m.ID) {
			continue
		}
		id := prov + "/" + m.ID
		if IsPattern(id) {
			continue // a listed id holding a * would expand again
		}
		_, spec, msg := l.lookupRoute(id)
		if msg != "" || spec.embedding {
			continue
		}
		ctx := m.Context
		if ctx == 0 {
			ctx = spec.maxContext
		}
		found = append(found, match{id, ctx})
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].ctx != found[j].ctx {
			return found[i].ctx > found[j].ctx
		}
		return found[i].id < found[j].id
	})
	out := make([]string, len(found))
	for i, m := range found {
		out[i] = m.id
	}
	return out
}

// checkPattern says what is wrong with a route pattern of chain c, if
// anything: its provider must be configured, and the chain must not ask
// for one model (same_model) or be a role's.
func (l *loader) checkPattern(pattern string, c *ChainConfig) string {
	prov, _, ok := strings.Cut(pattern, "/")
	if !ok || prov == "" {
		return fmt.Sprintf("pattern %q is not provider/glob (write, say, openrouter/*:free)", pattern)
	}
	if _, ok := l.provs[prov]; !ok {
		names := slices.Clone(l.provOrder)
		sort.Strings(names)
		return fmt.Sprintf("unknown provider %q in pattern %q; providers are: %s", prov, pattern, quoteList(names))
	}
	if c.SameModel {
		return fmt.Sprintf("same_model chain: pattern %q may match many models; name the routes instead", pattern)
	}
	return ""
}
