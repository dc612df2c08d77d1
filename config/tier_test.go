package config_test

import (
	"testing"

	"github.com/tollfree/tollfree/config"
)

// TestTierPutsTheRenewableRouteFirst: routes: [[a, b], c] makes a and b one
// tier (one rank), the one whose limits renew soonest first: Gemma (14,400
// a day at 30 a minute) before Flash Lite (500 a day at 15 a minute),
// whatever the order written; c keeps its place after them.
func TestTierPutsTheRenewableRouteFirst(t *testing.T) {
	src := `
roles: []
providers:
  gemini: {api_key: ${GEMINI_API_KEY}}
  groq: {api_key: ${GROQ_API_KEY}}
chains:
  answer:
    routes: [[gemini/gemini-3.1-flash-lite, gemini/gemma-3-27b-it], groq/llama-3.3-70b-versatile]
`
	env := map[string]string{"GEMINI_API_KEY": "AIza-test-key", "GROQ_API_KEY": "gsk_test_key"}
	p, err := config.Parse("t.yaml", []byte(src), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ch := p.Chains["answer"]
	var got []string
	for _, rt := range ch.Routes {
		got = append(got, rt.ID)
	}
	want := []string{"gemini/gemma-3-27b-it", "gemini/gemini-3.1-flash-lite", "groq/llama-3.3-70b-versatile"}
	if len(got) != len(want) {
		t.Fatalf("routes %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("routes %v, want %v", got, want)
		}
	}
	if ch.Ranks[0] != ch.Ranks[1] || ch.Ranks[2] <= ch.Ranks[1] {
		t.Errorf("ranks %v: want the tier's two equal, the route after it ranked after", ch.Ranks)
	}
	if !ch.Pace {
		t.Error("pace is off by default; want on")
	}
}
