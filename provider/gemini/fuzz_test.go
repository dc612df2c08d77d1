package gemini

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/tollfree/tollfree/failure"
)

// FuzzDecodeResponse checks that any generateContent body either gives an
// answer with text or fails with one of the three documented sentinels.
func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(okAnswer))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"a","thought":true},{"text":"b"}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":2,"thoughtsTokenCount":3,"totalTokenCount":6}}`))
	f.Add([]byte(`{"promptFeedback":{"blockReason":"SAFETY"}}`))
	f.Add([]byte(`{"candidates":[{"finishReason":"SAFETY"}]}`))
	f.Add([]byte(`{"error":{"code":500}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
	if files, _ := filepath.Glob(filepath.Join("testdata", "errors", "*.json")); len(files) > 0 {
		if b, err := os.ReadFile(files[0]); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeResponse(body)
		if err != nil {
			if r != nil {
				t.Errorf("decodeResponse returned a response with error %v", err)
			}
			if !errors.Is(err, failure.ErrMalformed) && !errors.Is(err, failure.ErrRefused) && !errors.Is(err, failure.ErrEmptyAnswer) {
				t.Errorf("error %v wraps none of the sentinels", err)
			}
			return
		}
		if r.Content == "" {
			t.Errorf("answer without text accepted")
		}
		switch r.FinishReason {
		case "", "stop", "length", "content_filter":
		default:
			t.Errorf("FinishReason %q is not an OpenAI finish reason", r.FinishReason)
		}
	})
}

// FuzzStream checks that any event-stream body ends, with io.EOF only after
// a finish, and otherwise with an UpstreamError.
func FuzzStream(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "stream_sample.sse")); err == nil {
		f.Add(b)
		f.Add(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")))
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte("data: {\"error\":{\"code\":503}}\n\n"))
	f.Add([]byte(": comment\n\ndata: {}\n\n"))
	c := New(Options{Name: "gemini", Client: &http.Client{}})
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newStream(c, "m", &http.Response{
			StatusCode: http.StatusOK,
			Header:     http.Header{},
			Body:       io.NopCloser(bytes.NewReader(body)),
		})
		defer s.Close()
		finished := false
		for i := 0; ; i++ {
			if i > len(body)+1 {
				t.Fatalf("more chunks than bytes")
			}
			ch, err := s.Next()
			if err == io.EOF {
				if !finished {
					t.Errorf("io.EOF without a finish reason")
				}
				return
			}
			if err != nil {
				var ue *failure.UpstreamError
				if !errors.As(err, &ue) {
					t.Errorf("error %v (%T) is not an UpstreamError", err, err)
				}
				return
			}
			if (i == 0) != (ch.Role == "assistant") {
				t.Errorf("chunk %d Role = %q; want assistant on the first only", i, ch.Role)
			}
			if ch.FinishReason != "" {
				finished = true
			}
		}
	})
}
