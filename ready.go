package tollfree

// Drain marks the gateway as shutting down: its /readyz answers 503 from
// now on, so that a load balancer sends new requests to another instance,
// while requests keep being served until the HTTP server stops. Call it
// before http.Server.Shutdown (cmd/tollfree does, on SIGTERM). Safe for
// concurrent use.
func (g *Gateway) Drain() { g.handler.Drain() }
