package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/tollfree/tollfree/config"
)

// The connections a server holds are shared fairly (issue 10: nothing
// capped them; issue 32: one client holding 300 idle connections locked
// everyone else out, and a connection past the cap was closed unanswered).
//
//   - All together they are capped (ConnLimits.Max), and so are those of
//     one client address (ConnLimits.PerAddress, IPv6 by /64), except a
//     trusted proxy's, whose connections carry many clients.
//   - When a new connection finds its address's cap or the whole cap
//     reached, the connection idle longest is closed for it (of its own
//     address, or any): a keep-alive connection waiting for a next request,
//     or one that has sent no request yet, idle for at least MinIdle. An
//     HTTP client expects an idle connection to be closed at any time and
//     opens another.
//   - Only when none is idle is the new connection refused, and it is
//     answered, never reset: its request is read for up to overflowTimeout
//     and answered 503 too_many_connections with Retry-After (GET /healthz
//     and /readyz with the server's handler), then its side is closed and
//     what the client still sends is read off before the socket closes,
//     so that the kernel sends no reset over the answer.
//   - /readyz reads the load from the request's context (ConnContext) and
//     answers 503 "saturated" when every slot is serving a request.

// The refusals' bounds: a connection over the cap gets overflowTimeout to
// send its request and be answered, and at most overflowConns are being
// answered at once; past that one is closed at once (it has sent nothing
// yet, or the flood is beyond answering).
const (
	overflowTimeout = time.Second
	overflowConns   = 1024
	overflowDrain   = 64 << 10
)

// ConnLimits bound the client connections a server holds (LimitListener).
type ConnLimits struct {
	// Max caps them all together; 0 or less: no cap at all.
	Max int
	// PerAddress caps those of one client address (IPv6 by /64); 0 or
	// less, or Max and more: no cap but Max.
	PerAddress int
	// Exempt are the addresses not capped per address: trusted proxies.
	Exempt []netip.Prefix
	// MinIdle is how long a connection must have been idle (or waiting
	// for its first request) to be closed for a new one.
	MinIdle time.Duration
}

// ConnLimitsOf returns the connection limits of plan p: its
// server.max_connections and max_connections_per_address, its trusted
// proxies exempt, and an idle connection reclaimed after 1s.
func ConnLimitsOf(p *config.Plan) ConnLimits {
	return ConnLimits{Max: p.Server.MaxConnections, PerAddress: p.Server.MaxConnectionsPerAddress,
		Exempt: p.ClientAddress.TrustedProxies, MinIdle: time.Second}
}

// LimitListener returns l holding at most lim's connections for srv, as
// the file's comment says. It chains srv.ConnState (to know which
// connections are idle) and srv.ConnContext (for /readyz), and answers
// GET /healthz and /readyz over the cap with srv.Handler: call it before
// srv serves. Closing the returned listener waits for the refusals in
// progress. With lim.Max 0 or less, l is returned as it is.
func LimitListener(l net.Listener, lim ConnLimits, srv *http.Server) net.Listener {
	if lim.Max <= 0 {
		return l
	}
	if lim.PerAddress <= 0 || lim.PerAddress > lim.Max {
		lim.PerAddress = lim.Max
	}
	ll := &limitListener{
		Listener: l, lim: lim, h: srv.Handler,
		byAddr:   make(map[netip.Prefix]int),
		conns:    make(map[*limitedConn]struct{}),
		refusing: make(chan struct{}, overflowConns),
		closed:   make(chan struct{}),
	}
	prevState := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		ll.connState(c, s)
		if prevState != nil {
			prevState(c, s)
		}
	}
	prevCtx := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevCtx != nil {
			ctx = prevCtx(ctx, c)
		}
		return context.WithValue(ctx, connLoadKey{}, ll)
	}
	return ll
}

// limitListener is LimitListener's listener.
type limitListener struct {
	net.Listener
	lim ConnLimits
	h   http.Handler

	mu     sync.Mutex
	open   int                       // connections served, guarded by mu
	byAddr map[netip.Prefix]int      // of each address not exempt, guarded by mu
	conns  map[*limitedConn]struct{} // the connections served, guarded by mu

	refusing chan struct{} // a token per refusal in progress
	wg       sync.WaitGroup
	closed   chan struct{} // closed by Close
	once     sync.Once
	err      error // of closing l
}

// limitedConn is a connection served within the caps; it gives its slot
// back when closed, or when it is reclaimed.
type limitedConn struct {
	net.Conn
	l      *limitListener
	addr   netip.Prefix
	exempt bool
	// idleSince is when it last became idle (accepted, or its answer
	// written on a keep-alive connection); zero while a request is read or
	// served. done: its slot was given back. Both guarded by l.mu.
	idleSince time.Time
	done      bool
}

// Accept returns the next connection within the caps, refusing those over
// them on the way.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc, victim := l.admit(c)
		if victim != nil {
			victim.Conn.Close() // its server goroutine sees the close and ends
		}
		if lc != nil {
			return lc, nil
		}
		l.refuse(c)
	}
}

