package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpstreamAnswers builds the command, starts it on a free port, and
// checks what bench/run.sh relies on: /health, a whole chat.completion, and
// a stream of 20 chunks ending with [DONE]. No timing is asserted.
func TestUpstreamAnswers(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "upstream")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "upstream: listening on ")
	if err != nil || !ok {
		t.Fatalf("first line %q (%v), want the address it listens on", line, err)
	}
	base := "http://" + addr

	if body := get(t, base+"/health"); body != "ok" {
		t.Errorf("/health: %q, want ok", body)
	}
	var whole struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	body := post(t, base, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"stream: true is only text here"}],"stream": false}`)
	if err := json.Unmarshal([]byte(body), &whole); err != nil || whole.Object != "chat.completion" || len(whole.Choices) != 1 || whole.Choices[0].Message.Content == "" || whole.Usage.TotalTokens == 0 {
		t.Errorf("whole answer: %v %.300s", err, body)
	}
	stream := post(t, base, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream" : true}`)
	events := strings.Split(strings.TrimSuffix(stream, "\n\n"), "\n\n")
	if len(events) != 21 || events[20] != "data: [DONE]" {
		t.Fatalf("stream: %d events, want 20 chunks and [DONE]:\n%.500s", len(events), stream)
	}
	var text strings.Builder
	for _, ev := range events[:20] {
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("event %q: %v", ev, err)
		}
		text.WriteString(c.Choices[0].Delta.Content)
	}
	if text.String() != whole.Choices[0].Message.Content {
		t.Errorf("streamed text %q, want the whole answer's %q", text.String(), whole.Choices[0].Message.Content)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func post(t *testing.T, base, body string) string {
	t.Helper()
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST: %d %s", resp.StatusCode, b)
	}
	return string(b)
}
