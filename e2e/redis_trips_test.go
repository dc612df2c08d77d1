package e2e_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/state/redisstore"
)

// tripsRig is a gateway on Redis in front of the emulator's capd, each
// request counting its round trips to Redis.
type tripsRig struct {
	emu     *emulator.Emulator
	gw      *tollfree.Gateway
	st      *redisstore.Store
	srv     *httptest.Server
	counter atomic.Pointer[atomic.Int64]
	atCall  atomic.Int64 // the request's round trips when capd was called
}

// newTripsRig starts a tripsRig whose capd/m1 takes rpd requests a day,
// with the callers: block callers. The fake clock keeps the store's
// background refresh still, so that only the requests' own round trips
// happen while they run.
func newTripsRig(t *testing.T, rpd int, callers string) *tripsRig {
	t.Helper()
	url := testenv.RedisURL(t)
	ns := testenv.Namespace(t, url)
	clk := clock.NewFake(t0)
	r := &tripsRig{}
	var emuURL string
	r.emu, emuURL = newCapd(t, clk)
	plan, err := config.Parse("capd.yaml", []byte(capdYAML(emuURL, t.TempDir(), rpd)+callers), capdEnv)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	r.st, err = redisstore.Open(context.Background(), redisstore.Options{URL: url, Namespace: ns, Clock: clk, OpTimeout: 2 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r.gw, err = tollfree.New(tollfree.Options{Plan: plan, Store: r.st, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	h := r.gw.Handler()
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.ServeHTTP(w, req.WithContext(redisstore.CountRoundTrips(req.Context(), r.counter.Load())))
	}))
	t.Cleanup(func() {
		r.srv.Close()
		r.gw.Close()
		r.st.Close()
	})
	r.emu.OnBody(func(_, _ string, _ []byte) { r.atCall.Store(r.counter.Load().Load()) })
	return r
}

// ask sends one request for the chain capped and returns its status and
// header; atCall then holds its round trips before capd's call.
func (r *tripsRig) ask(t *testing.T, stream bool) (int, http.Header) {
	t.Helper()
	r.counter.Store(new(atomic.Int64))
	r.atCall.Store(-1)
	body := `{"model":"capped","messages":[{"role":"user","content":"What does tollfree do?"}]}`
	if stream {
		body = `{"model":"capped","stream":true,"messages":[{"role":"user","content":"What does tollfree do?"}]}`
	}
	resp, err := r.srv.Client().Post(r.srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	// What the answer queued (settles, the request given back) is
	// applied off the caller's path; wait for it here, so that the
	// next request is counted alone.
	r.gw.Budget().Close()
	r.st.Flush(context.Background())
	return resp.StatusCode, resp.Header
}

// used is what capd/m1's day counted.
func (r *tripsRig) used(t *testing.T) int64 {
	t.Helper()
	l, err := r.gw.Budget().Left(context.Background(), r.gw.Plan().Routes["capd/m1"])
	if err != nil {
		t.Fatal(err)
	}
	return l.Route.RPD.Used
}

// TestRedisOneRoundTripBeforeTheCall: in Redis mode, with caller limits and
// a route's budget on, everything a request needs from Redis before its
// upstream call is one round trip, answered or streamed (issue 18); the
// corrections after the answer reach Redis without the caller waiting. A
// caller past its limits still gets its 429, and nothing is spent on the
// route for it. Its limits are small (4 an hour), so nothing is shared.
func TestRedisOneRoundTripBeforeTheCall(t *testing.T) {
	checkLeaks(t)
	r := newTripsRig(t, 1000, `
callers:
  per_hour: 4
  per_day: 100
  tokens_day: 1000000
  concurrent: 4
  site_day: 1000
`)
	// The first request loads the scripts into Redis (two round trips for
	// each the first time): not counted.
	if status, _ := r.ask(t, false); status != http.StatusOK {
		t.Fatalf("first request: status %d", status)
	}
	for _, stream := range []bool{false, true} {
		status, _ := r.ask(t, stream)
		if status != http.StatusOK {
			t.Fatalf("stream %v: status %d", stream, status)
		}
		if n := r.atCall.Load(); n != 1 {
			t.Errorf("stream %v: %d round trips to Redis before the upstream call, want 1", stream, n)
		}
	}
	if status, _ := r.ask(t, false); status != http.StatusOK { // the hour's 4th
		t.Fatalf("fourth request: status %d", status)
	}
	calls, spent := r.emu.Calls("capd", "m1"), r.used(t)
	if spent != 4 {
		t.Errorf("capd/m1 counted %d requests, want 4", spent)
	}
	status, hdr := r.ask(t, false)
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Errorf("past the caller's hour: status %d, Retry-After %q; want a 429 with a Retry-After", status, hdr.Get("Retry-After"))
	}
	if n := r.emu.Calls("capd", "m1"); n != calls {
		t.Errorf("a refused caller's request called capd/m1 (%d calls, want %d)", n, calls)
	}
	if n := r.used(t); n != spent {
		t.Errorf("a refused caller's request spent on capd/m1: %d counted, want %d", n, spent)
	}
}

// TestRedisSharesSpareTheRoundTrip: far from their limits, the windows a
// busy caller and route spend on are held in shares (redisstore), so that
// most requests make no round trip to Redis at all before their call
// (issue 18: Redis mode at 0.55 of local mode, a round trip each), and
// every request is still counted.
func TestRedisSharesSpareTheRoundTrip(t *testing.T) {
	checkLeaks(t)
	r := newTripsRig(t, 1_000_000, `
callers:
  per_hour: 100000
  per_day: 1000000
  tokens_day: 1000000000
  concurrent: 10000
  site_day: 1000000
`)
	const n = 300
	var trips, without int64
	for i := range n {
		if status, _ := r.ask(t, i%2 == 1); status != http.StatusOK {
			t.Fatalf("request %d: status %d", i, status)
		}
		trips += r.atCall.Load()
		if r.atCall.Load() == 0 {
			without++
		}
	}
	// The first two requests go to Redis (the scripts loaded, then the
	// shares asked for); then one in 128 or so.
	if without < n-10 {
		t.Errorf("%d of %d requests called capd without a round trip to Redis before (%d round trips in all), want at least %d", without, n, trips, n-10)
	}
	if got := r.used(t); got != n {
		t.Errorf("capd/m1 counted %d requests, want %d", got, n)
	}
}
