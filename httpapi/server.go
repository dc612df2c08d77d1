package httpapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/reqid"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/openai"
)

// Options configure a Server. Plan and Gateway are required.
type Options struct {
	Plan *config.Plan
	// Gateway answers the chat requests.
	Gateway Gateway
	// Callers works out who calls (keys, visitor ids, addresses). Default:
	// caller.New(Plan, Clock). *tollfree.Gateway passes its own, so that
	// the HTTP API and the Gateway read the same keys.
	Callers *caller.Resolver
	Clock   clock.Clock
	Logger  *slog.Logger
	// Extra handlers mounted on the mux (status page, metrics, admin), by
	// pattern.
	Extra map[string]http.Handler
	// Health adds lines to /healthz (the state store's condition).
	Health func() map[string]string
}

// Gateway runs a request through the gateway's flow: the caller check, the
// cache, the routes and the chain's fallback (docs/DESIGN.md, "How one
// request flows"). *tollfree.Gateway implements it; a Go program embedding
// tollfree calls the same methods, so both get the same answers. The
// Server only decodes the request, works out who the caller is, calls the
// Gateway, encodes what it answered, and maps its errors to status codes.
type Gateway interface {
	Serve(ctx context.Context, ch *config.Chain, c llm.Call) (*llm.Answer, error)
	ServeStream(ctx context.Context, ch *config.Chain, c llm.Call) (*llm.AnswerStream, error)
}

// Server serves the API. It is safe for concurrent use.
type Server struct {
	plan    *config.Plan
	gw      Gateway
	clock   clock.Clock
	log     *slog.Logger
	health  func() map[string]string
	mux     *http.ServeMux
	ids     *reqid.Source
	callers *caller.Resolver
	// hasStatus: a status page is mounted at /status (GET / sends a
	// browser there).
	hasStatus bool
	// ready and readyWhy are /healthz's status and reason, fixed with the
	// plan (healthStatus).
	ready, readyWhy string
	// draining: the gateway is shutting down; /readyz answers 503 (Drain).
	draining atomic.Bool

	bufs sync.Pool // *[]byte
}

// New returns a Server.
func New(o Options) *Server {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Callers == nil {
		o.Callers = caller.New(o.Plan, o.Clock)
	}
	s := &Server{plan: o.Plan, gw: o.Gateway, clock: o.Clock, log: o.Logger, health: o.Health, mux: http.NewServeMux(), ids: reqid.New(),
		callers: o.Callers}
	// 4 KiB holds a typical request body, answer or streamed chunk; a
	// larger one grows its buffer, which the pool then keeps (up to 1
	// MiB). Larger first buffers cost memory on every connection
	// (issue 18: a streamed request holds two for its whole stream).
	s.bufs.New = func() any { b := make([]byte, 0, 4<<10); return &b }
	s.mux.HandleFunc("/v1/chat/completions", s.chat)
	s.mux.HandleFunc("/chat/completions", s.chat)
	s.mux.HandleFunc("/v1/responses", s.responses)
	s.mux.HandleFunc("/v1/embeddings", s.embeddings)
	s.mux.HandleFunc("/v1/models", s.models)
	s.mux.HandleFunc("/v1/ask", s.ask)
	s.mux.HandleFunc("/healthz", s.healthz)
	s.mux.HandleFunc("/readyz", s.readyz)
	for p, h := range o.Extra {
		s.mux.Handle(p, h)
	}
	_, s.hasStatus = o.Extra["/status"]
	s.ready, s.readyWhy = healthStatus(o.Plan)
	s.mux.HandleFunc("/", s.root)
	return s
}

// ServeHTTP implements http.Handler. Every request with a body must be
// JSON (media.go), whatever endpoint it is for, and every write to the
// client is bounded by the plan's write timeout (see deadlineWriter).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !jsonOnly(w, r) {
		return
	}
	if d := s.plan.Server.WriteTimeout; d > 0 {
		dw := withWriteDeadlines(w, d)
		defer dw.done()
		w = dw
	}
	s.mux.ServeHTTP(w, r)
}

// HTTPServer returns an *http.Server for h with the plan's timeouts, so that
// a slow or idle client cannot hold a connection forever. Its WriteTimeout,
// which would cap a whole response, is not set: streams may last up to the
// chain's deadline; the Server bounds each write instead.
func HTTPServer(p *config.Plan, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              p.Listen,
		Handler:           h,
		ReadHeaderTimeout: p.Server.ReadHeaderTimeout,
		ReadTimeout:       p.Server.ReadTimeout,
		IdleTimeout:       p.Server.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}

func (s *Server) getBuf() *[]byte { return s.bufs.Get().(*[]byte) }

func (s *Server) putBuf(b *[]byte) {
	if cap(*b) > 1<<20 {
		return
	}
	*b = (*b)[:0]
	s.bufs.Put(b)
}

// intake is what every POST endpoint does before decoding: it identifies
// the caller and reads the body into a pooled buffer. It writes the error
// response itself and returns ok false on failure; when ok, the caller
// hands buf back with putBuf.
func (s *Server) intake(w http.ResponseWriter, r *http.Request) (who caller.Identity, buf *[]byte, ok bool) {
	if who, ok = s.identify(w, r); !ok {
		return who, nil, false
	}
	buf = s.getBuf()
	if !s.readBody(w, r, buf) {
		s.putBuf(buf)
		return who, nil, false
	}
	return who, buf, true
}

// readBody reads a JSON request body within the size limit. It writes the
// error response itself and returns ok false on failure. Its media type was
// checked before (jsonOnly, media.go).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, buf *[]byte) bool {
	limit := s.plan.Server.MaxBodyBytes
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, "the request body is "+strconv.FormatInt(r.ContentLength, 10)+" bytes; the limit is "+strconv.FormatInt(limit, 10), "invalid_request_error", "", "request_too_large")
		return false
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	b := *buf
	if r.ContentLength > 0 && int64(cap(b)) < r.ContentLength {
		b = make([]byte, 0, r.ContentLength)
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			*buf = b
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				writeError(w, http.StatusRequestEntityTooLarge, "the request body is over the limit of "+strconv.FormatInt(limit, 10)+" bytes", "invalid_request_error", "", "request_too_large")
				return false
			}
			writeError(w, http.StatusBadRequest, "the request body could not be read: it ended early or too slowly", "invalid_request_error", "", "body_read_error")
			return false
		}
	}
	*buf = b
	if len(b) == 0 {
		writeError(w, http.StatusBadRequest, "the request body is empty; send a JSON chat completion request", "invalid_request_error", "", "invalid_json")
		return false
	}
	return true
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	b := []byte(`{"status":`)
	b = strconv.AppendQuote(b, s.ready)
	if s.readyWhy != "" {
		b = append(b, `,"reason":`...)
		b = strconv.AppendQuote(b, s.readyWhy)
	}
	if s.health != nil {
		for k, v := range s.health() {
			b = append(b, ',')
			b = strconv.AppendQuote(b, k)
			b = append(b, ':')
			b = strconv.AppendQuote(b, v)
		}
	}
	b = append(b, '}')
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, "method not allowed; use "+allow, "invalid_request_error", "", "method_not_allowed")
}

// writeError writes OpenAI's error envelope, in one Write: a stream whose
// status a keep-alive committed turns that Write into one error event
// (errorEvents).
func writeError(w http.ResponseWriter, status int, msg, typ, param, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(openai.AppendError(nil, msg, typ, param, code))
}

// retryAfter formats the seconds until t, at least 1.
func retryAfter(now, t time.Time) string {
	d := t.Sub(now)
	secs := int64((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return strconv.FormatInt(secs, 10)
}
