//go:build unix

package e2e_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

// hopEvents is a fixed streamed answer as bench/upstream sends it: a role
// chunk, 18 word chunks, a finish with usage, and [DONE], 21 events.
func hopEvents() [][]byte {
	head := `{"id":"chatcmpl-bench0000000000000001","object":"chat.completion.chunk","created":1764547200,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_bench0001","choices":[{"index":0,"delta":`
	ev := func(delta, finish, usage string) []byte {
		return []byte("data: " + head + delta + `,"logprobs":null,"finish_reason":` + finish + `}]` + usage + "}\n\n")
	}
	events := [][]byte{ev(`{"role":"assistant","content":""}`, "null", "")}
	for _, w := range []string{"The", " gateway", " forwards", " each", " request", " to", " the", " first", " free", " route", " that", " can", " answer", ",", " and", " says", " which", "."} {
		events = append(events, ev(`{"content":`+strconv.Quote(w)+`}`, "null", ""))
	}
	events = append(events, ev(`{}`, `"stop"`, `,"usage":{"prompt_tokens":330,"completion_tokens":18,"total_tokens":348}`))
	return append(events, []byte("data: [DONE]\n\n"))
}

// BenchmarkStreamHop measures one streamed request through the gateway
// against the same through a bare httputil.ReverseProxy, the floor of any
// Go HTTP hop (issue 18 item 3: streams at 0.9 of the proxy's rate). Both
// stand in front of one fixed upstream that flushes each of its 21 events,
// as bench/upstream does, and get the load harness's request (about 1.6 KB)
// from 16 concurrent callers. Client, upstream and hop share this process,
// so the gap in allocs/op and cpu-µs/op (the process's CPU time per
// request, which a shared machine blurs less than ns/op) between the two is
// what the gateway spends beyond the proxy.
//
//	go test -run '^$' -bench BenchmarkStreamHop -benchmem .
func BenchmarkStreamHop(b *testing.B) {
	events := hopEvents()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, ev := range events {
			if _, err := w.Write(ev); err != nil {
				return
			}
			_ = rc.Flush()
		}
	}))
	defer up.Close()
	body, err := os.ReadFile("openai/testdata/bench_request.json")
	if err != nil {
		b.Fatal(err)
	}
	body = append(bytes.TrimSuffix(bytes.TrimSpace(body), []byte("}")), `,"stream":true}`...)

	u, _ := url.Parse(up.URL)
	rp := httputil.NewSingleHostReverseProxy(u)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	rp.Transport = tr
	defer tr.CloseIdleConnections()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()

	s := startStackWith(b, stackOptions{clock: clock.Real{},
		providers: "providers:\n  mock:\n    dialect: openai\n    base_url: " + up.URL + "/v1\n    models:\n      gpt-4o-mini: {}\n",
		config:    "chains:\n  gpt-4o-mini:\n    routes: [mock/gpt-4o-mini]\n"})

	for _, bb := range []struct{ name, url string }{
		{"proxy", proxy.URL + "/v1/chat/completions"},
		{"gateway", s.srv.URL + "/v1/chat/completions"},
	} {
		b.Run(bb.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer client.CloseIdleConnections()
			b.ReportAllocs()
			b.SetParallelism(8) // 16 callers on 2 CPUs, as the harness's -c16
			cpu := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := hopOnce(client, bb.url, body); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// hopOnce makes one streamed request and reads it to [DONE].
func hopOnce(client *http.Client, url string, body []byte) error {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	done := false
	for {
		line, err := rd.ReadSlice('\n')
		if bytes.HasPrefix(line, []byte("data: [DONE]")) {
			done = true
		}
		if err != nil {
			break
		}
	}
	if resp.StatusCode != http.StatusOK || !done {
		return &hopError{resp.StatusCode}
	}
	return nil
}

type hopError struct{ status int }

func (e *hopError) Error() string { return "status " + strconv.Itoa(e.status) + " or no [DONE]" }

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
