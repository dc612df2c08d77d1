package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/calllog"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/status"
	"github.com/tollfree/tollfree/status/metrics"
)

// t0 is the fake clock's start: a weekday morning in UTC.
var t0 = emutest.T0

// testKeys are the keys the emulated providers expect.
var testKeys = emutest.Keys

// harness is a gateway served over real HTTP in front of the emulator, on
// a fake clock.
type harness struct {
	t     *testing.T
	clk   *clock.Fake
	emu   *emulator.Emulator
	gw    *tollfree.Gateway
	srv   *httptest.Server
	recs  *attempts
	plan  *config.Plan
	store state.Store
	// active counts requests inside the gateway's handler.
	active *atomic.Int64
}

// attempts collects the router's attempt records.
type attempts struct {
	mu sync.Mutex
	a  []route.Attempt
}

// These tests run in e2e/; the files they read (the README, compose.yaml,
// the examples, docs/) are the checkout's, one folder up.

// repoPath is the path of a file of the checkout, from e2e/.
func repoPath(parts ...string) string {
	return filepath.Join(append([]string{".."}, parts...)...)
}

// repoRoot is the checkout's absolute path.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func (r *attempts) RecordAttempt(a *route.Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.a = append(r.a, *a)
}

func (r *attempts) all() []route.Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]route.Attempt(nil), r.a...)
}

// forRequest returns the attempts of one request id.
func (r *attempts) forRequest(id string) []route.Attempt {
	var out []route.Attempt
	for _, a := range r.all() {
		if a.RequestID == id {
			out = append(out, a)
		}
	}
	return out
}

// newHarness starts the emulator with the four providers and a gateway
// configured by chains (the chains: block of a config).
func newHarness(t *testing.T, chains string) *harness {
	t.Helper()
	return newHarnessEnv(t, chains, nil)
}

// newHarnessEnv is newHarness with more environment variables (roles).
func newHarnessEnv(t *testing.T, chains string, extraEnv map[string]string) *harness {
	t.Helper()
	return harnessOf(t, startStackWith(t, stackOptions{config: chains, env: extraEnv}))
}

// harnessOf wraps a stack for a test.
func harnessOf(t *testing.T, s *stack) *harness {
	return &harness{t: t, clk: s.clk, emu: s.emu, gw: s.gw, srv: s.srv, recs: s.recs, plan: s.plan, store: s.gw.Store(), active: s.active}
}

// stackOptions describe a gateway in front of the emulator. The zero value
// is newHarness's: the four emulated providers, a fake clock at t0.
type stackOptions struct {
	// providers is the providers block (EMU stands for the emulator's URL);
	// default emutest.Providers.
	providers string
	// config is the rest of the config (chains, callers...), EMU likewise.
	config string
	// env is read before emutest.Keys.
	env map[string]string
	// clock drives the emulator and the gateway; default a clock.Fake at t0
	// (stack.clk is then that Fake, else nil).
	clock clock.Clock
	// latency is each emulated route's wait before answering, by route ID.
	latency map[string]time.Duration
	// logger receives the gateway's log; default none.
	logger *slog.Logger
	// store, when set, is the gateway's state store; the test closes it.
	store state.Store
	// callLog, when set, receives the call records; callLogPath, when set,
	// is the call log's file. Default: no call log.
	callLog     *calllog.Writer
	callLogPath string
	// dataDir is the gateway's data_dir; default a fresh temporary folder.
	dataDir string
	// httpClient, when set, is the client the gateway calls providers with.
	httpClient *http.Client
	// discover, when set, is how often the gateway reads the providers'
	// model lists (tollfree.Options.DiscoverEvery); default none.
	discover time.Duration
}

// stack is an emulator and a gateway in front of it.
type stack struct {
	clk    *clock.Fake // nil when stackOptions.clock was not a Fake
	emu    *emulator.Emulator
	gw     *tollfree.Gateway
	srv    *httptest.Server // the gateway
	emuURL string           // the emulator's
	recs   *attempts
	plan   *config.Plan
	// active counts requests inside the gateway's handler.
	active *atomic.Int64
}

