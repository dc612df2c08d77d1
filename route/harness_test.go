package route

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider/gemini"
	"github.com/tollfree/tollfree/provider/openaicompat"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

// The router's tests drive a Router over real HTTP: its upstreams are the
// real provider adapters, calling the emulator (package emulator) on an
// httptest server, with the state in a memstore and the budgets in a
// quota.Book, all on a fake clock. The router is what the gateway runs for
// every request (after the caller check and the cache; see the root
// package's serve.go), so what a caller of the gateway gets from a route is
// what these tests see.

// t0 is the fake clock's start.
var t0 = emutest.T0

// stack is a Router in front of the emulator.
type stack struct {
	t      *testing.T
	clk    *clock.Fake
	emu    *emulator.Emulator
	plan   *config.Plan
	store  state.Store
	budget *quota.Book
	r      *Router
	recs   *records
	seen   *headersSeen
	ids    atomic.Int64
}

// stackOptions describe a stack; the zero value is emutest.Providers with
// no chains.
type stackOptions struct {
	// providers is the providers block (EMU stands for the emulator's URL);
	// default emutest.Providers.
	providers string
	// chains is the rest of the config.
	chains string
	// env is read before emutest.Keys.
	env map[string]string
}

// newStack starts the emulator and a router on chains, over the four
// emulated providers.
func newStack(t *testing.T, chains string) *stack {
	t.Helper()
	return newStackWith(t, stackOptions{chains: chains})
}

// newStackWith starts the emulator and a router as o says.
func newStackWith(t *testing.T, o stackOptions) *stack {
	t.Helper()
	if o.providers == "" {
		o.providers = emutest.Providers
	}
	clk := clock.NewFake(t0)
	emu, url := emutest.Start(t, clk, nil)
	plan := emutest.Plan(t, o.providers+o.chains, url, o.env)
	store, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	budget := quota.New(quota.Options{Store: store, Clock: clk})
	recs := &records{}
	seen := &headersSeen{rt: openaicompat.NewTransport(), n: make(map[string]int)}
	r, err := New(Options{Plan: plan, Upstreams: upstreams(plan, &http.Client{Transport: seen}), Store: store, Budget: budget, Clock: clk, Recorder: recs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		budget.Close()
		store.Close()
	})
	t.Cleanup(seen.rt.CloseIdleConnections)
	return &stack{t: t, clk: clk, emu: emu, plan: plan, store: store, budget: budget, r: r, recs: recs, seen: seen}
}

// headersSeen is the adapters' transport: it counts the responses whose
// headers came back, by provider.
type headersSeen struct {
	rt *http.Transport
	mu sync.Mutex // guards n
	n  map[string]int
}

func (h *headersSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := h.rt.RoundTrip(r)
	if err == nil {
		p, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		h.mu.Lock()
		h.n[p]++
		h.mu.Unlock()
	}
	return resp, err
}

func (h *headersSeen) count(provider string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[provider]
}

// upstreams builds one adapter per enabled provider of the plan, as the
// gateway does (tollfree.Upstreams), all sending through client.
func upstreams(p *config.Plan, client *http.Client) map[string]Upstream {
	ups := make(map[string]Upstream, len(p.Providers))
	for name, pr := range p.Providers {
		if pr.Disabled {
			continue
		}
		switch pr.Dialect {
		case config.DialectGemini:
			ups[name] = gemini.New(gemini.Options{Name: name, BaseURL: pr.BaseURL, APIKey: pr.APIKey, Headers: pr.Headers, Client: client})
		default:
			ups[name] = openaicompat.New(openaicompat.Options{Name: name, Flavor: pr.Flavor, BaseURL: pr.BaseURL, APIKey: pr.APIKey, Headers: pr.Headers, Client: client})
		}
	}
	return ups
}

// question is a request of one user message.
func question(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: "user", Content: text}}}
}

// answer is what Chat returned for one request.
type answer struct {
	id  string
	res *Result
	err error
}

// route is the ID of the route that answered, "" for an error.
func (a answer) route() string {
	if a.res == nil {
		return ""
	}
	return a.res.Route.ID
}

// content is the answer's text.
func (a answer) content() string {
	if a.res == nil {
		return ""
	}
	return a.res.Response.Content
}

func (a answer) String() string {
	if a.err != nil {
		return fmt.Sprintf("%s: error %v", a.id, a.err)
	}
	return fmt.Sprintf("%s: %s answered %q", a.id, a.route(), a.content())
}

// nextID names a request, as the gateway does.
func (s *stack) nextID() string { return fmt.Sprintf("req_%d", s.ids.Add(1)) }

// chain returns the plan's chain of that name.
func (s *stack) chain(name string) *config.Chain {
	s.t.Helper()
	ch := s.plan.Chains[name]
	if ch == nil {
		s.t.Fatalf("no chain %q in the plan", name)
	}
	return ch
}

// chat answers req on chain.
func (s *stack) chat(ctx context.Context, chain string, req *llm.Request) answer {
	s.t.Helper()
	id := s.nextID()
	res, err := s.r.Chat(ctx, s.chain(chain), id, req)
	return answer{id: id, res: res, err: err}
}

// ask answers the tests' question on chain.
func (s *stack) ask(chain string) answer {
	s.t.Helper()
	return s.chat(context.Background(), chain, question(emutest.Question))
}

// askAsync is ask in a goroutine; the answer arrives on the channel.
func (s *stack) askAsync(chain string) <-chan answer {
	s.t.Helper()
	ch := make(chan answer, 1)
	c := s.chain(chain)
	id := s.nextID()
	go func() {
		res, err := s.r.Chat(context.Background(), c, id, question(emutest.Question))
		ch <- answer{id: id, res: res, err: err}
	}()
	return ch
}

