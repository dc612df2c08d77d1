package httpapi

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

// keepAliveComment is the SSE comment a silent stream gets. Clients skip
// comment lines (the SSE format: a line starting with a colon), as they
// skip OpenRouter's ": OPENROUTER PROCESSING".
const keepAliveComment = ": keep-alive\n\n"

// keepAlive writes an SSE comment to a stream's caller whenever nothing
// has been written to it for its interval (issue 13): while the routes
// race for the first token (failover, hedges, a wait for a limited route),
// and while a broken stream waits for its continuation. Proxies and
// clients that cut an idle connection at 30 to 100 s then keep it.
//
// The first comment commits the response: it writes the status (200) and
// the SSE headers if the handler has not (open). A request that fails
// before then gets its own status and JSON error; one that fails after
// gets its error as an event (see Server.stream).
//
// One timer per stream, on the gateway's clock, is re-armed lazily, as
// route.RoutedStream's idle timer is: a write notes the time (one clock
// read and an atomic store), and the timer, when it fires, either writes
// a comment or waits out the rest of the interval. Every write to the
// response, the handler's and the timer's, is made under mu, since an
// http.ResponseWriter is not safe for concurrent use, and none is made
// once stop has returned: the handler stops it before it returns. A nil
// *keepAlive (keep-alives off) does nothing.
type keepAlive struct {
	clock clock.Clock
	every time.Duration
	w     http.ResponseWriter
	open  func() // writes the status and the SSE headers

	last atomic.Int64 // when the caller was last written to, unix nanoseconds

	mu      sync.Mutex // guards timer, opened, stopped, and every write to w
	timer   clock.Timer
	opened  bool // the status and headers are written
	stopped bool
}

// startKeepAlive starts keep-alives every d on w, nil when d is not
// positive. open writes the status and the SSE headers.
func startKeepAlive(c clock.Clock, d time.Duration, w http.ResponseWriter, open func()) *keepAlive {
	if d <= 0 {
		return nil
	}
	k := &keepAlive{clock: c, every: d, w: w, open: open}
	k.last.Store(c.Now().UnixNano())
	k.mu.Lock()
	k.timer = c.AfterFunc(d, k.tick)
	k.mu.Unlock()
	return k
}

// tick runs when the timer fires: a comment if the caller has heard
// nothing for the interval, then the timer again for the next one.
func (k *keepAlive) tick() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	silent := time.Duration(k.clock.Now().UnixNano() - k.last.Load())
	if silent < k.every {
		k.timer = k.clock.AfterFunc(k.every-silent, k.tick)
		return
	}
	if !k.opened {
		k.open()
		k.opened = true
	}
	// A caller gone makes the write fail; the request's context ends the
	// wait, and the handler stops the keep-alives as it returns.
	if _, err := k.w.Write([]byte(keepAliveComment)); err == nil {
		_ = flushOut(k.w)
	}
	k.last.Store(k.clock.Now().UnixNano())
	k.timer = k.clock.AfterFunc(k.every, k.tick)
}

// commit locks the response for the handler to write its status and
// headers, and reports whether a keep-alive wrote them already (then the
// handler must not). Later keep-alives take them as written. The handler
// calls unlock once it has written them.
func (k *keepAlive) commit() (opened bool) {
	if k == nil {
		return false
	}
	k.mu.Lock()
	opened, k.opened = k.opened, true
	return opened
}

// lock and unlock bracket a write of the handler's. unlock notes the time
// when the write was flushed: that is when the caller heard from us.
func (k *keepAlive) lock() {
	if k != nil {
		k.mu.Lock()
	}
}

func (k *keepAlive) unlock(flushed bool) {
	if k == nil {
		return
	}
	k.mu.Unlock()
	if flushed {
		k.last.Store(k.clock.Now().UnixNano())
	}
}

// stop ends the keep-alives: none is written once it has returned. It
// reports whether one had committed the response (written the status and
// headers). It may be called more than once.
func (k *keepAlive) stop() (opened bool) {
	if k == nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	k.timer.Stop()
	return k.opened
}
