package quota

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tollfree/tollfree/config"
)

// What the providers say (issue 35): a limit a provider's rate-limit
// headers report unlike the one configured (or its preset's), with the
// date it first said so. The learned value is the one in force, as ever
// (Book.limit); this only tells the operator, on the status page and in
// `tollfree doctor`, that the catalog is out of date.

// LimitSaid is one limit a provider reports unlike the configuration.
type LimitSaid struct {
	// Route is the route ID, or the provider's name for an account-wide
	// limit.
	Route string
	// Window is the limit's name: "rpm", "rpd", "tpm", "tpd".
	Window string
	// Configured is the limit configured, 0 for none; FromPreset says it
	// is the preset's own figure.
	Configured int64
	FromPreset bool
	// Said is what the provider's headers report, first on Since.
	Said  int64
	Since time.Time
}

// String is the line shown: "groq/llama-3.3-70b-versatile: preset rpd
// 1000, provider says 500 since 2026-12-03".
func (l LimitSaid) String() string {
	conf := "no " + l.Window + " configured"
	if l.Configured > 0 {
		word := "configured"
		if l.FromPreset {
			word = "preset"
		}
		conf = fmt.Sprintf("%s %s %d", word, l.Window, l.Configured)
	}
	return fmt.Sprintf("%s: %s, provider says %d since %s", l.Route, conf, l.Said, l.Since.UTC().Format(time.DateOnly))
}

// Said returns the limits the providers' headers report unlike the plan's,
// as known now (learned within the last day here or by another instance
// sharing the store), sorted by route and window.
func (b *Book) Said(p *config.Plan, now time.Time) []LimitSaid {
	b.mu.Lock()
	learned := make(map[learnKey]learnedLimit, len(b.learned))
	for k, l := range b.learned {
		learned[k] = l
	}
	b.mu.Unlock()
	var out []LimitSaid
	for k, l := range learned {
		if now.Sub(l.seen) >= learnTTL || l.limit <= 0 {
			continue
		}
		route, limits, preset, ok := saidScope(p, k.scope)
		if !ok {
			continue
		}
		conf := limitOf(limits, k.k)
		if conf == l.limit {
			continue
		}
		since := l.since
		if since.IsZero() {
			since = l.seen
		}
		out = append(out, LimitSaid{Route: route, Window: k.k.String(), Configured: conf,
			FromPreset: conf > 0 && limitOf(preset, k.k) == conf, Said: l.limit, Since: since})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Route != out[j].Route {
			return out[i].Route < out[j].Route
		}
		return out[i].Window < out[j].Window
	})
	return out
}

// saidScope finds a learned limit's scope in the plan: a route ID, or a
// provider's rest key ("provider:groq"); with its configured limits and
// its preset's.
func saidScope(p *config.Plan, scope string) (name string, limits, preset config.Limits, ok bool) {
	if prov, isProv := strings.CutPrefix(scope, "provider:"); isProv {
		pr := p.Providers[prov]
		if pr == nil {
			return "", config.Limits{}, config.Limits{}, false
		}
		if ps, found := config.LookupPreset(pr.Preset); found {
			preset = ps.Limits
		}
		return prov, pr.Limits, preset, true
	}
	r := p.Routes[scope]
	if r == nil {
		return "", config.Limits{}, config.Limits{}, false
	}
	if ps, found := config.LookupPreset(r.Provider.Preset); found {
		if m, ok := ps.Model(r.Model); ok {
			preset = m.Limits
		}
	}
	return scope, r.Limits, preset, true
}
