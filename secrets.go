package tollfree

import (
	"bytes"
	"context"
	"net/http"
	"strconv"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/secret"
	"github.com/tollfree/tollfree/state"
)

// The sinks' side of scrubbing secrets (issue 10, item 2; see package
// secret). The adapters scrub what providers say as it comes in; these
// wrappers scrub again where text leaves: every attempt record (call log,
// statistics, metrics, Options.Recorder), every rest written to the state
// store (memstore's files, Redis), and every HTTP response other than an
// answer. None of them scans a successful answer.

// secretsOf returns the plan's secret set, worked out from its fields for
// a Plan built by hand.
func secretsOf(p *config.Plan) *secret.Set {
	if p.Secrets != nil {
		return p.Secrets
	}
	return secret.New(p.SecretValues()...)
}

// scrubRecorder scrubs an attempt's free text before its recorders see it.
type scrubRecorder struct {
	next route.Recorder
	set  *secret.Set
}

func (r scrubRecorder) RecordAttempt(a *route.Attempt) {
	errText, cut := r.set.Scrub(a.Error), r.set.Scrub(a.Cut)
	if errText != a.Error || cut != a.Cut {
		c := *a
		c.Error, c.Cut = errText, cut
		a = &c
	}
	r.next.RecordAttempt(a)
}

// scrubStore scrubs the reason of every rest before the store keeps it.
type scrubStore struct {
	state.Store
	set *secret.Set
}

// Unwrap returns the store scrubStore wraps, so that its optional abilities
// (persistHealth) can still be found.
func (s scrubStore) Unwrap() state.Store { return s.Store }

func (s scrubStore) SetRest(ctx context.Context, r state.Rest) error {
	r.Reason = s.set.Scrub(r.Reason)
	return s.Store.SetRest(ctx, r)
}

// answerPaths serve answers: only their error responses are scrubbed, so
// that an answer (or a stream) passes untouched and unbuffered.
var answerPaths = map[string]bool{"/v1/chat/completions": true, "/chat/completions": true, "/v1/ask": true}

// scrubHandler scrubs secrets from the responses of next: error responses
// of the answer paths as they are written, and every other response (status
// page and JSON, metrics, health, admin) whole.
type scrubHandler struct {
	next http.Handler
	set  *secret.Set
}

func (h scrubHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if answerPaths[r.URL.Path] {
		h.next.ServeHTTP(&errorScrubber{ResponseWriter: w, set: h.set}, r)
		return
	}
	if r.Header.Get("Accept-Encoding") != "" {
		// A compressed body cannot be scrubbed: ask for a plain one.
		r = r.WithContext(r.Context())
		r.Header = r.Header.Clone()
		r.Header.Del("Accept-Encoding")
	}
	b := &bufferScrubber{w: w, status: http.StatusOK}
	h.next.ServeHTTP(b, r)
	b.finish(h.set)
}

// errorScrubber passes a response through, scrubbing its body when its
// status is an error.
type errorScrubber struct {
	http.ResponseWriter
	set         *secret.Set
	wroteHeader bool
	scrub       bool
}

func (e *errorScrubber) WriteHeader(code int) {
	if !e.wroteHeader && code >= 200 {
		e.wroteHeader = true
		if code >= 400 {
			e.scrub = true
			e.Header().Del("Content-Length")
		}
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *errorScrubber) Write(p []byte) (int, error) {
	if !e.wroteHeader {
		e.WriteHeader(http.StatusOK)
	}
	if !e.scrub {
		return e.ResponseWriter.Write(p)
	}
	if _, err := e.ResponseWriter.Write(e.set.ScrubBytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush lets streams flush through the wrapper.
func (e *errorScrubber) Flush() {
	if f, ok := e.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (e *errorScrubber) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// bufferScrubber holds a whole response, to be scrubbed and written by
// finish: a secret can then not hide across two writes.
type bufferScrubber struct {
	w           http.ResponseWriter
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (b *bufferScrubber) Header() http.Header { return b.w.Header() }

func (b *bufferScrubber) WriteHeader(code int) {
	if !b.wroteHeader && code >= 200 {
		b.wroteHeader, b.status = true, code
	}
}

func (b *bufferScrubber) Write(p []byte) (int, error) {
	b.wroteHeader = true
	return b.body.Write(p)
}

func (b *bufferScrubber) finish(set *secret.Set) {
	out := set.ScrubBytes(b.body.Bytes())
	if b.w.Header().Get("Content-Length") != "" {
		b.w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	}
	b.w.WriteHeader(b.status)
	b.w.Write(out)
}
