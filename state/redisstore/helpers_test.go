package redisstore

import (
	"context"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tollfree/tollfree/internal/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// redisURL and newNamespace are testenv's: the shared Redis (skipped
// without one, failed under CI) and a namespace whose keys go at cleanup.
func redisURL(tb testing.TB) string { return testenv.RedisURL(tb) }

func newNamespace(tb testing.TB, redisURL string) string { return testenv.Namespace(tb, redisURL) }

// openStore opens a Store closed when the test ends. Unless the test sets
// OpTimeout, it is a generous one: under the race detector a first dial can
// pass 100ms, and only the outage tests are about timing.
func openStore(tb testing.TB, o Options) *Store {
	tb.Helper()
	if o.OpTimeout == 0 {
		o.OpTimeout = 2 * time.Second
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

// hooks returns a hook for Options and the channel it reports on.
func hooks() (func(string), <-chan string) {
	ch := make(chan string, 1024)
	return func(what string) {
		select {
		case ch <- what:
		default:
		}
	}, ch
}

// waitHook waits for the hook to report what, or fails after a deadline.
func waitHook(t *testing.T, ch <-chan string, what string) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case got := <-ch:
			if got == what {
				return
			}
		case <-deadline.C:
			t.Fatalf("no %q from the store within 10s", what)
		}
	}
}

// eventually polls cond until it holds or a deadline passes. Only for
// waiting on real network events (a proxy coming back, a probe).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		<-tick.C
	}
}

// proxy is a TCP proxy in front of Redis that a test closes, reopens on the
// same port, or stalls (holds every byte) to play a Redis that went away or
// got slow.
type proxy struct {
	target string
	addr   string

	mu     sync.Mutex // guards ln, conns, paused
	ln     net.Listener
	conns  map[net.Conn]struct{}
	paused chan struct{} // non-nil while stalled; closed to resume

	wg sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p := &proxy{target: target, addr: "127.0.0.1:0", conns: make(map[net.Conn]struct{})}
	p.up(t)
	t.Cleanup(p.down)
	return p
}

// url returns redisURL with its host replaced by the proxy's.
func (p *proxy) url(t *testing.T, redisURL string) string {
	t.Helper()
	u, err := url.Parse(redisURL)
	if err != nil {
		t.Fatal("REDIS_URL does not parse")
	}
	u.Host = p.addr
	return u.String()
}

// up listens again, on the same port after the first time.
func (p *proxy) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	p.wg.Go(func() { p.accept(ln) })
}

func (p *proxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		if p.ln != ln { // closed meanwhile
			p.mu.Unlock()
			_ = c.Close()
			_ = u.Close()
			return
		}
		p.conns[c], p.conns[u] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(u, c) })
		p.wg.Go(func() { p.pipe(c, u) })
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.paused
			p.mu.Unlock()
			if gate != nil {
				<-gate
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// down closes the listener and every connection: Redis refuses.
func (p *proxy) down() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
	if p.paused != nil {
		close(p.paused)
		p.paused = nil
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// stall holds every byte from now on: Redis is slower than any timeout.
func (p *proxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == nil {
		p.paused = make(chan struct{})
	}
}

// resume forwards again, the held bytes first.
func (p *proxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused != nil {
		close(p.paused)
		p.paused = nil
	}
}
