// Package calllog writes and reads the call log: one JSON line per attempt
// (Writer), read back a line at a time and summarised per route and day for
// `tollfree log stats` (Reader, Stats), so that a
// caller can find what served its request (by request id) and an operator
// can see failover rates, token use, rescued streams and polite retries per
// route (seed 002's
// data/logs/model-calls.jsonl, seed 003's "observability you need").
//
// A record holds no prompt, no answer and no key: the error text comes
// already redacted from the failure package, and nothing else in a record
// is free text.
package calllog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/tollfree/tollfree/openai"
	"github.com/tollfree/tollfree/route"
)

// Record is one line of the call log.
type Record struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id"`
	Chain     string    `json:"chain"`
	Route     string    `json:"route"`
	Provider  string    `json:"provider"`
	Model     string    `json:"model"`
	Status    int       `json:"status"`
	Outcome   string    `json:"outcome"`
	Cached    bool      `json:"cached"`
	LatencyMS float64   `json:"latency_ms"`
	TokensIn  int       `json:"tokens_in"`
	TokensOut int       `json:"tokens_out"`
	Error     string    `json:"error,omitempty"`
	RestKey   string    `json:"rest,omitempty"`
	RestUntil time.Time `json:"rest_until,omitzero"`
	Hedge     bool      `json:"hedge,omitempty"`
	Stream    bool      `json:"stream,omitempty"`
	Part      int       `json:"part,omitempty"`
	Cut       string    `json:"cut,omitempty"`
	// Retry marks the polite retry of a blip on the same route.
	Retry bool `json:"retry,omitempty"`
	// Continuation is how a stream's later part continued the answer:
	// "prefix" or "instruct" (route.Attempt.Method).
	Continuation string `json:"continuation,omitempty"`
	// Repair numbers the repairs of a typed answer: the same route asked
	// again after its answer broke the request's schema (route.Attempt.Repair).
	Repair int `json:"repair,omitempty"`
	// Probe marks a probe at the edge: a route its budget skipped, called
	// once in its budget's slot rather than answer by the fallback
	// (route.Attempt.EdgeProbe).
	Probe bool `json:"probe,omitempty"`
}

// Writer appends records to a file or stream. It buffers, and writes out
// at most FlushEvery after a write and on Close. It is safe for concurrent
// use.
//
// A failed write (a full disk) is never sticky (issue 10): the records not
// written stay buffered, up to MaxPending bytes, and are written by the next
// flush that succeeds; a record that does not fit is dropped and counted.
// The logger hears once when writing starts failing, once when the first
// record is dropped, and once when writing works again; Health reports the
// same for /healthz.
type Writer struct {
	mu      sync.Mutex // guards every field below but c, log, every, stop, done
	out     io.Writer
	c       io.Closer
	log     *slog.Logger
	every   time.Duration
	pending []byte // whole lines not yet written; the head may be the rest of a line cut by a partial write
	line    []byte
	failing error // the last write's error; nil when writing works
	dropped int64 // records dropped since the Writer opened
	lost    int64 // records dropped since writing last worked

	stop chan struct{}
	done chan struct{}
}

// MaxPending bounds the records a Writer holds while its writes fail.
const MaxPending = 1 << 20

// flushAt is the buffered size that triggers a write before the timer.
const flushAt = 64 << 10

// Options configure a Writer made by NewWriter.
type Options struct {
	// Logger is told when writing starts failing and when it works again.
	// Default: nothing is logged.
	Logger *slog.Logger
	// FlushEvery is how often buffered records are written out; 0 writes
	// each record as it comes.
	FlushEvery time.Duration
}

