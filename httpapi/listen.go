package httpapi

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The overflow server's bounds: it answers one short request per
// connection, and only so many at once; past that a connection over the
// cap is closed unanswered.
const (
	overflowConns   = 16
	overflowTimeout = 2 * time.Second
)

// LimitListener returns l serving at most max connections at once (issue
// 10: nothing capped them). A connection over the cap is not left waiting
// in the kernel's queue: a small server of its own answers its one request,
// GET /healthz and /readyz with h (so that a health check still sees a busy gateway
// alive) and anything else with a 503 in OpenAI's format and Retry-After,
// then closes it. Closing the returned listener stops that server too. With
// max 0 or less, l is returned as it is.
func LimitListener(l net.Listener, max int, h http.Handler) net.Listener {
	if max <= 0 {
		return l
	}
	ll := &limitListener{
		Listener: l,
		slots:    make(chan struct{}, max),
		spare:    make(chan struct{}, overflowConns),
		overflow: make(chan net.Conn, overflowConns),
		closed:   make(chan struct{}),
		served:   make(chan struct{}),
	}
	ll.srv = &http.Server{
		Handler:           overflowHandler(max, h),
		ReadHeaderTimeout: overflowTimeout,
		ReadTimeout:       overflowTimeout,
		WriteTimeout:      overflowTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	ll.srv.SetKeepAlivesEnabled(false)
	go func() {
		defer close(ll.served)
		_ = ll.srv.Serve(overflowListener{ll})
	}()
	return ll
}

// limitListener is LimitListener's listener. Its channels are semaphores:
// a connection holds a token of slots while served, of spare while
// answered by the overflow server.
type limitListener struct {
	net.Listener
	slots    chan struct{}
	spare    chan struct{}
	overflow chan net.Conn // to the overflow server; never full (spare)
	srv      *http.Server  // the overflow server
	closed   chan struct{} // closed by Close
	served   chan struct{} // closed when srv.Serve has returned
	once     sync.Once
	err      error // of closing l
}

// Accept returns the next connection within the cap, answering those over
// it on the way.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
		}
		select {
		case <-l.closed:
			c.Close()
			continue
		default:
		}
		select {
		case l.spare <- struct{}{}:
			l.overflow <- &limitedConn{Conn: c, release: func() { <-l.spare }}
		default:
			c.Close()
		}
	}
}

// Close closes the listener and the overflow server, and waits for it.
func (l *limitListener) Close() error {
	l.once.Do(func() {
		close(l.closed)
		l.err = l.Listener.Close()
		l.srv.Close()
		<-l.served
		for {
			select {
			case c := <-l.overflow: // handed over but never accepted
				c.Close()
			default:
				return
			}
		}
	})
	return l.err
}

// overflowListener feeds the overflow server the connections over the cap.
type overflowListener struct{ l *limitListener }

func (o overflowListener) Accept() (net.Conn, error) {
	select {
	case c := <-o.l.overflow:
		return c, nil
	case <-o.l.closed:
		return nil, net.ErrClosed
	}
}

func (o overflowListener) Close() error   { return nil } // limitListener.Close owns the shutdown
func (o overflowListener) Addr() net.Addr { return o.l.Addr() }

// overflowHandler answers a connection over the cap.
func overflowHandler(max int, h http.Handler) http.Handler {
	msg := "the gateway is serving as many connections as it takes (" + strconv.Itoa(max) + "); retry in a moment"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, msg, "server_error", "", "too_many_connections")
	})
}

// limitedConn gives its token back when closed, once.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	c.once.Do(c.release)
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