// admit takes a slot for c, reclaiming an idle connection when a cap is
// reached; it returns nil when none is idle. victim is the connection
// reclaimed, to close once the lock is let go.
func (l *limitListener) admit(c net.Conn) (lc *limitedConn, victim *limitedConn) {
	addr, exempt := l.addressOf(c)
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !exempt && l.byAddr[addr] >= l.lim.PerAddress {
		victim = l.idlest(now, func(o *limitedConn) bool { return !o.exempt && o.addr == addr })
		if victim == nil {
			return nil, nil
		}
		l.drop(victim)
	}
	if victim == nil && l.open >= l.lim.Max { // a victim of its address freed a slot
		victim = l.idlest(now, nil)
		if victim == nil {
			return nil, nil
		}
		l.drop(victim)
	}
	lc = &limitedConn{Conn: c, l: l, addr: addr, exempt: exempt, idleSince: now}
	l.open++
	if !exempt {
		l.byAddr[addr]++
	}
	l.conns[lc] = struct{}{}
	return lc, victim
}

// idlest returns the connection idle longest, for at least MinIdle, of
// those that match (nil: any); nil when there is none. l.mu is held.
func (l *limitListener) idlest(now time.Time, match func(*limitedConn) bool) *limitedConn {
	var best *limitedConn
	for c := range l.conns {
		if c.idleSince.IsZero() || now.Sub(c.idleSince) < l.lim.MinIdle || (match != nil && !match(c)) {
			continue
		}
		if best == nil || c.idleSince.Before(best.idleSince) {
			best = c
		}
	}
	return best
}

// drop gives c's slot back, once. l.mu is held.
func (l *limitListener) drop(c *limitedConn) {
	if c.done {
		return
	}
	c.done = true
	l.open--
	if !c.exempt {
		if l.byAddr[c.addr]--; l.byAddr[c.addr] <= 0 {
			delete(l.byAddr, c.addr)
		}
	}
	delete(l.conns, c)
}

// connState follows which connections are idle.
func (l *limitListener) connState(c net.Conn, s http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok || lc.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateIdle:
		lc.idleSince = time.Now()
	case http.StateActive, http.StateHijacked:
		lc.idleSince = time.Time{}
	case http.StateClosed:
		l.drop(lc)
	}
}

// addressOf is the address c is counted on, and whether it is exempt from
// the per-address cap (a trusted proxy, or an address that is not IP).
func (l *limitListener) addressOf(c net.Conn) (netip.Prefix, bool) {
	ta, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}, true
	}
	a := ta.AddrPort().Addr().Unmap()
	for _, p := range l.lim.Exempt {
		if p.Contains(a) {
			return netip.Prefix{}, true
		}
	}
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p, false
}

// saturated reports whether every slot is taken by a connection that
// cannot be reclaimed: a new connection from anywhere would be refused.
func (l *limitListener) saturated() (open, max int, full bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, l.lim.Max, l.open >= l.lim.Max && l.idlest(time.Now(), nil) == nil
}

// connLoadKey carries a connection's limitListener in its requests'
// contexts, for /readyz.
type connLoadKey struct{}

// refuse answers c, over the caps, on a goroutine of its own.
func (l *limitListener) refuse(c net.Conn) {
	select {
	case <-l.closed:
		c.Close()
		return
	default:
	}
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer func() { <-l.refusing }()
		l.answer(c)
	}()
}

// answer reads c's request for up to overflowTimeout and answers it: a
// health check with the server's handler, anything else (or nothing
// read) with a 503; then it closes c without a reset.
func (l *limitListener) answer(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(overflowTimeout))
	br := bufio.NewReaderSize(c, 4<<10)
	req, err := http.ReadRequest(br)
	w := &bufferedResponse{header: make(http.Header)}
	if err == nil && (req.Method == http.MethodGet || req.Method == http.MethodHead) && (req.URL.Path == "/healthz" || req.URL.Path == "/readyz") {
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), connLoadKey{}, l), overflowTimeout)
		l.h.ServeHTTP(w, req.WithContext(ctx))
		cancel()
	} else {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "the gateway is serving as many connections as it takes ("+strconv.Itoa(l.lim.Max)+
			" in all, "+strconv.Itoa(l.lim.PerAddress)+" from one address); retry in a moment", "server_error", "", "too_many_connections")
	}
	_ = c.SetDeadline(time.Now().Add(overflowTimeout))
	if w.code == 0 {
		w.code = http.StatusOK
	}
	resp := &http.Response{StatusCode: w.code, ProtoMajor: 1, ProtoMinor: 1, Header: w.header, Close: true,
		ContentLength: int64(w.body.Len()), Body: io.NopCloser(&w.body), Request: req}
	if resp.Write(c) != nil {
		return
	}
	// Closing with unread bytes makes the kernel send a reset, which can
	// destroy the answer before the client reads it: half-close, then
	// read what the client still sends until it closes too.
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(br, overflowDrain))
}

// bufferedResponse is the http.ResponseWriter of a refused connection's
// one answer.
type bufferedResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.code == 0 {
		b.code = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// SetWriteDeadline lets the Server bound its writes (http.ResponseController):
// the connection's own deadline bounds this one.
func (b *bufferedResponse) SetWriteDeadline(time.Time) error { return nil }

// Flush does nothing: the answer is written whole.
func (b *bufferedResponse) Flush() {}

// Close closes the listener and waits for the refusals in progress.
func (l *limitListener) Close() error {
	l.once.Do(func() {
		close(l.closed)
		l.err = l.Listener.Close()
		l.wg.Wait()
	})
	return l.err
}

// Close gives the connection's slot back and closes it.
func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	c.l.drop(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// CloseWrite half-closes a TCP connection, as http.Server does before it
// closes one, so that the client reads the whole response before a reset.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
