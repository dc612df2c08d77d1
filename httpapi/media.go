package httpapi

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// jsonOnly refuses, with 415 in OpenAI's error envelope, a request with a
// body (POST, PUT, PATCH) whose Content-Type is not application/json
// (parameters allowed, a charset only if UTF-8). It writes the error itself
// and reports whether to go on.
//
// A missing Content-Type is refused too. This is what stops any web page
// from making a visitor's browser call a gateway on localhost (issue 10): a
// browser sends a cross-site POST without asking first only as a "simple
// request", whose type is text/plain, application/x-www-form-urlencoded or
// multipart/form-data, or none at all (a Blob body); application/json needs
// a CORS preflight, which this server never grants. The OpenAI SDKs
// (Python, Node, Go) always send application/json, as does
// `curl -H 'Content-Type: application/json'`; a bare `curl -d` (form type)
// is refused with a message that says what to send.
func jsonOnly(w http.ResponseWriter, r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return true
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		writeError(w, http.StatusUnsupportedMediaType, "the request has no Content-Type; send the JSON body with Content-Type: application/json", "invalid_request_error", "", "unsupported_media_type")
		return false
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json, not "+strconv.Quote(clip(ct, 80)), "invalid_request_error", "", "unsupported_media_type")
		return false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		writeError(w, http.StatusUnsupportedMediaType, "JSON bodies must be UTF-8, not charset "+strconv.Quote(clip(cs, 40)), "invalid_request_error", "", "unsupported_media_type")
		return false
	}
	return true
}

// clip cuts s to at most n bytes, so that an error never echoes a long
// header back.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
