package emulator

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const shortAnswer = "Hi there, friend."

// golden compares a reply (status, headers but Date and Content-Length,
// body) with testdata/name.golden, or rewrites it with -update.
func golden(t *testing.T, name string, r reply) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("request: %v", r.err)
	}
	var keys []string
	for k := range r.header {
		if k != "Date" && k != "Content-Length" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", r.status)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.header[k], ", "))
	}
	b.WriteString("\n")
	b.WriteString(r.body)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatalf("write golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update): %v", err)
	}
	if b.String() != string(want) {
		t.Errorf("%s differs:\n got %q\nwant %q", path, b.String(), want)
	}
}

func TestGoldenWire(t *testing.T) {
	tests := []struct {
		name   string
		flavor string
		limits Limits
		step   Step
		stream bool
		extra  string
	}{
		{name: "groq_answer", flavor: FlavorGroq, limits: Limits{RPM: 30, RPD: 1000, TPM: 6000}},
		{name: "groq_stream_usage", flavor: FlavorGroq, limits: Limits{RPD: 1000, TPM: 6000}, stream: true, extra: `,"stream_options":{"include_usage":true}`},
		{name: "groq_stream_cut", flavor: FlavorGroq, step: Step{Kind: StreamCut, After: 2}, stream: true},
		{name: "cerebras_answer", flavor: FlavorCerebras, limits: Limits{RPM: 30, RPD: 14400, TPM: 60000}},
		{name: "cerebras_stream_crlf", flavor: FlavorCerebras, step: Step{Kind: StreamCRLF}, stream: true},
		{name: "openrouter_answer", flavor: FlavorOpenRouter, limits: Limits{RPD: 50}},
		{name: "openrouter_stream_keepalive", flavor: FlavorOpenRouter, step: Step{Kind: StreamKeepAlive}, stream: true},
		{name: "openrouter_stream_error", flavor: FlavorOpenRouter, step: Step{Kind: StreamErrorEvent, After: 2}, stream: true},
		{name: "nvidia_stream_nodone", flavor: FlavorNVIDIA, step: Step{Kind: StreamNoDone}, stream: true},
		{name: "nvidia_stream_malformed", flavor: FlavorNVIDIA, step: Step{Kind: StreamMalformedEvent}, stream: true},
		{name: "mistral_answer", flavor: FlavorMistral, limits: Limits{RPM: 60, TPM: 500000}},
		{name: "ollama_answer", flavor: FlavorOllama},
		{name: "groq_empty", flavor: FlavorGroq, step: Step{Kind: Empty}},
		{name: "groq_malformed", flavor: FlavorGroq, step: Step{Kind: Malformed}},
		{name: "gemini_answer", flavor: FlavorGemini},
		{name: "gemini_stream", flavor: FlavorGemini, stream: true},
		{name: "gemini_stream_crlf", flavor: FlavorGemini, step: Step{Kind: StreamCRLF}, stream: true},
		{name: "gemini_stream_cut", flavor: FlavorGemini, step: Step{Kind: StreamCut, After: 1}, stream: true},
		{name: "gemini_refused", flavor: FlavorGemini, step: Step{Kind: Refused}},
		{name: "gemini_empty", flavor: FlavorGemini, step: Step{Kind: Empty}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			v.add(tt.flavor, Model{ID: "model-a", Limits: tt.limits, Answer: shortAnswer})
			if tt.step.Kind != "" {
				v.e.Script(tt.flavor, "model-a", tt.step)
			}
			var r reply
			if tt.flavor == FlavorGemini {
				r = v.gemini(tt.flavor, "model-a", tt.stream, "")
			} else {
				extra := tt.extra
				if tt.stream {
					extra += `,"stream":true`
				}
				r = v.chat(tt.flavor, "model-a", extra)
			}
			golden(t, tt.name, r)
		})
	}
}

// events splits an SSE body into its data payloads and comment lines,
// accepting LF and CRLF framing.
func events(body string) (data, comments []string) {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	for _, block := range strings.Split(body, "\n\n") {
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "data: "):
				data = append(data, line[len("data: "):])
			case strings.HasPrefix(line, ":"):
				comments = append(comments, line)
			}
		}
	}
	return data, comments
}

// contentOf concatenates the delta contents of OpenAI chunks, skipping
// payloads that do not parse.
func contentOf(data []string) (text string, finishes []string, bad int) {
	for _, d := range data {
		if d == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			bad++
			continue
		}
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			if ch.FinishReason != nil {
				finishes = append(finishes, *ch.FinishReason)
			}
		}
	}
	return text, finishes, bad
}

