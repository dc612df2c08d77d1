package route

import (
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/quota"
)

// TestAnswerSizesLearnedByTheRouter: the router tells the budget what
// each answer it accepted cost, so that once a route has answered 16
// times its reservations count the size of its answers instead of 1,024
// tokens, and its prompts as its provider counts them against the
// estimate. A request with max_tokens counts them on Groq, which admits a
// request by its prompt and max_tokens.
func TestAnswerSizesLearnedByTheRouter(t *testing.T) {
	s := newStackWith(t, stackOptions{
		providers: `
providers:
  groq: {preset: groq, base_url: EMU/groq/v1, api_key: ${GROQ_API_KEY}, models: {m1: {tpm: 100000}}}
`,
		chains: `
chains:
  answer:
    routes: [groq/m1]
`})
	s.emu.AddModel("groq", emulator.Model{ID: "m1"})
	rt := s.plan.Routes["groq/m1"]
	for i := range 16 {
		if got := outputOf(s.budget.Sizes(0, 0, rt)); got != 1024 {
			t.Fatalf("after %d answers: a request without max_tokens counts %d answer tokens, want 1024", i, got)
		}
		if a := s.ask("answer"); a.err != nil {
			t.Fatal(a.err)
		}
		s.clk.Advance(time.Minute)
	}
	if got := outputOf(s.budget.Sizes(0, 0, rt)); got < 64 || got >= 1024 {
		t.Errorf("after 16 answers of the emulator's size: a request without max_tokens counts %d answer tokens, want the answers' size (64 to 1023)", got)
	}
	if got := outputOf(s.budget.Sizes(0, 2000, rt)); got != 2000 {
		t.Errorf("with max_tokens 2000: counts %d, want 2000, as Groq admits by it", got)
	}
	est := quota.Estimate(question(emutest.Question))
	if got := promptOf(s.budget.Sizes(est, 0, rt)); got == est {
		t.Errorf("the emulator counts prompts as four bytes a token, not as Estimate does, yet the prompt is still counted at the estimate %d", est)
	}
}

func promptOf(prompt, _ int) int { return prompt }
func outputOf(_, output int) int { return output }
