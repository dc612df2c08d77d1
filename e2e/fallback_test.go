package e2e_test

import (
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

const fallbackChains = `
chains:
  polite:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 5s
    deadline: 12s
    fallback: {message: "The assistant is resting. Please try again in a minute."}
`

// TestFallbacks: when every route fails, a message fallback answers 200
// marked in a header. (Without a fallback, the router's ExhaustedError
// says when to come back, and the chain's deadline ends the walk: package
// route's TestExhaustedSaysWhenToComeBack and TestChainDeadlineEndsTheWalk;
// the 503 and its Retry-After: httpapi's TestServerOnlyEncodes.)
func TestFallbacks(t *testing.T) {
	checkLeaks(t)
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
}
