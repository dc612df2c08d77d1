package tollfree_test

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
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/state/redisstore"
)

// TestRedisOneRoundTripBeforeTheCall: in Redis mode, with caller limits and
// a route's budget on, everything a request needs from Redis before its
// upstream call is one round trip, answered or streamed (issue 18); the
// corrections after the answer reach Redis without the caller waiting. A
// caller past its limits still gets its 429, and nothing is spent on the
// route for it.
func TestRedisOneRoundTripBeforeTheCall(t *testing.T) {
	checkLeaks(t)
	url := testenv.RedisURL(t)
	ns := testenv.Namespace(t, url)
	// The fake clock keeps the store's background refresh still, so that
	// only the request's own round trips happen while it runs.
	clk := clock.NewFake(t0)
	emu, emuURL := newCapd(t, clk)
	yaml := capdYAML(emuURL, t.TempDir(), 1000) + `
callers:
  per_hour: 4
  per_day: 100
  tokens_day: 1000000
  concurrent: 4
  site_day: 1000
`
	plan, err := config.Parse("capd.yaml", []byte(yaml), capdEnv)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	st, err := redisstore.Open(context.Background(), redisstore.Options{URL: url, Namespace: ns, Clock: clk, OpTimeout: 2 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := tollfree.New(tollfree.Options{Plan: plan, Store: st, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	// Each request counts its round trips on its own counter.
	var counter atomic.Pointer[atomic.Int64]
	h := gw.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(redisstore.CountRoundTrips(r.Context(), counter.Load())))
	}))
	t.Cleanup(func() {
		srv.Close()
		gw.Close()
		st.Close()
	})
	var atCall atomic.Int64
	emu.OnBody(func(_, _ string, _ []byte) { atCall.Store(counter.Load().Load()) })

	ask := func(stream bool) (int, http.Header) {
		t.Helper()
		counter.Store(new(atomic.Int64))
		atCall.Store(-1)
		body := `{"model":"capped","messages":[{"role":"user","content":"What does tollfree do?"}]}`
		if stream {
			body = `{"model":"capped","stream":true,"messages":[{"role":"user","content":"What does tollfree do?"}]}`
		}
		resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		// What the answer queued (settles, the request given back) is
		// applied off the caller's path; wait for it here, so that the
		// next request is counted alone.
		gw.Budget().Close()
		st.Flush(context.Background())
		return resp.StatusCode, resp.Header
	}
	used := func() int64 {
		t.Helper()
		l, err := gw.Budget().Left(context.Background(), gw.Plan().Routes["capd/m1"])
		if err != nil {
			t.Fatal(err)
		}
		return l.Route.RPD.Used
	}

	// The first request loads the scripts into Redis (two round trips for
	// each the first time): not counted.
	if status, _ := ask(false); status != http.StatusOK {
		t.Fatalf("first request: status %d", status)
	}
	for _, stream := range []bool{false, true} {
		status, _ := ask(stream)
		if status != http.StatusOK {
			t.Fatalf("stream %v: status %d", stream, status)
		}
		if n := atCall.Load(); n != 1 {
			t.Errorf("stream %v: %d round trips to Redis before the upstream call, want 1", stream, n)
		}
	}
	if status, _ := ask(false); status != http.StatusOK { // the hour's 4th
		t.Fatalf("fourth request: status %d", status)
	}
	calls, spent := emu.Calls("capd", "m1"), used()
	if spent != 4 {
		t.Errorf("capd/m1 counted %d requests, want 4", spent)
	}
	status, hdr := ask(false)
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Errorf("past the caller's hour: status %d, Retry-After %q; want a 429 with a Retry-After", status, hdr.Get("Retry-After"))
	}
	if n := emu.Calls("capd", "m1"); n != calls {
		t.Errorf("a refused caller's request called capd/m1 (%d calls, want %d)", n, calls)
	}
	if n := used(); n != spent {
		t.Errorf("a refused caller's request spent on capd/m1: %d counted, want %d", n, spent)
	}
}
