package widget

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, srv *httptest.Server, method, path string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestServe: a browser on any site can load the script (JavaScript content
// type, nosniff, CORS and CORP open), cache it (ETag answered with 304; a
// year for the versioned URL) and nothing else is served.
func TestServe(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()

	resp, body := get(t, srv, "GET", Path, map[string]string{"Origin": "https://site.example"})
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", Path, resp.StatusCode)
	}
	want := map[string]string{
		"Content-Type":                 "text/javascript; charset=utf-8",
		"X-Content-Type-Options":       "nosniff",
		"Access-Control-Allow-Origin":  "*",
		"Cross-Origin-Resource-Policy": "cross-origin",
		"Cache-Control":                "public, max-age=3600",
		"ETag":                         `"` + Version() + `"`,
	}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if !bytes.Equal(body, Script()) || !bytes.Contains(body, []byte("/v1/ask")) {
		t.Errorf("body is not the widget script (%d bytes)", len(body))
	}

	resp, body = get(t, srv, "GET", Path, map[string]string{"If-None-Match": `W/"other", "` + Version() + `"`})
	if resp.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("GET with the ETag: %d, %d bytes; want 304, none", resp.StatusCode, len(body))
	}
	if resp, _ = get(t, srv, "GET", Path, map[string]string{"If-None-Match": `"stale"`}); resp.StatusCode != 200 {
		t.Errorf("GET with a stale ETag: %d, want 200", resp.StatusCode)
	}

	resp, _ = get(t, srv, "GET", Path+"?v="+Version(), nil)
	if got := resp.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
		t.Errorf("versioned URL: Cache-Control %q, want a year, immutable", got)
	}
	resp, _ = get(t, srv, "GET", Path+"?v=0000", nil)
	if got := resp.Header.Get("Cache-Control"); got != "public, max-age=3600" {
		t.Errorf("another version's URL: Cache-Control %q, want an hour", got)
	}

	resp, body = get(t, srv, "HEAD", Path, nil)
	if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Type") != want["Content-Type"] {
		t.Errorf("HEAD: %d, %d bytes, %q", resp.StatusCode, len(body), resp.Header.Get("Content-Type"))
	}
	resp, _ = get(t, srv, "OPTIONS", Path, map[string]string{"Origin": "https://site.example", "Access-Control-Request-Method": "GET"})
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("preflight: %d, allow-origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	resp, body = get(t, srv, "POST", Path, nil)
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(body), "use GET") {
		t.Errorf("POST: %d %s, want 405 saying to use GET", resp.StatusCode, body)
	}
}

// TestScriptIsSelfContained: the script reaches nothing but its own origin,
// stores nothing in the browser but the visitor id (issue 32), and never
// parses model output as HTML.
func TestScriptIsSelfContained(t *testing.T) {
	s := stripComments(string(Script()))
	for _, banned := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
		"sessionStorage", "document.cookie", "indexedDB", "eval(", "new Function", "import(", "http://", "https://gateway"} {
		if strings.Contains(s, banned) {
			t.Errorf("the widget script uses %q", banned)
		}
	}
	uses := strings.Count(s, "localStorage")
	if kept := strings.Count(s, "localStorage.getItem(visitorKey)") + strings.Count(s, "localStorage.setItem(visitorKey, id)"); uses != 2 || kept != 2 {
		t.Errorf("the widget script uses localStorage %d times, %d of them for the visitor id: want the visitor id's get and set only", uses, kept)
	}
}

// stripComments drops the script's block comments (its usage note names a
// URL).
func stripComments(s string) string {
	for {
		i := strings.Index(s, "/*")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "*/")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+2:]
	}
}
