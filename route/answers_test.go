package route

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/provider/openaicompat"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/state/memstore"
)

// TestAnswerSizesLearnedByTheRouter: the router tells the budget what
// each answer it accepted cost, so that once a route has answered 16
// times its reservations count the size of its answers instead of 1,024
// tokens (or a larger max_tokens), and its prompts as its provider counts
// them against the estimate.
func TestAnswerSizesLearnedByTheRouter(t *testing.T) {
	clk := clock.NewFake(t0)
	emu, url := emutest.Start(t, clk, nil)
	emu.AddModel("groq", emulator.Model{ID: "m1"})
	plan := emutest.Plan(t, `
providers:
  groq: {preset: groq, base_url: EMU/groq/v1, api_key: ${GROQ_API_KEY}, models: {m1: {tpm: 100000}}}
chains:
  answer:
    routes: [groq/m1]
`, url, nil)
	store, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	budget := quota.New(quota.Options{Store: store, Clock: clk})
	transport := openaicompat.NewTransport()
	r, err := New(Options{Plan: plan, Upstreams: upstreams(plan, &http.Client{Transport: transport}), Store: store, Budget: budget, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		budget.Close()
		store.Close()
		transport.CloseIdleConnections()
	})
	rt := plan.Routes["groq/m1"]
	for i := range 16 {
		if got := budget.ExpectedOutput(0, rt); got != 1024 {
			t.Fatalf("after %d answers: a request without max_tokens counts %d answer tokens, want 1024", i, got)
		}
		if _, err := r.Chat(context.Background(), plan.Chains["answer"], "req", question(emutest.Question)); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Minute)
	}
	if got := budget.ExpectedOutput(0, rt); got < 64 || got >= 1024 {
		t.Errorf("after 16 answers of the emulator's size: a request without max_tokens counts %d answer tokens, want the answers' size (64 to 1023)", got)
	}
	if got := budget.ExpectedOutput(2000, rt); got >= 1024 {
		t.Errorf("with max_tokens 2000: counts %d, want the answers' size", got)
	}
	est := quota.Estimate(question(emutest.Question))
	if got := budget.PromptTokens(est, rt); got == est {
		t.Errorf("the emulator counts prompts as four bytes a token, not as Estimate does, yet the prompt is still counted at the estimate %d", est)
	}
}