// Open opens path for appending ("-" is standard output), creating its
// folder. Records are flushed every second and on Close. A file whose last
// line was cut short (the process was killed mid-write) gets a newline
// first, so that the next record starts a line of its own; readers skip the
// cut line.
func Open(path string, log *slog.Logger) (*Writer, error) {
	if path == "-" {
		return newWriter(os.Stdout, nopCloser{}, Options{Logger: log, FlushEvery: time.Second}, nil), nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	// Read and write, to look at the last byte; a file this process may
	// only write to is appended to without that check.
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o640)
	readable := err == nil
	if errors.Is(err, fs.ErrPermission) {
		fh, err = os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
	}
	if err != nil {
		return nil, err
	}
	torn := false
	if readable {
		if torn, err = endsTorn(fh); err != nil {
			fh.Close()
			return nil, fmt.Errorf("calllog: reading the end of %s: %w", path, err)
		}
	}
	var head []byte
	if torn {
		// Written with the first flush, and retried like any record when
		// the disk is full.
		head = []byte{'\n'}
	}
	return newWriter(fh, fh, Options{Logger: log, FlushEvery: time.Second}, head), nil
}

// endsTorn reports whether f is not empty and does not end with a newline.
func endsTorn(f *os.File) (bool, error) {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 || !st.Mode().IsRegular() {
		return false, err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], st.Size()-1); err != nil {
		return false, err
	}
	return last[0] != '\n', nil
}

// New wraps w (tests, embedding): each record is written as it comes, and
// nothing is logged.
func New(w io.Writer) *Writer {
	return NewWriter(w, Options{})
}

// NewWriter wraps w. Close does not close w.
func NewWriter(w io.Writer, o Options) *Writer {
	return newWriter(w, nopCloser{}, o, nil)
}

// newWriter starts a Writer on out, closed by c, with pending to write
// before any record.
func newWriter(out io.Writer, c io.Closer, o Options, pending []byte) *Writer {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Writer{out: out, c: c, log: o.Logger, every: o.FlushEvery, pending: pending}
	if o.FlushEvery > 0 {
		w.stop = make(chan struct{})
		w.done = make(chan struct{})
		go w.flusher(o.FlushEvery)
	}
	return w
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

func (w *Writer) flusher(every time.Duration) {
	defer close(w.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.Flush()
		}
	}
}

// Flush writes buffered records out. A failure keeps them buffered for the
// next try.
func (w *Writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
}

// flushLocked writes what is pending; w.mu must be held. What a failed
// write did not take stays pending: after a partial write that is the rest
// of a line, which the next write completes.
func (w *Writer) flushLocked() {
	if len(w.pending) == 0 {
		return
	}
	n, err := w.out.Write(w.pending)
	n = min(max(n, 0), len(w.pending))
	if n == len(w.pending) {
		w.pending = w.pending[:0]
	} else {
		w.pending = w.pending[n:] // no copy: a retry per record must stay cheap
	}
	if err == nil && len(w.pending) > 0 {
		err = io.ErrShortWrite
	}
	if err != nil {
		if w.failing == nil {
			w.log.Error("call log: write failed; holding records and retrying", "err", err, "hold_bytes", MaxPending)
		}
		w.failing = err
		return
	}
	if w.failing != nil {
		w.log.Warn("call log: writing again", "records_dropped", w.lost)
		w.failing, w.lost = nil, 0
	}
}

// Write appends one record. While writes fail, it is held for the next
// flush, or dropped and counted when MaxPending bytes are already held.
func (w *Writer) Write(r *Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.line = r.appendJSON(w.line[:0])
	if len(w.pending)+len(w.line) > MaxPending {
		w.flushLocked() // a last chance before dropping
	}
	if len(w.pending)+len(w.line) > MaxPending {
		if w.lost == 0 {
			w.log.Error("call log: records are being dropped until writing works again", "err", w.failing)
		}
		w.dropped++
		w.lost++
		return
	}
	w.pending = append(w.pending, w.line...)
	// While failing, only the timer retries, so that a full disk costs one
	// failed write a second, not one per record.
	if w.every == 0 || (w.failing == nil && len(w.pending) >= flushAt) {
		w.flushLocked()
	}
}

// Health is a Writer's condition, for /healthz.
type Health struct {
	// Err is the error of the last write when it failed; nil when writing
	// works.
	Err error
	// Dropped counts the records dropped since the Writer opened.
	Dropped int64
	// Pending is how many bytes wait to be written.
	Pending int
}

