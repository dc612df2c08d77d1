// Command proxy is the floor of bench/run.sh: a bare
// net/http/httputil.ReverseProxy in front of the fixed upstream, with
// nothing else on the path. Whatever a Go HTTP hop costs (parsing a
// request, dialing or reusing a connection, copying a body, flushing SSE
// chunks), this pays too; what tollfree costs above it is its own.
//
//	go run ./bench/proxy -addr 127.0.0.1:18085 -upstream http://127.0.0.1:18080
//
// The transport keeps as many idle connections per host as the load has
// connections (the default keeps two, which would make the floor pay for
// dialing), and FlushInterval -1 flushes every write, as a streaming proxy
// must.
package main

import (
	"flag"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18085", "where to listen")
	upstream := flag.String("upstream", "http://127.0.0.1:18080", "the upstream's base URL")
	flag.Parse()
	u, err := url.Parse(*upstream)
	if err != nil || u.Host == "" {
		log.Fatalf("proxy: -upstream %q is not a URL like http://127.0.0.1:18080", *upstream)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 1024
	tr.MaxIdleConnsPerHost = 1024
	p := httputil.NewSingleHostReverseProxy(u)
	p.Transport = tr
	p.FlushInterval = -1
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.Handle("/", p)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("proxy: %s -> %s", *addr, u)
	log.Fatal(srv.ListenAndServe())
}
