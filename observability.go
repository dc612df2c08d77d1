package tollfree

import (
	"net/http"

	"github.com/tollfree/tollfree/route"
)

// recorders returns what must see every attempt besides the call log
// (live statistics, metrics). It runs before the router is built.
// Filled in by the status page work (issue 6).
func (g *Gateway) recorders(o *Options) []route.Recorder {
	return nil
}

// handlers returns the operator's handlers to mount beside the API (status
// page, admin API, metrics), by ServeMux pattern. It runs after the router
// is built. Filled in by the status page work (issue 6).
func (g *Gateway) handlers(o *Options) map[string]http.Handler {
	return nil
}
