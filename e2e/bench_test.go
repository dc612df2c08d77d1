package e2e_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
	"github.com/tollfree/tollfree/state/redisstore"
)

// benchRoute returns capd/m1 with a daily cap no benchmark reaches, so
// every Reserve passes its check and spends.
func benchRoute(b *testing.B) *config.Route {
	b.Helper()
	plan, err := config.Parse("bench.yaml", []byte(capdYAML("http://127.0.0.1:1", b.TempDir(), 1_000_000_000)), capdEnv)
	if err != nil {
		b.Fatal(err)
	}
	return plan.Routes["capd/m1"]
}

// benchReserve runs Reserve (the budget check-and-spend of every request:
// the route's and its provider's four windows at once) from GOMAXPROCS
// goroutines and reports reserves per second.
func benchReserve(b *testing.B, st state.Store) {
	rt := benchRoute(b)
	book := quota.New(quota.Options{Store: st})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := book.Reserve(ctx, rt, 100, 0); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reserves/s")
}

// BenchmarkReserveLocal: the budget check against the embedded store.
//
//	go test -run '^$' -bench BenchmarkReserve -benchtime 2s .
func BenchmarkReserveLocal(b *testing.B) {
	ms, err := memstore.Open(memstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ms.Close()
	benchReserve(b, ms)
}

// BenchmarkReserveRedis: the budget check as one script on Redis
// (REDIS_URL or 127.0.0.1:6379), over TCP.
func BenchmarkReserveRedis(b *testing.B) {
	url := testenv.RedisURL(b)
	st, err := redisstore.Open(context.Background(), redisstore.Options{
		URL: url, Namespace: testenv.Namespace(b, url), OpTimeout: 2 * time.Second,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchReserve(b, st)
	if h := st.Health(); !h.Connected {
		b.Fatalf("the store fell back to local state (%s): the figure is not Redis's", h.LastError)
	}
}

// BenchmarkCacheHitHTTP: a cache hit through the gateway's HTTP server in
// process (real HTTP on loopback, one keep-alive connection), reporting p50
// and p99 latency. Target: p99 under 1 ms (issue 5).
//
//	go test -run '^$' -bench BenchmarkCacheHitHTTP -benchtime 20000x .
func BenchmarkCacheHitHTTP(b *testing.B) {
	emu, emuURL := newCapd(b, clock.Real{})
	yaml := capdYAML(emuURL, b.TempDir(), 100) + `
  cached:
    routes: [capd/m2]
    cache_ttl: 1h
`
	plan, err := config.Parse("bench.yaml", []byte(yaml), capdEnv)
	if err != nil {
		b.Fatal(err)
	}
	gw, err := tollfree.New(tollfree.Options{Plan: plan, Clock: clock.Real{}})
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	client := srv.Client()
	const body = `{"model":"cached","messages":[{"role":"user","content":"What does tollfree do?"}]}`
	ask := func() string {
		resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return resp.Header.Get("X-Tollfree-Cache")
	}
	if c := ask(); c != "miss" {
		b.Fatalf("first request: X-Tollfree-Cache %q, want miss", c)
	}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		c := ask()
		lat[i] = time.Since(start)
		if c != "hit" {
			b.Fatalf("request %d: X-Tollfree-Cache %q, want hit", i, c)
		}
	}
	b.StopTimer()
	if n := emu.Calls("capd", "m2"); n != 1 {
		b.Fatalf("capd/m2 called %d times, want 1 (every other request a hit)", n)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
