package e2e_test

import (
	"testing"

	"github.com/tollfree/tollfree/emulator/emutest"
)

// startStack starts what newHarness starts, with the providers block given
// (EMU stands for the emulator's URL), for tests and benchmarks alike.
func startStack(tb testing.TB, providers, chains string) *stack {
	tb.Helper()
	return startStackWith(tb, stackOptions{providers: providers, config: chains})
}

// streamBody is a streaming request on chain; usage asks for the usage
// chunk.
func streamBody(chain string, usage bool) []byte {
	opts := ""
	if usage {
		opts = `,"stream_options":{"include_usage":true}`
	}
	return []byte(`{"model":"` + chain + `","stream":true` + opts + `,"messages":[{"role":"user","content":"What does tollfree do?"}]}`)
}

// emuTokens is the emulator's token estimate of a text.
func emuTokens(s string) int { return emutest.Tokens(s) }

// defaultAnswer is the emulator's answer for a route.
func defaultAnswer(route string) string { return emutest.Answer(route) }
