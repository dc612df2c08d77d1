package tollfree

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/secret"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

// The sinks scrub even what reached them unscrubbed (a custom Upstream, an
// operator's text): these test each wrapper on its own.

const sinkKey = "tfk.Zq9-weird+KEY/with=signs"

func TestScrubHandler(t *testing.T) {
	set := secret.New(sinkKey)
	h := scrubHandler{set: set, next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/chat/completions":
			if r.URL.Query().Get("fail") != "" {
				w.Header().Set("Content-Length", "999")
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"error":{"message":"Invalid API Key: ` + sinkKey + `"}}`))
				return
			}
			w.Write([]byte("an answer may quote anything: " + sinkKey))
			w.(http.Flusher).Flush()
		case "/status":
			if ae := r.Header.Get("Accept-Encoding"); ae != "" {
				t.Errorf("the status handler was offered %q: it could compress past the scrubbing", ae)
			}
			w.Header().Set("Content-Length", "999")
			w.Write([]byte("<code>" + sinkKey[:10]))
			w.Write([]byte(sinkKey[10:] + "</code>"))
		}
	})}
	get := func(target string) (*http.Response, string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		h.ServeHTTP(rec, req)
		b, _ := io.ReadAll(rec.Result().Body)
		return rec.Result(), string(b)
	}
	if resp, body := get("/v1/chat/completions?fail=1"); resp.StatusCode != 400 || body != `{"error":{"message":"Invalid API Key: [secret]"}}` || resp.Header.Get("Content-Length") != "" {
		t.Errorf("error answer: %d %q, Content-Length %q", resp.StatusCode, body, resp.Header.Get("Content-Length"))
	}
	if _, body := get("/v1/chat/completions"); !strings.HasSuffix(body, sinkKey) {
		t.Errorf("a successful answer was changed: %q", body)
	}
	resp, body := get("/status")
	if body != "<code>[secret]</code>" || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Errorf("status page: %q, Content-Length %q", body, resp.Header.Get("Content-Length"))
	}
}

func TestScrubStoreAndRecorder(t *testing.T) {
	set := secret.New(sinkKey)
	ms, err := memstore.Open(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	st := scrubStore{Store: ms, set: set}
	now := time.Now()
	if err := st.SetRest(context.Background(), state.Rest{Key: "provider:x", Until: now.Add(time.Hour), Reason: "paused: " + sinkKey}); err != nil {
		t.Fatal(err)
	}
	rs, _ := ms.Rests(context.Background(), now)
	if len(rs) != 1 || rs[0].Reason != "paused: [secret]" {
		t.Errorf("rests kept %+v", rs)
	}

	var got []route.Attempt
	rec := scrubRecorder{set: set, next: recorderFunc(func(a *route.Attempt) { got = append(got, *a) })}
	a := &route.Attempt{Route: "x/m", Error: "auth: Invalid API Key: " + sinkKey}
	rec.RecordAttempt(a)
	rec.RecordAttempt(&route.Attempt{Route: "x/m"})
	if len(got) != 2 || got[0].Error != "auth: Invalid API Key: [secret]" || got[0].Route != "x/m" {
		t.Errorf("recorded %+v", got)
	}
	if !strings.Contains(a.Error, sinkKey) {
		t.Error("the router's own attempt was changed: scrub a copy")
	}
}

type recorderFunc func(*route.Attempt)

func (f recorderFunc) RecordAttempt(a *route.Attempt) { f(a) }
