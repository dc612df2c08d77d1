package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
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

// FuzzBuildRequest checks the translation of any conversation: turns
// alternate between user and model, none is empty, no text is lost or
// reordered (the turns joined by a blank line are the non-system messages
// joined by a blank line), the system instruction is the system messages
// joined, and the body encodes. The input is a list of messages separated
// by a zero byte; each one's first byte picks its role.
func FuzzBuildRequest(f *testing.F) {
	f.Add([]byte("sYou are terse.\x00uHi\x00aHello\x00uSay hi"))
	f.Add([]byte("uone\x00utwo\x00tthree\x00afour\x00afive"))
	f.Add([]byte("sonly a system prompt\x00dand a developer one"))
	f.Add([]byte("u\x00a\x00u"))
	f.Add([]byte("xunknown role\x00ahi"))
	roles := map[byte]string{'s': "system", 'd': "developer", 'u': "user", 'a': "assistant", 't': "tool"}
	f.Fuzz(func(t *testing.T, data []byte) {
		var msgs []llm.Message
		var system, said []string
		results := 0 // tool results: each a functionResponse part (issue 33)
		for _, raw := range bytes.Split(data, []byte{0}) {
			m := llm.Message{Role: "other"}
			if len(raw) > 0 {
				if r, ok := roles[raw[0]]; ok {
					m.Role = r
				}
				m.Content = string(raw[1:])
			}
			if m.Role == "tool" {
				m.Name = "lookup" // a tool result names its function (issue 33)
			}
			msgs = append(msgs, m)
			switch {
			case m.Content == "":
			case m.Role == "tool":
				results++
			case m.Role == "system" || m.Role == "developer":
				system = append(system, m.Content)
			default:
				said = append(said, m.Content)
			}
		}
		w := buildRequest(provider.Call{Model: "gemini-2.5-flash", Request: &llm.Request{Messages: msgs}})
		if len(said) == 0 && len(system) > 0 {
			// Only system text: it is sent as the one user turn.
			said, system = []string{strings.Join(system, "\n\n")}, nil
		}
		var turns []string
		for i, c := range w.Contents {
			if c.Role != "user" && c.Role != "model" {
				t.Fatalf("turn %d has role %q", i, c.Role)
			}
			if i > 0 && w.Contents[i-1].Role == c.Role {
				t.Fatalf("turns %d and %d are both %s: Gemini wants them to alternate", i-1, i, c.Role)
			}
			if len(c.Parts) == 0 {
				t.Fatalf("turn %d has no parts", i)
			}
			for _, p := range c.Parts {
				switch {
				case p.FunctionResponse != nil:
					results--
				case p.Text == "":
					t.Fatalf("turn %d has parts %+v: an empty text", i, c.Parts)
				default:
					turns = append(turns, p.Text)
				}
			}
		}
		if results != 0 {
			t.Fatalf("%d tool results without their functionResponse part", results)
		}
		if got, want := strings.Join(turns, "\n\n"), strings.Join(said, "\n\n"); got != want {
			t.Fatalf("the turns say %q, the messages %q", got, want)
		}
		gotSystem := ""
		if w.SystemInstruction != nil {
			gotSystem = w.SystemInstruction.Parts[0].Text
		}
		if want := strings.Join(system, "\n\n"); gotSystem != want {
			t.Fatalf("system instruction %q, want %q", gotSystem, want)
		}
		if _, err := json.Marshal(w); err != nil {
			t.Fatalf("the body does not encode: %v", err)
		}
	})
}
