package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/quota"
)

// TestLibraryCallerCheck: a Go program's calls go through the same caller
// check as the HTTP API's: a key's chains and limits by its name, the
// visitor limits by the request's user, and a stream's place given back
// when the program closes it early.
func TestLibraryCallerCheck(t *testing.T) {
	checkLeaks(t)
	s := startStackWith(t, stackOptions{config: fairKeys + "callers: {concurrent: 1}\n" + fairChains, env: fairEnv})
	ctx := context.Background()
	req := func(user string) *tollfree.Request {
		return &tollfree.Request{User: user, Messages: []tollfree.Message{{Role: "user", Content: "What does tollfree do?"}}}
	}
	as, err := s.gw.Stream(ctx, "plain", req("v"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := as.Next(); err != nil {
		t.Fatal(err)
	}
	var le *tollfree.CallerLimitError
	if _, err := s.gw.Chat(ctx, "plain", req("v")); !errors.As(err, &le) || le.Name() != "caller concurrent" {
		t.Fatalf("while v's stream is open: %v, want the caller concurrent limit", err)
	}
	if _, err := s.gw.Chat(ctx, "plain", req("w")); err != nil {
		t.Fatalf("another caller: %v", err)
	}
	as.Close() // before its end: the place is given back
	if _, err := s.gw.Chat(ctx, "plain", req("v")); err != nil {
		t.Fatalf("after v closed its stream: %v", err)
	}

	plain, _ := s.gw.Chain("plain")
	site, _ := s.gw.Chain("site")
	call := func(key string) tollfree.Call {
		return tollfree.Call{Request: req(""), Caller: tollfree.Caller{Key: key}}
	}
	if _, err := s.gw.Serve(ctx, site, call("team")); !errors.Is(err, tollfree.ErrChainNotAllowed) {
		t.Errorf("the team key on site: %v, want ErrChainNotAllowed", err)
	}
	if _, err := s.gw.Serve(ctx, plain, call("nobody")); err == nil {
		t.Error("a key that is not in the plan was let through")
	}
	for i := range 2 {
		if _, err := s.gw.Serve(ctx, plain, call("team")); err != nil {
			t.Fatalf("the team key, %d: %v", i+1, err)
		}
	}
	if _, err := s.gw.Serve(ctx, plain, call("team")); !errors.As(err, &le) || le.Scope != quota.ScopeCaller || le.Kind != quota.KindHour {
		t.Errorf("the team key's 3rd in the hour: %v", err)
	}
	if in, waiting := s.gw.Load(); in != 0 || waiting != 0 {
		t.Errorf("the gate holds %d in and %d waiting after every call ended", in, waiting)
	}
}

// TestGatewayBusy: past server.max_requests a request waits its turn in
// a bounded queue; past the queue it gets a clean 503 with Retry-After at
// once, and does not count against its caller's limits. The owner waits
// ahead of the visitors already queued.
func TestGatewayBusy(t *testing.T) {
	checkLeaks(t)
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { // runs last, after the gateway shut down
		if err := goleak.Find(leaks); err != nil {
			t.Errorf("goroutines left after shutdown: %v", err)
		}
	})
	const wait = 7 * time.Minute // the queue's wait: no other timer is this long
	cfg := behindProxy + "admin_token: ${TOLLFREE_ADMIN_TOKEN}\nserver: {max_requests: 1, queue_length: 1, queue_wait: 7m}\ncallers: {per_hour: 2}\n" + fairChains
	s := startStackWith(t, stackOptions{config: cfg, env: fairEnv, latency: map[string]time.Duration{"groq/llama-3.1-8b-instant": 30 * time.Second}})
	h := harnessOf(t, s)
	// Before the gateway closes: a request a failed test left waiting on
	// the fake clock ends, and the close does not hang.
	t.Cleanup(func() { s.clk.Advance(time.Hour) })
	url := s.srv.URL
	queued := func(what string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.clk.BlockUntilDeadline(ctx, s.clk.Now().Add(wait)); err != nil {
			t.Fatalf("%s never queued: %v", what, err)
		}
	}
	first := sendAsync(url, ask{from: visitorAddr("a")})
	h.waitCalls("groq", "llama-3.1-8b-instant", 1)
	second := sendAsync(url, ask{from: visitorAddr("b")})
	queued("the second")

	r := await(t, "the third", sendAsync(url, ask{from: visitorAddr("c")}))
	var env struct{ Error struct{ Type, Code string } }
	_ = json.Unmarshal(r.body, &env)
	if r.status != http.StatusServiceUnavailable || env.Error.Code != "gateway_busy" || env.Error.Type != "server_error" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("the third, with the queue full: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}

	s.clk.Advance(time.Second)
	owner := sendAsync(url, ask{auth: fairAdmin})
	queued("the owner")
	s.clk.Advance(29 * time.Second) // the first is answered; the owner's turn
	if r := await(t, "the first", first); r.status != http.StatusOK {
		t.Fatalf("the first: %d %s", r.status, r.body)
	}
	h.waitCalls("groq", "llama-3.1-8b-instant", 2)
	s.clk.Advance(30 * time.Second)
	if r := await(t, "the owner", owner); r.status != http.StatusOK {
		t.Fatalf("the owner: %d %s", r.status, r.body)
	}
	select {
	case r := <-second:
		t.Fatalf("the second visitor was answered (%d) before the owner's turn ended", r.status)
	default:
	}
	h.waitCalls("groq", "llama-3.1-8b-instant", 3)
	s.clk.Advance(30 * time.Second)
	if r := await(t, "the second", second); r.status != http.StatusOK {
		t.Fatalf("the second: %d %s", r.status, r.body)
	}
	// The third was turned away busy, not counted: it still has its hour.
	for i := range 2 {
		c := sendAsync(url, ask{from: visitorAddr("c")})
		h.waitCalls("groq", "llama-3.1-8b-instant", 4+i)
		s.clk.Advance(30 * time.Second)
		if r := await(t, "the third, later", c); r.status != http.StatusOK {
			t.Fatalf("the third visitor's question %d after it was turned away: %d %s", i+1, r.status, r.body)
		}
	}
	h.waitIdle()
	if in, waiting := s.gw.Load(); in != 0 || waiting != 0 {
		t.Errorf("the gate holds %d in and %d waiting after every request ended", in, waiting)
	}
}
