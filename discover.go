package tollfree

import (
	"context"
	"net/http"
	"time"

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
	g.discovery = discover.New(discover.Options{Plan: o.Plan, Store: g.store, Client: client, Clock: o.Clock, Logger: o.Logger, Every: o.DiscoverEvery})
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
