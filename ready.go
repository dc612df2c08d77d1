package tollfree

// Drain marks the gateway as shutting down: its /readyz answers 503 from
// now on, so that a load balancer sends new requests to another instance,
// while requests keep being served until the HTTP server stops. Call it
// before http.Server.Shutdown (cmd/tollfree does, on SIGTERM). Safe for
// concurrent use.
func (g *Gateway) Drain() { g.handler.Drain() }

// Load reports how many requests the gateway is working on (at most
// server.max_requests) and how many wait for a turn (at most
// server.queue_length): a program's own health check can read it, and a
// gateway with every request ended holds 0 and 0. Safe for concurrent use.
func (g *Gateway) Load() (in, waiting int) { return g.check.Load() }
