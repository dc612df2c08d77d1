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
// dialing); ReverseProxy flushes a text/event-stream answer on every
// write by itself.
package main

import (
	"bytes"
	"flag"
	"io"
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
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	// The body is read whole before the call, as any gateway that looks at
	// a request must. Streamed through instead, it races the upstream's
	// answer: an upstream that answers before the request body's EOF was
	// read makes the transport close the connection under the answer (one
	// stream in 80 broke so in this harness).
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "proxy: reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		p.ServeHTTP(w, r)
	})
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("proxy: %s -> %s", *addr, u)
	log.Fatal(srv.ListenAndServe())
}
