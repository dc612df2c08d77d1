package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/testenv"
)

// The addresses of the connection fairness test: Linux routes all of
// 127.0.0.0/8 to the loopback interface, so a client bound to 127.0.0.2
// is another address than one bound to 127.0.0.3.
const (
	hoarderAddr = "127.0.0.2"
	callerAddr  = "127.0.0.3"
)

// dialerFrom dials from the loopback address ip.
func dialerFrom(ip string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
}

// raiseFileLimit lets the test process hold n more descriptors.
func raiseFileLimit(t *testing.T, n uint64) {
	t.Helper()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if rl.Cur >= n {
		return
	}
	if rl.Max < n {
		t.Fatalf("the hard limit on open files is %d, the test needs %d (ulimit -Hn)", rl.Max, n)
	}
	rl.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
}

// TestOneClientCannotHoldEveryConnection: `tollfree serve` at its defaults
// (max_connections 256, 32 from one address) while one client opens 2,000
// connections and holds them idle, half after one request on each, half
// without ever sending one. Every one of that client's requests past its
// cap is answered 503 too_many_connections with Retry-After (never a
// reset, never closed unanswered), /readyz stays ready, and a normal
// caller from another address gets every one of its 60 answers.
//
// Before (issue 32), with 300 idle connections the normal caller got 6 of
// 60 answers (53 connection resets, 1 503): nothing capped one address,
// and past 16 waiting connections extra ones were closed unanswered.
func TestOneClientCannotHoldEveryConnection(t *testing.T) {
	checkLeaks(t)
	const hoard = 2000
	raiseFileLimit(t, 3*hoard)
	bin := testenv.BuildTollfree(t)
	ls := startLive(t, bin, "30s", "  fair: {routes: [capd/m2]}\n")
	addr := strings.TrimPrefix(ls.url, "http://")

	// The hoarder: conns with one request answered on each, then silent
	// ones. Each request gets a 200 within its cap, a 503 past it.
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	codes := map[string]int{}
	hoarder := dialerFrom(hoarderAddr)
	for i := range hoard / 2 {
		c, err := hoarder.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("hoarder connection %d: %v", i, err)
		}
		held = append(held, c)
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprint(c, "GET /v1/models HTTP/1.1\r\nHost: gateway\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			codes["no answer: "+err.Error()]++
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == 200:
			codes["200"]++
		case resp.StatusCode == 503 && strings.Contains(string(b), `"too_many_connections"`) && resp.Header.Get("Retry-After") == "1":
			codes["503 too_many_connections"]++
		default:
			codes[fmt.Sprintf("%d %.80s", resp.StatusCode, b)]++
		}
	}
	for i := range hoard / 2 {
		c, err := hoarder.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("hoarder silent connection %d: %v", i, err)
		}
		held = append(held, c)
	}
	t.Logf("the hoarder's %d requests: %v", hoard/2, codes)
	// Its idle connections are reclaimed for its newer ones after 1s, so
	// more than 32 may be answered, never more than 32 held.
	if len(codes) != 2 || codes["200"] == 0 || codes["503 too_many_connections"] == 0 {
		t.Errorf("the hoarder's requests: %v; want some answered 200 and every other one 503 too_many_connections", codes)
	}

	// The normal caller, while the hoarder holds its connections.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: dialerFrom(callerAddr).DialContext}}
	answered, failures := 0, map[string]int{}
	for range 60 {
		resp, err := client.Post(ls.url+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"fair","messages":[{"role":"user","content":"What does tollfree do?"}]}`))
		if err != nil {
			failures[err.Error()]++
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			failures[fmt.Sprintf("%d %.80s", resp.StatusCode, b)]++
			continue
		}
		answered++
	}
	if answered != 60 {
		t.Errorf("the normal caller got %d of 60 answers; failures: %v", answered, failures)
	}
	resp, err := client.Get(ls.url + "/readyz")
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	var rd struct {
		Status      string `json:"status"`
		Connections struct{ Open, Max int }
	}
	_ = json.NewDecoder(resp.Body).Decode(&rd)
	resp.Body.Close()
	if resp.StatusCode != 200 || rd.Connections.Max != 256 || rd.Connections.Open > 40 {
		t.Errorf("/readyz with the hoarder capped: %d %+v; want 200 with at most 32 of the hoarder's connections and the caller's open of 256", resp.StatusCode, rd)
	}
	client.CloseIdleConnections()
	if err := ls.proc.Stop(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Errorf("tollfree serve after SIGTERM: %v", err)
	}
}
