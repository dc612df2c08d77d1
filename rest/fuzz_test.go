package rest

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
)

// FuzzPolicy feeds the classifier's garbage (the seeds of
// failure.FuzzClassify) to the policy: whatever the verdict, a rest never
// ends before now, and a rest always names what it holds back.
func FuzzPolicy(f *testing.F) {
	files, _ := filepath.Glob("../failure/testdata/*.json")
	built, _ := filepath.Glob("../failure/testdata/built/*.json")
	for _, name := range append(files, built...) {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatalf("read seed: %v", err)
		}
		f.Add(429, b, "2", uint16(len(b)/2))
		f.Add(400, b, "", uint16(40))
	}
	f.Add(401, []byte(`{"error":{"message":"bad key "}}`), "Tue, 10 Mar 2026 12:01:00 GMT", uint16(30))
	f.Add(200, []byte(`[{"error":{"message":"x","code":429,"metadata":{"raw":{"a":1},"headers":{"X-RateLimit-Reset":"1e400"}}}}]`), "NaN", uint16(3))
	f.Add(0, []byte("<html><title>"), "-1", uint16(0))
	rt := &config.Route{ID: "p/m", Provider: &config.Provider{Name: "p"}}
	f.Fuzz(func(t *testing.T, status int, body []byte, retryAfter string, streak uint16) {
		h := http.Header{"Retry-After": {retryAfter}, "X-Ratelimit-Reset": {retryAfter}}
		err := &failure.UpstreamError{Provider: "p", Flavor: "groq", Model: "m", Status: status % 1000, Header: h, Body: body}
		if status%3 != 0 {
			err.Err = errors.New("dial tcp: connection refused")
		}
		now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		v := failure.Classify(err, now)
		until, key := DefaultPolicy().Rest(v, rt, now, int(streak), nextMidnight(time.UTC)(now))
		if !until.IsZero() && until.Before(now) {
			t.Fatalf("rest ends before now: %v", until)
		}
		if until.IsZero() != key.IsZero() {
			t.Fatalf("rest until %v of key %v: a rest names what it holds back", until, key)
		}
	})
}