// startStackWith starts the emulator (every model the tests use, on the
// four providers: emutest.Start) and a gateway configured by o, for tests
// and benchmarks.
func startStackWith(tb testing.TB, o stackOptions) *stack {
	tb.Helper()
	if o.providers == "" {
		o.providers = emutest.Providers
	}
	if o.clock == nil {
		o.clock = clock.NewFake(t0)
	}
	emu, emuURL := emutest.Start(tb, o.clock, o.latency)
	if o.dataDir == "" {
		o.dataDir = tb.TempDir()
	}
	if o.callLogPath == "" {
		o.callLogPath = "off"
	}
	yaml := "data_dir: " + o.dataDir + "\ncall_log: " + strconv.Quote(o.callLogPath) + "\n" + strings.ReplaceAll(o.providers+o.config, "EMU", emuURL)
	plan, err := config.Parse("test.yaml", []byte(yaml), emutest.Env(o.env))
	if err != nil {
		tb.Fatalf("config: %v", err)
	}
	recs := &attempts{}
	gw, err := tollfree.New(tollfree.Options{Plan: plan, Clock: o.clock, Recorder: recs, Metrics: newMetrics, Store: o.store, CallLog: o.callLog, Logger: o.logger, HTTPClient: o.httpClient, DiscoverEvery: o.discover})
	if err != nil {
		tb.Fatalf("tollfree.New: %v", err)
	}
	s := &stack{emu: emu, gw: gw, emuURL: emuURL, recs: recs, plan: plan, active: new(atomic.Int64)}
	s.clk, _ = o.clock.(*clock.Fake)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.active.Add(1)
		defer s.active.Add(-1)
		gw.Handler().ServeHTTP(w, r)
	}))
	tb.Cleanup(func() {
		s.srv.Close()
		gw.Close()
	})
	return s
}

// inflight is how many requests the gateway is serving now.
func (h *harness) inflight() int { return int(h.active.Load()) }

// waitIdle waits until the gateway's handlers have all returned: a real
// event on other goroutines, so it polls, bounded by a deadline.
func (h *harness) waitIdle() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.inflight() > 0 {
		if time.Now().After(deadline) {
			h.t.Fatalf("%d requests still in the gateway", h.inflight())
		}
		time.Sleep(time.Millisecond)
	}
}

// newMetrics builds Prometheus metrics as cmd/tollfree does.
func newMetrics(p *config.Plan, s *status.Source) tollfree.Metrics {
	return metrics.New(metrics.Options{Plan: p, Status: s})
}

// reply is what a caller saw.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not JSON (%v): %s", err, r.body)
	}
	return m
}

// content returns choices[0].message.content.
func (r reply) content(t *testing.T) string {
	t.Helper()
	m := r.json(t)
	ch, _ := m["choices"].([]any)
	if len(ch) == 0 {
		t.Fatalf("no choices in %s", r.body)
	}
	msg := ch[0].(map[string]any)["message"].(map[string]any)
	s, _ := msg["content"].(string)
	return s
}

func (r reply) errorCode(t *testing.T) string {
	t.Helper()
	e, ok := r.json(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error envelope in %s", r.body)
	}
	c, _ := e["code"].(string)
	return c
}

// post sends a raw request to the gateway.
func (h *harness) post(path, contentType string, body []byte) reply {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// ask sends a one-question chat request on chain.
func (h *harness) ask(chain string) reply {
	h.t.Helper()
	return h.post("/v1/chat/completions", "application/json", []byte(`{"model":"`+chain+`","messages":[{"role":"user","content":"What does tollfree do?"}]}`))
}

// askAsync sends ask in a goroutine; the reply arrives on the channel.
func (h *harness) askAsync(chain string) <-chan reply {
	ch := make(chan reply, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"`+chain+`","messages":[{"role":"user","content":"What does tollfree do?"}]}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- reply{status: -1, body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		ch <- reply{status: resp.StatusCode, header: resp.Header, body: b}
	}()
	return ch
}

// waitCalls waits until the emulator has received n calls for a route: a
// real network event, so it polls, bounded by a deadline.
func (h *harness) waitCalls(provider, model string, n int) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.emu.Calls(provider, model) < n {
		if time.Now().After(deadline) {
			h.t.Fatalf("%s/%s: got %d calls, want %d", provider, model, h.emu.Calls(provider, model), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// rest returns the rest in force for key, if any.
func (h *harness) rest(key string) (state.Rest, bool) {
	h.t.Helper()
	rs, err := h.store.Rests(context.Background(), h.clk.Now())
	if err != nil {
		h.t.Fatalf("Rests: %v", err)
	}
	for _, r := range rs {
		if r.Key == key {
			return r, true
		}
	}
	return state.Rest{}, false
}

// answerChain is the chains of several end-to-end tests: four routes over
// three providers, and a Gemini-first one.
const answerChain = emutest.AnswerChain
