package tollfree

// GateLoad reports how many requests g's gate has in, and how many wait,
// for the tests of package tollfree_test: a turn that leaked would show.
func GateLoad(g *Gateway) (in, waiting int) { return g.gate.Load() }
