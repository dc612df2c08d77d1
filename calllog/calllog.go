// Package calllog writes and reads the call log: one JSON line per attempt
// (Writer), read back a line at a time and summarised per route and day for
// `tollfree log stats` (Reader, Stats), so that a
// caller can find what served its request (by request id) and an operator
// can see failover rates and token use per route (seed 002's
// data/logs/model-calls.jsonl, seed 003's "observability you need").
//
// A record holds no prompt, no answer and no key: the error text comes
// already redacted from the failure package, and nothing else in a record
// is free text.
package calllog

import (
	"bufio"
	"io"
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
}

// Writer appends records to a file or stream. It buffers, and flushes at
// most FlushEvery after a write and on Close. It is safe for concurrent use.
type Writer struct {
	mu    sync.Mutex // guards buf, w, err, line
	buf   *bufio.Writer
	c     io.Closer
	err   error
	log   *slog.Logger
	dirty bool
	line  []byte

	stop chan struct{}
	done chan struct{}
}

// Open opens path for appending ("-" is standard output), creating its
// folder. Records are flushed every second and on Close.
func Open(path string, log *slog.Logger) (*Writer, error) {
	var f io.WriteCloser
	if path == "-" {
		f = nopCloser{os.Stdout}
	} else {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		fh, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
		if err != nil {
			return nil, err
		}
		f = fh
	}
	return newWriter(f, log, time.Second), nil
}

// New wraps w (tests, embedding).
func New(w io.Writer) *Writer {
	return newWriter(nopCloser{w}, nil, 0)
}

func newWriter(f io.WriteCloser, log *slog.Logger, every time.Duration) *Writer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Writer{buf: bufio.NewWriterSize(f, 64<<10), c: f, log: log}
	if every > 0 {
		w.stop = make(chan struct{})
		w.done = make(chan struct{})
		go w.flusher(every)
	}
	return w
}

type nopCloser struct{ io.Writer }

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

// Flush writes buffered records out.
func (w *Writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirty {
		w.dirty = false
		if err := w.buf.Flush(); err != nil && w.err == nil {
			w.err = err
			w.log.Error("call log: write failed; records are being lost", "err", err)
		}
	}
}

// Write appends one record.
func (w *Writer) Write(r *Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.line = r.appendJSON(w.line[:0])
	w.buf.Write(w.line)
	w.dirty = true
	if w.stop == nil {
		w.buf.Flush()
		w.dirty = false
	}
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
		Error: a.Error, RestKey: a.RestKey, RestUntil: a.RestUntil, Hedge: a.Hedge, Stream: a.Stream,
		Part: a.Part, Cut: a.Cut, Cached: a.Cached,
	}
}

// Close flushes and closes the log.
func (w *Writer) Close() error {
	if w.stop != nil {
		close(w.stop)
		<-w.done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.buf.Flush()
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
	return append(b, "}\n"...)
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte { return openai.AppendString(b, s) }
