package emulator

import (
	"io"
	"math/rand/v2"
	"net"
	"net/http"
)

// The faults below the HTTP layer, which a provider's own error bodies
// never show: what a chaos run throws at a gateway besides the flavors'
// real errors (issue 10).
const (
	// ConnReset accepts the request, waits the model's latency, and resets the
	// TCP connection (an RST, not a FIN): the client reads "connection
	// reset by peer" instead of a status. Streamed with Step.After above
	// zero, it sends that many content chunks first, then resets.
	ConnReset Kind = "conn_reset"
	// Garbage answers 200 with bytes that are neither JSON nor events,
	// under the content type the client asked for (text/event-stream for a
	// stream), and ends cleanly.
	Garbage Kind = "garbage"
)

// Mix is a standing random behaviour for a route: each call that reaches
// the model draws one of Steps, with a chance proportional to its Weight,
// from a generator seeded with Seed, so that a route's sequence of
// behaviours is the same on every run (which request meets which depends
// on the order the calls arrive in).
type Mix struct {
	Seed  uint64
	Steps []Weighted
}

// Weighted is one step of a Mix and its weight (0 never draws it).
type Weighted struct {
	Weight int
	Step   Step
}

// mixer draws a Mix's steps; guarded by Emulator.mu.
type mixer struct {
	rng   *rand.Rand
	steps []Weighted
	total int
}

func (m *mixer) draw() Step {
	n := m.rng.IntN(m.total)
	for _, w := range m.steps {
		if n < w.Weight {
			return w.Step
		}
		n -= max(w.Weight, 0)
	}
	return Step{Kind: Answer} // unreachable: n < total
}

// SetMix gives a route a random behaviour when no step is queued: it
// replaces the route's default until SetMix is called with no steps. It
// panics for a route that was not added or for negative weights: those are
// mistakes in the calling code.
func (e *Emulator) SetMix(providerName, modelID string, m Mix) {
	total := 0
	for _, w := range m.Steps {
		if w.Weight < 0 {
			panic("emulator: negative weight in a mix")
		}
		total += w.Weight
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	md := e.mustModel(providerName, modelID)
	md.mix = nil
	if total > 0 {
		md.mix = &mixer{rng: rand.New(rand.NewPCG(m.Seed, m.Seed^0x9e3779b97f4a7c15)),
			steps: append([]Weighted(nil), m.Steps...), total: total}
	}
}

// runChaos answers the kinds of this file and reports whether c was one;
// stream streams an answer in the call's dialect, for a ConnReset that comes
// after some chunks.
func (e *Emulator) runChaos(w http.ResponseWriter, c *call, stream func() int) (status int, ok bool) {
	switch c.kind {
	case ConnReset:
		if c.stream && c.step.After > 0 {
			return stream(), true
		}
		resetConn(w)
		return 0, true
	case Garbage:
		return writeGarbage(w, c), true
	}
	return 0, false
}

// resetConn takes the connection over and closes it with an RST. Bytes
// already written are flushed first (a stream's chunks).
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // no TCP to reset (HTTP/2): drop the stream
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close sends an RST, not a FIN
	}
	_ = conn.Close()
}

// writeGarbage answers 200 with junk under the content type asked for.
func writeGarbage(w http.ResponseWriter, c *call) int {
	ct := "application/json"
	if c.stream {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	junk := garbageBytes(uint64(c.seq), 200)
	if !c.stream {
		w.Write(junk)
		return http.StatusOK
	}
	io.WriteString(w, "data: ")
	w.Write(junk)
	io.WriteString(w, "\n\n"+garbageEvent+"\n\n: \x00\xff\n\ndata: {\"choices\":[{\"delta\":\n\n")
	flush(w)
	return http.StatusOK
}

// garbageBytes is n bytes of deterministic junk without a newline or a
// '{' (so that it can never read as a line of JSON).
func garbageBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908))
	b := make([]byte, n)
	for i := range b {
		v := byte(r.UintN(256))
		if v == '\n' || v == '\r' || v == '{' {
			v = '#'
		}
		b[i] = v
	}
	return b
}
