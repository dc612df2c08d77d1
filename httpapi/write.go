package httpapi

import (
	"net/http"
	"time"
)

// deadlineWriter bounds every write to the client by the plan's write
// timeout: a client that stops reading (a full TCP window) makes a write
// fail after it, the handler returns, and the upstream call it was relaying
// is cancelled. Without it such a client held a goroutine and an upstream
// stream for as long as it liked (issue 10). http.Server's own WriteTimeout
// cannot do this: it caps the whole response, and a stream may rightly last
// minutes; here each write (a chunk, a flush) gets the whole timeout.
//
// The deadline is wall-clock time, not the gateway's Clock: the kernel
// enforces it.
//
// Setting a deadline is not free (a lock and a timer in the runtime's
// poller), and a streamed chunk makes two writes (the bytes, the flush), so
// a write whose deadline would move by less than a 64th of the timeout
// keeps the one set: every write gets at least 63/64 of the timeout, and a
// stream of chunks sets it about 64 times per timeout, not twice a chunk.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	armedAt time.Time // when the deadline was set last; zero when none is
}

// withWriteDeadlines wraps w, and gives the connection a fresh deadline at
// once: one left by the previous request of a keep-alive connection would
// otherwise cut the first write the server makes on its own (a 100
// Continue). Arming it here rather than clearing it saves the request a
// second deadline call: its headers, written soon after, keep this one.
func withWriteDeadlines(w http.ResponseWriter, timeout time.Duration) *deadlineWriter {
	d := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
	d.arm() // a writer without deadlines ignores it
	return d
}

// arm gives the next write the whole timeout, less at most a 64th of it.
// time.Since reads only the monotonic clock (time.Now reads two).
func (d *deadlineWriter) arm() {
	if !d.armedAt.IsZero() && time.Since(d.armedAt) < d.timeout/64 {
		return
	}
	d.armedAt = time.Now()
	_ = d.rc.SetWriteDeadline(d.armedAt.Add(d.timeout))
}

// done bounds what the server writes once the handler has returned (the
// buffered end of the response).
func (d *deadlineWriter) done() { d.arm() }

func (d *deadlineWriter) WriteHeader(status int) {
	d.arm()
	d.ResponseWriter.WriteHeader(status)
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	d.arm()
	return d.ResponseWriter.Write(b)
}

// FlushError flushes within the timeout; http.ResponseController finds it.
func (d *deadlineWriter) FlushError() error {
	d.arm()
	return d.rc.Flush()
}

// Flush is for handlers that assert http.Flusher.
func (d *deadlineWriter) Flush() { _ = d.FlushError() }

// Unwrap lets http.ResponseController reach the connection's writer.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// flushOut flushes w as http.ResponseController.Flush does, without making
// one (an allocation) for each response that streams: w is the server's
// *deadlineWriter, whose FlushError bounds the flush by the write timeout.
func flushOut(w http.ResponseWriter) error {
	if f, ok := w.(interface{ FlushError() error }); ok {
		return f.FlushError()
	}
	return http.NewResponseController(w).Flush()
}
