package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
)

// serveProfiler serves Go's profiler on its own listener and mux, apart
// from the gateway's, for `serve -pprof` (bench/run.sh uses it to show
// where a request's time and allocations go). Nothing of it runs unless the
// flag is given. It returns a func that stops it.
func serveProfiler(addr string, stdout io.Writer) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for -pprof on %s: %w (pick another address)", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	fmt.Fprintf(stdout, "profiler on http://%s/debug/pprof/\n", ln.Addr())
	return func() { srv.Close() }, nil
}
