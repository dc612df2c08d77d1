package tollfree_test

import (
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// proxiedGeminiProviders names no preset for gemini and points it at a
// proxy (here the emulator): the provider's name picks the preset.
const proxiedGeminiProviders = `
providers:
  groq:   {preset: groq, base_url: EMU/groq/v1, api_key: ${GROQ_API_KEY}}
  gemini: {base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
`

// TestPresetKeptWithBaseURL: a provider named after a preset that sets
// base_url keeps the preset (issue 10, item 11): it speaks Gemini's native
// dialect, its route has the preset's daily limit, and a per-day 429 rests
// it until midnight Pacific, the Gemini reset, not UTC.
func TestPresetKeptWithBaseURL(t *testing.T) {
	h := harnessOf(t, startStackWith(t, stackOptions{providers: proxiedGeminiProviders, config: `
chains:
  gem:
    routes: [gemini/gemini-2.5-flash, groq/llama-3.1-8b-instant]
    attempt_timeout: 8s
    deadline: 25s
`}))
	got := h.ask("gem")
	if got.status != 200 || got.json(t)["model"] != "gemini/gemini-2.5-flash" {
		t.Fatalf("status %d, want 200 from gemini/gemini-2.5-flash over Gemini's own API: %s", got.status, got.body)
	}
	if recs := h.emu.Records(); len(recs) != 1 || recs[0].Provider != "gemini" || recs[0].Status != 200 {
		t.Fatalf("emulator records = %+v, want one answered gemini call", recs)
	}
	if rpd := routeOf(t, h.snapshot(), "gemini/gemini-2.5-flash").Budget.RPD; rpd.Limit != 20 || rpd.Used != 1 {
		t.Errorf("/status.json rpd = %d of %d, want 1 of the preset's 20", rpd.Used, rpd.Limit)
	}
	h.emu.Script("gemini", "gemini-2.5-flash", emulator.Step{Kind: emulator.RateDay})
	if r := h.ask("gem"); r.status != 200 || r.json(t)["model"] != "groq/llama-3.1-8b-instant" {
		t.Fatalf("after gemini's per-day 429: status %d: %s", r.status, r.body)
	}
	laMidnight := time.Date(2026, 6, 16, 7, 0, 0, 0, time.UTC) // 00:00 PDT after t0
	if rest, ok := h.rest("gemini/gemini-2.5-flash"); !ok || rest.Class != "rate_day" || !rest.Until.Equal(laMidnight) {
		t.Fatalf("rest = %+v (found %v), want rate_day until %s (midnight America/Los_Angeles)", rest, ok, laMidnight)
	}
}