// waitCalls waits until the emulator has received n calls for a route.
func (s *stack) waitCalls(provider, model string, n int) {
	s.t.Helper()
	emutest.WaitCalls(s.t, s.emu, provider, model, n)
}

// callsReach reports whether n calls for a route arrive within 2 s.
func (s *stack) callsReach(provider, model string, n int) bool {
	return emutest.CallsReach(s.emu, provider, model, n)
}

// waitHeaders waits until n responses of a provider have come back with
// their headers (the emulator's URL path names the provider): a real
// network event on the adapters' side, which the clock cannot tell.
func (s *stack) waitHeaders(provider string, n int) {
	s.t.Helper()
	testenv.WaitFor(s.t, fmt.Sprintf("%d responses from %s", n, provider), func() bool { return s.seen.count(provider) >= n })
}

// rests returns the rests in force now.
func (s *stack) rests() []state.Rest {
	s.t.Helper()
	rs, err := s.store.Rests(context.Background(), s.clk.Now())
	if err != nil {
		s.t.Fatalf("Rests: %v", err)
	}
	return rs
}

// rest returns the rest in force for key, if any.
func (s *stack) rest(key string) (state.Rest, bool) {
	s.t.Helper()
	for _, r := range s.rests() {
		if r.Key == key {
			return r, true
		}
	}
	return state.Rest{}, false
}

// noRests fails the test if anything rests.
func (s *stack) noRests() {
	s.t.Helper()
	if rs := s.rests(); len(rs) != 0 {
		s.t.Fatalf("rests = %+v, want none: a caller's request rested a route", rs)
	}
}

// rpdUsed is how many requests a route has counted today.
func (s *stack) rpdUsed(routeID string) int64 {
	s.t.Helper()
	left, err := s.budget.Left(context.Background(), s.plan.Routes[routeID])
	if err != nil {
		s.t.Fatal(err)
	}
	return left.Route.RPD.Used
}

// all returns every attempt recorded, in order.
func (r *records) all() []Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Attempt(nil), r.a...)
}

// forRequest returns the attempts of one request id.
func (r *records) forRequest(id string) []Attempt {
	var out []Attempt
	for _, a := range r.all() {
		if a.RequestID == id {
			out = append(out, a)
		}
	}
	return out
}

// classesOf lists the classes of a route's attempts, in the order recorded.
func (r *records) classesOf(route string) []string {
	var out []string
	for _, a := range r.all() {
		if a.Route == route {
			out = append(out, a.Class.String())
		}
	}
	return out
}

// noAnswer fails the test if an answer has already arrived.
func noAnswer(t *testing.T, ch <-chan answer, when string) {
	t.Helper()
	select {
	case a := <-ch:
		t.Fatalf("%s: an answer already arrived: %v", when, a)
	default:
	}
}

// streamed is what a stream sent: its chunks (those with something to say,
// as the HTTP API writes them), its end, and its usage.
type streamed struct {
	id     string
	route  string // the route that sent the first token
	chunks []llm.Chunk
	err    error // nil for a clean end (io.EOF)
	usage  llm.Usage
	exact  bool
	parts  int
}

// openStream starts a stream of req on chain; a failure before the first
// token is returned as is.
func (s *stack) openStream(ctx context.Context, chain string, req *llm.Request) (string, *RoutedStream, error) {
	s.t.Helper()
	id := s.nextID()
	rs, err := s.r.Stream(ctx, s.chain(chain), id, req)
	if err == nil {
		s.t.Cleanup(func() { rs.Close() })
	}
	return id, rs, err
}

// stream streams req on chain to its end.
func (s *stack) stream(chain string, req *llm.Request) (streamed, error) {
	s.t.Helper()
	id, rs, err := s.openStream(context.Background(), chain, req)
	if err != nil {
		return streamed{id: id}, err
	}
	return drain(id, rs), nil
}

// drain reads rs to its end and closes it.
func drain(id string, rs *RoutedStream) streamed {
	defer rs.Close()
	out := streamed{id: id, route: rs.Route.ID}
	for {
		c, err := rs.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			out.err = err
			break
		}
		if c.Content != "" || c.Role != "" || c.FinishReason != "" || c.ToolCalls != nil || c.Reasoning != "" {
			c.Usage = nil // the HTTP API writes the usage once, at the end (Usage)
			out.chunks = append(out.chunks, c)
		}
	}
	out.usage, out.exact = rs.Usage()
	out.parts = rs.Parts()
	return out
}

// text is the content the chunks carried.
func (s streamed) text() string {
	var b []byte
	for _, c := range s.chunks {
		b = append(b, c.Content...)
	}
	return string(b)
}

// reasoning is the reasoning the chunks carried.
func (s streamed) reasoning() string {
	var b []byte
	for _, c := range s.chunks {
		b = append(b, c.Reasoning...)
	}
	return string(b)
}

// finishes lists the chunks' finish reasons.
func (s streamed) finishes() []string {
	var out []string
	for _, c := range s.chunks {
		if c.FinishReason != "" {
			out = append(out, c.FinishReason)
		}
	}
	return out
}

// sameChunks reports whether got is exactly want, and where it differs.
func sameChunks(got, want []llm.Chunk) (bool, string) {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return false, fmt.Sprintf("chunk %d missing: want %+v", i, want[i])
		case i >= len(want):
			return false, fmt.Sprintf("chunk %d extra: %+v", i, got[i])
		case got[i].Role != want[i].Role || got[i].Content != want[i].Content || got[i].Reasoning != want[i].Reasoning ||
			got[i].FinishReason != want[i].FinishReason || string(got[i].ToolCalls) != string(want[i].ToolCalls):
			return false, fmt.Sprintf("chunk %d is %+v, want %+v", i, got[i], want[i])
		}
	}
	return true, ""
}
