package tollfree_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// TestBadInputNeverReachesAProvider: each malformed request gets a precise
// 4xx in OpenAI's envelope and no provider is called.
func TestBadInputNeverReachesAProvider(t *testing.T) {
	big := `{"model":"answer","messages":[{"role":"user","content":"` + strings.Repeat("a", 5<<20) + `"}]}`
	tests := []struct {
		name        string
		contentType string
		body        string
		wantStatus  int
		wantCode    string
		wantInMsg   string
	}{
		{"malformed JSON", "application/json", `{"model":"answer","messages":[`, 400, "", "JSON"},
		{"not an object", "application/json", `[1,2]`, 400, "", ""},
		{"empty body", "application/json", ``, 400, "invalid_json", "empty"},
		{"unknown chain", "application/json", `{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`, 404, "model_not_found", "answer"},
		{"no messages", "application/json", `{"model":"answer","messages":[]}`, 400, "", "messages"},
		{"missing messages", "application/json", `{"model":"answer"}`, 400, "", "messages"},
		{"bad role", "application/json", `{"model":"answer","messages":[{"role":"wizard","content":"hi"}]}`, 400, "", "role"},
		{"temperature out of range", "application/json", `{"model":"answer","temperature":7,"messages":[{"role":"user","content":"hi"}]}`, 400, "", "temperature"},
		{"body over the limit", "application/json", big, 413, "request_too_large", "limit"},
		{"wrong content type", "text/plain", `{"model":"answer","messages":[{"role":"user","content":"hi"}]}`, 415, "unsupported_media_type", "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, answerChain)
			got := h.post("/v1/chat/completions", tt.contentType, []byte(tt.body))
			if got.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", got.status, tt.wantStatus, got.body)
			}
			m := got.json(t)
			e, ok := m["error"].(map[string]any)
			if !ok {
				t.Fatalf("no error envelope: %s", got.body)
			}
			if tt.wantCode != "" && e["code"] != tt.wantCode {
				t.Errorf("code = %v, want %s", e["code"], tt.wantCode)
			}
			if msg, _ := e["message"].(string); !strings.Contains(msg, tt.wantInMsg) {
				t.Errorf("message %q does not mention %q", msg, tt.wantInMsg)
			}
			if n := len(h.emu.Records()); n != 0 {
				t.Errorf("a provider was called %d times", n)
			}
		})
	}
	t.Run("wrong method", func(t *testing.T) {
		h := newHarness(t, answerChain)
		resp, err := http.Get(h.srv.URL + "/v1/chat/completions")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
			t.Errorf("GET: %d Allow=%q, want 405 Allow=POST", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
}

const fallbackChains = `
chains:
  polite:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 5s
    deadline: 12s
    fallback: {message: "The assistant is resting. Please try again in a minute."}
  strict:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 5s
    deadline: 12s
`

// TestFallbacks: when every route fails, a message fallback answers 200
// marked in a header; an error fallback answers 503 with Retry-After set to
// the soonest recovery; neither hangs past the deadline.
func TestFallbacks(t *testing.T) {
	t.Run("message", func(t *testing.T) {
		h := newHarness(t, fallbackChains)
		h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
		h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 40 * time.Second})
		got := h.ask("polite")
		if got.status != 200 || got.header.Get("X-Tollfree-Fallback") != "message" {
			t.Fatalf("status %d fallback header %q: %s", got.status, got.header.Get("X-Tollfree-Fallback"), got.body)
		}
		if c := got.content(t); c != "The assistant is resting. Please try again in a minute." {
			t.Errorf("content = %q", c)
		}
	})
	t.Run("error with Retry-After", func(t *testing.T) {
		h := newHarness(t, fallbackChains)
		h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 40 * time.Second})
		h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.HighDemand})
		got := h.ask("strict")
		if got.status != 503 {
			t.Fatalf("status = %d, want 503: %s", got.status, got.body)
		}
		// groq rests 40 s (its retry-after), cerebras 30 s (overloaded): the
		// soonest is 30 s.
		if ra := got.header.Get("Retry-After"); ra != "30" {
			t.Errorf("Retry-After = %q, want 30", ra)
		}
		if code := got.errorCode(t); code != "no_route_available" {
			t.Errorf("code = %q", code)
		}
		// While both rest, no provider is called and the answer is immediate.
		n := len(h.emu.Records())
		if again := h.ask("strict"); again.status != 503 || len(h.emu.Records()) != n {
			t.Errorf("second request: %d, %d new calls", again.status, len(h.emu.Records())-n)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		h := newHarness(t, fallbackChains)
		h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
		h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Hang})
		done := h.askAsync("strict")
		h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
		h.clk.Advance(5 * time.Second) // groq's attempt timeout
		h.waitCalls("cerebras", "gpt-oss-120b", 1)
		h.clk.Advance(7 * time.Second) // the chain's deadline, 12 s
		got := <-done
		if got.status != 503 {
			t.Fatalf("status = %d, want 503: %s", got.status, got.body)
		}
		// Cerebras was cut by the chain's deadline, not by its own timeout:
		// it does not rest; groq timed out on its own and does.
		if _, ok := h.rest("cerebras/gpt-oss-120b"); ok {
			t.Errorf("a route cut by the chain's deadline rests")
		}
		if r, ok := h.rest("groq/llama-3.3-70b-versatile"); !ok || r.Class != "timeout" {
			t.Errorf("groq rest = %+v, %v", r, ok)
		}
	})
}
