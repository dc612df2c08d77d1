package tollfree

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/discover"
)

// startDiscovery starts reading the providers' model lists when the
// options ask for it (Options.DiscoverEvery): at once, then every period,
// until Close.
func (g *Gateway) startDiscovery(o *Options) {
	if o.DiscoverEvery <= 0 {
		return
	}
	client := &http.Client{Timeout: 20 * time.Second}
	if o.HTTPClient != nil {
		client.Transport = o.HTTPClient.Transport
	}
	do := discover.Options{Plan: o.Plan, Store: g.store, Client: client, Clock: o.Clock, Logger: o.Logger, Every: o.DiscoverEvery}
	if o.Replan != nil && o.Plan.HasPatterns() {
		do.AfterRefresh = func(ctx context.Context) { g.expand(ctx, o.Replan) }
	}
	g.discovery = discover.New(do)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.discovery.Run(ctx)
	}()
	g.stopDiscovery = func() {
		cancel()
		<-done
	}
}

// ModelLists returns what the last reads of the providers' model lists
// found, by provider; nil when the gateway reads none.
func (g *Gateway) ModelLists(ctx context.Context) map[string]discover.Finding {
	if g.discovery == nil {
		return nil
	}
	return g.discovery.Findings(ctx)
}

// freeUnused is, by provider, the free models its list offers that no
// chain uses (status.Options.FreeModels); nil when no list is read.
func (g *Gateway) freeUnused(ctx context.Context) map[string][]string {
	var out map[string][]string
	for name, f := range g.ModelLists(ctx) {
		if ids := f.FreeUnused(g.plan, name); len(ids) > 0 {
			if out == nil {
				out = map[string][]string{}
			}
			out[name] = ids
		}
	}
	return out
}

// expand hands replan the plan whose chains' patterns are expanded from
// the lists just read, when that differs from the gateway's.
func (g *Gateway) expand(ctx context.Context, replan func(*config.Plan)) {
	p, changed := g.plan.Expand(discover.Lists(g.discovery.Findings(ctx)))
	if !changed {
		return
	}
	for _, name := range p.ChainOrder {
		if ids, was := p.Expansion()[name], g.plan.Expansion()[name]; !slices.Equal(ids, was) {
			g.logger.Info("chain's route patterns expanded again from the providers' model lists", "chain", name,
				"patterns", strings.Join(p.Chains[name].Patterns, ", "), "routes", strings.Join(ids, ", "), "were", strings.Join(was, ", "))
		}
	}
	replan(p)
}
