package httpapi

import (
	"crypto/subtle"
	"net/http"

	"github.com/tollfree/tollfree/caller"
)

// BearerCheck returns a check that a request carries one of tokens as
// "Authorization: Bearer <token>" (the scheme in any case, as the chat API
// reads it: caller.Bearer), compared in constant time. Empty tokens
// are left out; with none left, no request passes.
func BearerCheck(tokens ...string) func(*http.Request) bool {
	var keys [][]byte
	for _, t := range tokens {
		if t != "" {
			keys = append(keys, []byte(t))
		}
	}
	return func(r *http.Request) bool {
		got, ok := caller.Bearer(r.Header.Get("Authorization"))
		if !ok || len(keys) == 0 {
			return false
		}
		match := 0
		for _, k := range keys {
			match |= subtle.ConstantTimeCompare([]byte(got), k)
		}
		return match == 1
	}
}

// RequireToken serves h only to requests that pass allowed; the others get
// 401 in OpenAI's error envelope. It guards what a gateway that is not open
// must not show to anyone (issue 10: /metrics names every route, its
// budget and its failures).
func RequireToken(h http.Handler, allowed func(*http.Request) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tollfree"`)
			writeError(w, http.StatusUnauthorized, "this endpoint needs a token: send Authorization: Bearer <gateway key or admin token>", "invalid_request_error", "", "invalid_api_key")
			return
		}
		h.ServeHTTP(w, r)
	})
}
