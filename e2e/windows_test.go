package e2e_test

import (
	"strings"
	"testing"
	"time"
)

// hourConfig: a chain whose first route allows three requests an hour
// (Cerebras publishes RPH), the second none.
const hourConfig = `
providers:
  groq:     {preset: groq,     base_url: EMU/groq/v1,     api_key: ${GROQ_API_KEY}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1, api_key: ${CEREBRAS_API_KEY},
             models: {"gpt-oss-120b": {rph: 3}}}
chains:
  hourly:
    routes: [cerebras/gpt-oss-120b, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
`

// TestHourlyBudgetSkipsAndRolls: a route with rph 3 answers three
// requests in an hour, is skipped without a call on the fourth (the next
// route answers), and takes requests again once the hour's oldest slot
// has rolled out, on the gateway's clock.
func TestHourlyBudgetSkipsAndRolls(t *testing.T) {
	checkLeaks(t)
	h := harnessOf(t, startStackWith(t, stackOptions{providers: hourConfig}))
	const first, second = "cerebras/gpt-oss-120b", "groq/llama-3.1-8b-instant"
	ask := func(want string) {
		t.Helper()
		r := h.askText("hourly", "hello")
		if got := r.header.Get("X-Tollfree-Route"); r.status != 200 || got != want {
			t.Fatalf("at %v: status %d, answered by %q, want %q: %s", h.clk.Now(), r.status, got, want, r.body)
		}
	}
	for i := range 3 {
		h.clk.Set(t0.Add(time.Duration(i) * 10 * time.Minute))
		ask(first)
	}
	h.clk.Set(t0.Add(59 * time.Minute))
	ask(second)
	if n := h.emu.Calls("cerebras", "gpt-oss-120b"); n != 3 {
		t.Fatalf("cerebras was called %d times, want 3: the fourth request in the hour must be skipped, not sent", n)
	}
	// The slot of the first request drops out 70 minutes after it began
	// (seven 10-minute slots, never less than the provider's hour).
	h.clk.Set(t0.Add(70 * time.Minute))
	ask(first)
	snap := h.snapshot()
	if w := routeOf(t, snap, first).Budget.RPH; w.Limit != 3 || w.Used != 3 {
		t.Fatalf("/status.json rph of %s = %d/%d, want 3/3", first, w.Used, w.Limit)
	}
	if page := h.get("/status"); !strings.Contains(string(page.body), "requests this hour") {
		t.Errorf("/status shows no hour bar for %s", first)
	}
	want := `tollfree_budget_left{key="` + first + `",window="rph"} 0`
	if m := h.get("/metrics"); !strings.Contains(string(m.body), want) {
		t.Errorf("/metrics has no %s", want)
	}
}
