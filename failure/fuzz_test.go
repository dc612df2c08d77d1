package failure

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The keys FuzzClassify plants; no output may ever contain them.
const (
	plantedGroq   = "gsk_live_SECRET123"
	plantedGoogle = "AIzaSySECRET"
)

// FuzzClassify feeds garbage bodies, statuses and headers, with keys planted
// in the body, the headers and the transport error. Classify must not panic,
// and no Message, Code, LogText or Error text may hold a planted key.
func FuzzClassify(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	built, _ := filepath.Glob("testdata/built/*.json")
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
	f.Fuzz(func(t *testing.T, status int, body []byte, retryAfter string, pos uint16) {
		p := int(pos)
		if p > len(body) {
			p = len(body)
		}
		planted := make([]byte, 0, len(body)+len(plantedGroq)+len(plantedGoogle))
		planted = append(planted, body[:p]...)
		planted = append(planted, plantedGroq...)
		planted = append(planted, body[p:]...)
		q := p / 2
		planted = append(planted[:q], append([]byte(plantedGoogle), planted[q:]...)...)
		h := http.Header{
			"Retry-After":       {retryAfter},
			"X-Ratelimit-Reset": {retryAfter},
			"Authorization":     {"Bearer " + plantedGroq},
		}
		err := &UpstreamError{Provider: "p", Flavor: "groq", Model: "m", Status: status % 1000, Header: h, Body: planted,
			Err: errors.New("dial https://x/?key=" + plantedGoogle + " " + plantedGroq)}
		if status%3 == 0 {
			err.Err = nil
		}
		now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		v := Classify(err, now)
		for name, s := range map[string]string{"Message": v.Message, "Code": v.Code, "LogText": v.LogText(), "Error": err.Error()} {
			if strings.Contains(s, plantedGroq) || strings.Contains(s, plantedGoogle) {
				t.Fatalf("%s holds a planted key", name)
			}
		}
		if len(v.Message) > maxMessage || len(v.LogText()) > maxLog || len(v.Code) > 64 {
			t.Fatalf("lengths: message %d, log %d, code %d", len(v.Message), len(v.LogText()), len(v.Code))
		}
		if v.Class.String() == "unknown" || v.RetryAfter < 0 || v.RetryAfter > maxWait {
			t.Fatalf("verdict out of range: %v %v", v.Class, v.RetryAfter)
		}
		if utf8.ValidString(string(planted)) && !utf8.ValidString(v.Message) {
			t.Fatalf("valid body gave an invalid UTF-8 message")
		}
	})
}
