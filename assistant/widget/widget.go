// Package widget owns the chat widget (issue 14 item 8): one script,
// embedded in the binary, that a static site loads with
//
//	<script src="https://gateway.example.com/widget.js" data-chain="site" defer></script>
//
// to give its visitors a chat box talking to the gateway's POST /v1/ask
// (streamed), showing search answers as links and a clear message when a
// visitor's limit is reached. It keeps the conversation in the page only:
// no cookie, no storage. The script needs no build step and makes no
// request but to the origin it was loaded from.
//
// Handler serves it cacheably (an ETag, and a year with ?v=Version()) and
// to any site: it is public code, loaded as a script, holding no secret,
// so it carries Access-Control-Allow-Origin: * and
// Cross-Origin-Resource-Policy: cross-origin. Who may call /v1/ask is the
// assistant's business (its origins), not the script's.
package widget

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

//go:embed widget.js
var script []byte

// version is the first 16 hex digits of the script's SHA-256, worked out
// the first time it is asked: hashed when the package was initialised, it
// made every process, serving the widget or not, read the script and run
// an init at start (issue 18 item 7).
var version = sync.OnceValue(func() string {
	sum := sha256.Sum256(script)
	return hex.EncodeToString(sum[:8])
})

// Path is where the gateway serves the script.
const Path = "/widget.js"

// Cache lifetimes: an unversioned URL is revalidated hourly (a new binary's
// script reaches visitors within the hour); a URL carrying ?v= the current
// version never changes.
const (
	cacheShort     = "public, max-age=3600"
	cacheImmutable = "public, max-age=31536000, immutable"
)

// Version identifies the script's content. A page may load
// /widget.js?v=<Version> to have it cached for a year.
func Version() string { return version() }

// Script returns the script's bytes (a copy).
func Script() []byte { return append([]byte(nil), script...) }

// Handler returns the handler of GET and HEAD /widget.js. It is safe for
// concurrent use.
func Handler() http.Handler { return http.HandlerFunc(serve) }

func serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET, HEAD")
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		h.Set("Allow", "GET, HEAD, OPTIONS")
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusMethodNotAllowed)
		w.Write([]byte(`{"error":{"message":"` + r.Method + ` is not allowed on /widget.js; use GET","type":"invalid_request_error","code":"method_not_allowed"}}`))
		return
	}
	etag := `"` + version() + `"`
	h.Set("ETag", etag)
	h.Set("Cache-Control", cacheShort)
	if r.URL.Query().Get("v") == version() {
		h.Set("Cache-Control", cacheImmutable)
	}
	h.Set("X-Content-Type-Options", "nosniff")
	if matches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(script)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(script)
}

// matches tells whether an If-None-Match header names etag (or is *).
func matches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}