// Health reports whether writes work and how many records were dropped.
func (w *Writer) Health() Health {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Health{Err: w.failing, Dropped: w.dropped, Pending: len(w.pending)}
}

// RecordAttempt implements route.Recorder.
func (w *Writer) RecordAttempt(a *route.Attempt) {
	w.Write(FromAttempt(a))
}

// FromAttempt converts a router attempt to a record.
func FromAttempt(a *route.Attempt) *Record {
	return &Record{
		Time: a.Start, RequestID: a.RequestID, Chain: a.Chain, Route: a.Route,
		Provider: a.Provider, Model: a.Model, Status: a.Status, Outcome: a.Class.String(),
		LatencyMS: float64(a.Latency.Microseconds()) / 1000, TokensIn: a.TokensIn, TokensOut: a.TokensOut,
		Error: a.Error, RestKey: a.RestKey.String(), RestUntil: a.RestUntil, Hedge: a.Hedge, Stream: a.Stream,
		Part: a.Part, Cut: a.Cut, Cached: a.Cached,
		Retry: a.Retry, Continuation: a.Method, Repair: a.Repair, Probe: a.EdgeProbe,
	}
}

// Close flushes and closes the log. Records it still could not write are
// counted as dropped, and the error says so.
func (w *Writer) Close() error {
	if w.stop != nil {
		close(w.stop)
		<-w.done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	var err error
	if w.failing != nil {
		lost := int64(bytes.Count(w.pending, []byte{'\n'}))
		w.dropped += lost
		err = fmt.Errorf("calllog: close: %d records not written: %w", lost, w.failing)
		w.pending = w.pending[:0]
	}
	if cerr := w.c.Close(); err == nil {
		err = cerr
	}
	return err
}

// appendJSON writes r as one JSON line. Hand-written because it runs on
// every attempt and encoding/json's reflection costs more than the rest of
// the record.
func (r *Record) appendJSON(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","request_id":`...)
	b = appendString(b, r.RequestID)
	b = append(b, `,"chain":`...)
	b = appendString(b, r.Chain)
	b = append(b, `,"route":`...)
	b = appendString(b, r.Route)
	b = append(b, `,"provider":`...)
	b = appendString(b, r.Provider)
	b = append(b, `,"model":`...)
	b = appendString(b, r.Model)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `,"outcome":`...)
	b = appendString(b, r.Outcome)
	b = append(b, `,"cached":`...)
	b = strconv.AppendBool(b, r.Cached)
	b = append(b, `,"latency_ms":`...)
	b = strconv.AppendFloat(b, r.LatencyMS, 'f', -1, 64)
	b = append(b, `,"tokens_in":`...)
	b = strconv.AppendInt(b, int64(r.TokensIn), 10)
	b = append(b, `,"tokens_out":`...)
	b = strconv.AppendInt(b, int64(r.TokensOut), 10)
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, r.Error)
	}
	if r.RestKey != "" {
		b = append(b, `,"rest":`...)
		b = appendString(b, r.RestKey)
		b = append(b, `,"rest_until":"`...)
		b = r.RestUntil.UTC().AppendFormat(b, time.RFC3339)
		b = append(b, '"')
	}
	if r.Hedge {
		b = append(b, `,"hedge":true`...)
	}
	if r.Stream {
		b = append(b, `,"stream":true`...)
	}
	if r.Part > 0 {
		b = append(b, `,"part":`...)
		b = strconv.AppendInt(b, int64(r.Part), 10)
	}
	if r.Cut != "" {
		b = append(b, `,"cut":`...)
		b = appendString(b, r.Cut)
	}
	if r.Retry {
		b = append(b, `,"retry":true`...)
	}
	if r.Continuation != "" {
		b = append(b, `,"continuation":`...)
		b = appendString(b, r.Continuation)
	}
	if r.Probe {
		b = append(b, `,"probe":true`...)
	}
	return append(b, "}\n"...)
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte { return openai.AppendString(b, s) }
