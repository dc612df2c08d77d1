package e2e_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/state/redisstore"
)

// This file holds what the tests of issue 12 (who is calling, and the
// limits that cannot be dodged) share: a request as a client sends it, and
// two gateways on one Redis that every limit is shown holding across.

// visitorAddr is the address a named visitor calls from, as a trusted
// proxy forwards it: one address per name, in 198.18.0.0/15 (RFC 2544),
// which no test config trusts.
func visitorAddr(name string) string {
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf("198.%d.%d.%d", 18+sum[0]%2, sum[1], 1+sum[2]%254)
}

// ask is one chat request as a client sends it.
type ask struct {
	chain     string // the model; default "plain"
	text      string // the question; default "What does tollfree do?"
	auth      string // the bearer token; "" sends none
	from      string // X-Forwarded-For; "" sends none
	user      string // the user field; "" leaves it out
	header    map[string]string
	cookie    *http.Cookie
	stream    bool
	maxTokens int
}

// request builds a's HTTP request to the gateway at url.
func (a ask) request(ctx context.Context, url string) *http.Request {
	if a.chain == "" {
		a.chain = "plain"
	}
	if a.text == "" {
		a.text = "What does tollfree do?"
	}
	body := map[string]any{"model": a.chain, "stream": a.stream, "messages": []map[string]string{{"role": "user", "content": a.text}}}
	if a.user != "" {
		body["user"] = a.user
	}
	if a.maxTokens > 0 {
		body["max_tokens"] = a.maxTokens
	}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if a.auth != "" {
		req.Header.Set("Authorization", "Bearer "+a.auth)
	}
	if a.from != "" {
		req.Header.Set("X-Forwarded-For", a.from)
	}
	for k, v := range a.header {
		req.Header.Set(k, v)
	}
	if a.cookie != nil {
		req.AddCookie(a.cookie)
	}
	return req
}

// send sends a to the gateway at url and reads the whole reply.
func send(t testing.TB, url string, a ask) reply {
	t.Helper()
	resp, err := http.DefaultClient.Do(a.request(context.Background(), url))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// sendAsync sends a in a goroutine; the reply arrives on the channel.
func sendAsync(url string, a ask) <-chan reply {
	ch := make(chan reply, 1)
	go func() {
		resp, err := http.DefaultClient.Do(a.request(context.Background(), url))
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

// await returns the reply on ch; a bound on a goroutine, not a clock.
func await(t testing.TB, what string, ch <-chan reply) reply {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no reply", what)
		return reply{}
	}
}

// pair is two gateways sharing one Redis (as two instances of a site do),
// each in front of its own emulator, on one fake clock. Requests go to
// each in turn, so every limit is shown holding across instances.
type pair struct {
	t   *testing.T
	clk *clock.Fake
	in  [2]*stack
	n   int
}

// newPair starts two gateways configured by cfg (EMU stands for the
// emulator), with env, on one Redis namespace of their own.
func newPair(t *testing.T, cfg string, env map[string]string, latency map[string]time.Duration) *pair {
	t.Helper()
	return newPairWith(t, stackOptions{config: cfg, env: env, latency: latency})
}

// newPairWith is newPair with the stack's options in full; their clock
// and store are the pair's.
func newPairWith(t *testing.T, o stackOptions) *pair {
	t.Helper()
	url := testenv.RedisURL(t)
	ns := testenv.Namespace(t, url)
	p := &pair{t: t, clk: clock.NewFake(t0)}
	var stores [2]*redisstore.Store
	for i := range p.in {
		// A generous OpTimeout: a call that timed out would be served by
		// the instance's local state, and the limit held per instance only.
		st, err := redisstore.Open(context.Background(), redisstore.Options{
			URL: url, Namespace: ns, OpTimeout: 2 * time.Second, Clock: p.clk, Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatalf("redisstore.Open: %v", err)
		}
		t.Cleanup(func() { st.Close() })
		stores[i] = st
		o.clock, o.store = p.clk, st
		p.in[i] = startStackWith(t, o)
	}
	t.Cleanup(func() {
		// Runs before the gateways are closed: a request a failed test left
		// waiting on the fake clock ends, and the close does not hang.
		p.clk.Advance(time.Hour)
		for i, st := range stores {
			if h := st.Health(); !h.Connected {
				t.Errorf("instance %d fell back to local state (%s): its counts were not shared", i, h.LastError)
			}
		}
	})
	return p
}

// next is the instance the next request goes to.
func (p *pair) next() *stack {
	s := p.in[p.n%len(p.in)]
	p.n++
	return s
}

// send sends a and returns the reply; a request left waiting on the fake
// clock (one a limit should have refused) fails the test, bounded.
func (p *pair) send(a ask) reply {
	p.t.Helper()
	return await(p.t, "a request", p.sendAsync(a))
}

func (p *pair) sendAsync(a ask) <-chan reply { return sendAsync(p.next().srv.URL, a) }

// calls is how many calls both emulators got for a route.
func (p *pair) calls(provider, model string) int {
	return p.in[0].emu.Calls(provider, model) + p.in[1].emu.Calls(provider, model)
}

// waitCalls waits until both emulators together got n calls for a route:
// a real network event, so it polls, bounded.
func (p *pair) waitCalls(provider, model string, n int) {
	p.t.Helper()
	testenv.WaitFor(p.t, fmt.Sprintf("%d calls of %s/%s", n, provider, model), func() bool { return p.calls(provider, model) >= n })
}

// waitIdle waits until neither gateway is serving a request.
func (p *pair) waitIdle() {
	p.t.Helper()
	testenv.WaitFor(p.t, "both gateways idle", func() bool { return p.in[0].active.Load() == 0 && p.in[1].active.Load() == 0 })
}

// pass sends a and wants a model's answer.
func (p *pair) pass(what string, a ask) reply {
	p.t.Helper()
	r := p.send(a)
	p.wantAnswer(what, r)
	return r
}

func (p *pair) wantAnswer(what string, r reply) {
	p.t.Helper()
	if r.status != http.StatusOK || r.header.Get("X-Tollfree-Fallback") != "" {
		p.t.Fatalf("%s: status %d, fallback %q, want a model's answer: %s", what, r.status, r.header.Get("X-Tollfree-Fallback"), r.body)
	}
}

// limited sends a and wants it refused by the limit named limit ("caller
// hour"): a 429 in OpenAI's format, with Retry-After and the headers
// naming the limit.
func (p *pair) limited(what string, a ask, limit string) reply {
	p.t.Helper()
	r := p.send(a)
	wantLimited(p.t, what, r, limit)
	return r
}

func wantLimited(t testing.TB, what string, r reply, limit string) {
	t.Helper()
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("%s: status %d, want 429 (%s): %s", what, r.status, limit, r.body)
	}
	var env struct {
		Error struct{ Message, Type, Code string }
	}
	if err := json.Unmarshal(r.body, &env); err != nil || env.Error.Type != "rate_limit_error" || env.Error.Code != "caller_limit" || env.Error.Message == "" {
		t.Errorf("%s: the 429 is not OpenAI's rate_limit_error/caller_limit envelope: %s", what, r.body)
	}
	if got := r.header.Get("X-Tollfree-Limit"); got != limit {
		t.Errorf("%s: X-Tollfree-Limit %q, want %q", what, got, limit)
	}
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("%s: Retry-After %q, want whole seconds", what, r.header.Get("Retry-After"))
	}
}

// wantHeaders checks r's headers against want ("" wants one absent).
func wantHeaders(t testing.TB, what string, r reply, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s: %s %q, want %q", what, k, got, v)
		}
	}
}