func TestStreamQuirks(t *testing.T) {
	answer := "one two three four five six"
	tests := []struct {
		name  string
		step  Step
		check func(t *testing.T, body string)
	}{
		{"plain", Step{Kind: Answer}, func(t *testing.T, body string) {
			data, _ := events(body)
			text, fin, bad := contentOf(data)
			if text != answer || len(fin) != 1 || fin[0] != "stop" || bad != 0 || data[len(data)-1] != "[DONE]" {
				t.Errorf("text %q finishes %v bad %d last %q", text, fin, bad, data[len(data)-1])
			}
		}},
		{"cut", Step{Kind: StreamCut, After: 3}, func(t *testing.T, body string) {
			data, _ := events(body)
			text, fin, _ := contentOf(data)
			if text != "one two three " || len(fin) != 0 || strings.Contains(body, "[DONE]") {
				t.Errorf("text %q finishes %v, body %q", text, fin, body)
			}
		}},
		{"error event", Step{Kind: StreamErrorEvent, After: 1}, func(t *testing.T, body string) {
			data, _ := events(body)
			text, fin, _ := contentOf(data)
			if text != "one " || len(fin) != 1 || fin[0] != "error" || strings.Contains(body, "[DONE]") {
				t.Errorf("text %q finishes %v", text, fin)
			}
			if !strings.Contains(data[len(data)-1], `"error":{"code":"server_error","message":"Provider disconnected unexpectedly"}`) {
				t.Errorf("last event %s", data[len(data)-1])
			}
		}},
		{"no done", Step{Kind: StreamNoDone}, func(t *testing.T, body string) {
			data, _ := events(body)
			text, fin, _ := contentOf(data)
			if text != answer || len(fin) != 1 || strings.Contains(body, "[DONE]") {
				t.Errorf("text %q finishes %v", text, fin)
			}
		}},
		{"crlf", Step{Kind: StreamCRLF}, func(t *testing.T, body string) {
			if strings.Count(body, "\n") != strings.Count(body, "\r\n") || !strings.HasSuffix(body, "data: [DONE]\r\n\r\n") {
				t.Errorf("not CRLF framed: %q", body)
			}
			data, _ := events(body)
			if text, _, _ := contentOf(data); text != answer {
				t.Errorf("text %q", text)
			}
		}},
		{"keep alive", Step{Kind: StreamKeepAlive}, func(t *testing.T, body string) {
			data, comments := events(body)
			if !strings.HasPrefix(body, ": OPENROUTER PROCESSING\n\ndata: ") || len(comments) != len(data)-1 {
				t.Errorf("%d comments for %d events: %q", len(comments), len(data), body)
			}
		}},
		{"malformed event", Step{Kind: StreamMalformedEvent}, func(t *testing.T, body string) {
			data, _ := events(body)
			text, fin, bad := contentOf(data)
			if text != answer || bad != 1 || len(fin) != 1 {
				t.Errorf("text %q bad %d finishes %v", text, bad, fin)
			}
		}},
		{"long line", Step{Kind: StreamLongLine}, func(t *testing.T, body string) {
			longest := 0
			for _, l := range strings.Split(body, "\n") {
				longest = max(longest, len(l))
			}
			data, _ := events(body)
			text, _, _ := contentOf(data)
			if longest <= 64<<10 || !strings.HasPrefix(text, answer+" "+answer) {
				t.Errorf("longest line %d", longest)
			}
		}},
	}
	for _, f := range []string{FlavorGroq, FlavorOpenRouter, FlavorCerebras, FlavorNVIDIA} {
		for _, tt := range tests {
			t.Run(f+"/"+tt.name, func(t *testing.T) {
				v := newEnv(t)
				v.add(f, Model{ID: "m", Answer: answer})
				v.e.Script(f, "m", tt.step)
				r := v.chat(f, "m", `,"stream":true`)
				if r.err != nil || r.status != http.StatusOK {
					t.Fatalf("status %d err %v", r.status, r.err)
				}
				if ct := r.header.Get("Content-Type"); ct != "text/event-stream" {
					t.Errorf("content type %q", ct)
				}
				tt.check(t, r.body)
			})
		}
	}
}

func TestGeminiStreamUsageIsCumulative(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGemini, Model{ID: "gemini-3-flash", Answer: "one two three four"})
	r := v.gemini(FlavorGemini, "gemini-3-flash", true, "")
	data, _ := events(r.body)
	if len(data) != 4 || strings.Contains(r.body, "[DONE]") {
		t.Fatalf("events %d, body %q", len(data), r.body)
	}
	prev, text := 0, ""
	for i, d := range data {
		var ev struct {
			Candidates []struct {
				Content struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"content"`
				FinishReason string `json:"finishReason"`
			} `json:"candidates"`
			UsageMetadata struct {
				CandidatesTokenCount int `json:"candidatesTokenCount"`
			} `json:"usageMetadata"`
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got := ev.UsageMetadata.CandidatesTokenCount; got < prev {
			t.Errorf("event %d: candidatesTokenCount %d < %d", i, got, prev)
		}
		prev = ev.UsageMetadata.CandidatesTokenCount
		text += ev.Candidates[0].Content.Parts[0].Text
		if last := i == len(data)-1; last != (ev.Candidates[0].FinishReason == "STOP") {
			t.Errorf("event %d: finishReason %q", i, ev.Candidates[0].FinishReason)
		}
	}
	if text != "one two three four" || prev != tokensOf(len(text)) {
		t.Errorf("text %q, final usage %d", text, prev)
	}
}
