package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// Chain is seed 000's chain, in its order: the fast dependable routes first
// (Gemini Flash Lite, then Groq, then NVIDIA), then the scarce Flash models,
// then Gemma as the bulk reserve. Thirteen models over three providers.
var chain = []string{
	"gemini/gemini-3.1-flash-lite",
	"groq/openai/gpt-oss-120b",
	"groq/openai/gpt-oss-20b",
	"groq/llama-3.3-70b-versatile",
	"groq/moonshotai/kimi-k2-instruct-0905",
	"groq/qwen/qwen3-32b",
	"nvidia/meta/llama-3.3-70b-instruct",
	"nvidia/openai/gpt-oss-120b",
	"nvidia/moonshotai/kimi-k2-instruct",
	"gemini/gemini-3-flash",
	"gemini/gemini-2.5-flash",
	"gemini/gemini-2.5-flash-lite",
	"gemini/gemma-3-27b-it",
}

// Chain returns the routes of seed 000's chain, in order.
func Chain() []string { return append([]string(nil), chain...) }

// scarce are the 20-a-day models: never hedged onto (seed 000).
var scarce = map[string]bool{
	"gemini/gemini-3-flash": true, "gemini/gemini-2.5-flash": true, "gemini/gemini-2.5-flash-lite": true,
}

// newEmulator returns the emulated free tiers of the chain's providers, with
// the limits of emulator.FreeTier (PROVIDERS.md) enforced on the emulator's
// side. zeroLatency makes every answer instant (the capacity run).
func newEmulator(d *driver, zeroLatency bool) *emulator.Emulator {
	emu := emulator.New(emulator.Options{Clock: d.clockFor(true)})
	want := map[string]bool{}
	for _, id := range chain {
		want[id] = true
	}
	for _, p := range emulator.FreeTier() {
		if p.Provider.Name != "gemini" && p.Provider.Name != "groq" && p.Provider.Name != "nvidia" {
			continue
		}
		emu.AddProvider(p.Provider)
		for _, m := range p.Models {
			if !want[p.Provider.Name+"/"+m.ID] {
				continue
			}
			if zeroLatency {
				m.Latency = 0
			}
			emu.AddModel(p.Provider.Name, m)
		}
	}
	return emu
}

// Incident is a change of one route's behaviour at a moment of the day,
// applied on the emulator to every policy alike.
type Incident struct {
	// At is the offset from the start of the day it happens on (every day).
	At time.Duration
	// Route is provider/model.
	Route string
	// Step becomes the route's standing behaviour (Once false) or its next
	// call's (Once true).
	Step emulator.Step
	Once bool
	// What says what happens, for the report.
	What string
}

// Incidents returns the incidents of seed 000's day, from its field report:
// a model answering "high demand" (503) for minutes at a time, a model slow
// for half an hour, and one call that hung for 198 seconds.
func Incidents() []Incident {
	h, m := time.Hour, time.Minute
	ok := emulator.Step{Kind: emulator.Answer}
	return []Incident{
		{At: 8 * h, Route: "gemini/gemini-3.1-flash-lite", Step: emulator.Step{Kind: emulator.HighDemand}, What: "Flash Lite answers 503 high demand"},
		{At: 8*h + 20*m, Route: "gemini/gemini-3.1-flash-lite", Step: ok, What: "Flash Lite recovers"},
		{At: 12 * h, Route: "groq/openai/gpt-oss-120b", Step: emulator.Step{Kind: emulator.Answer, Delay: 6 * time.Second}, What: "Groq gpt-oss-120b takes 6 s to answer"},
		{At: 12*h + 30*m, Route: "groq/openai/gpt-oss-120b", Step: ok, What: "Groq gpt-oss-120b is fast again"},
		{At: 18 * h, Route: "nvidia/meta/llama-3.3-70b-instruct", Step: emulator.Step{Kind: emulator.Hang, Delay: 198 * time.Second}, Once: true, What: "one NVIDIA call hangs 198 s"},
		{At: 21 * h, Route: "nvidia/openai/gpt-oss-120b", Step: emulator.Step{Kind: emulator.HighDemand}, What: "NVIDIA gpt-oss-120b answers 503"},
		{At: 21*h + 10*m, Route: "nvidia/openai/gpt-oss-120b", Step: ok, What: "NVIDIA gpt-oss-120b recovers"},
	}
}

func (in Incident) apply(emu *emulator.Emulator) {
	p, model, _ := strings.Cut(in.Route, "/")
	if in.Once {
		emu.Script(p, model, in.Step)
		return
	}
	emu.SetDefault(p, model, in.Step)
}

// configYAML is the gateway's config for seed 000's chain against an
// emulator at url. With limits false every limit is left out (set to 0,
// "unknown"): the gateway must learn them from headers and 429s.
func configYAML(url string, limits bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "call_log: \"off\"\nroles: []\n")
	// Seed 000: a timeout or a 5xx rests its route two minutes.
	b.WriteString("rest: {overloaded: 2m, timeout: 2m}\n")
	b.WriteString("providers:\n")
	models := map[string][]string{}
	for _, id := range chain {
		p, m, _ := strings.Cut(id, "/")
		models[p] = append(models[p], m)
	}
	for _, p := range []string{"gemini", "groq", "nvidia"} {
		base := url + "/" + p + "/v1"
		if p == "gemini" {
			base += "beta"
		}
		fmt.Fprintf(&b, "  %s:\n    preset: %s\n    base_url: %s\n    api_key: ${SIM_KEY}\n", p, p, base)
		if !limits {
			b.WriteString("    limits: {rpm: 0, rpd: 0, tpm: 0, tpd: 0}\n")
		}
		b.WriteString("    models:\n")
		for _, m := range models[p] {
			fmt.Fprintf(&b, "      %q:", m)
			var f []string
			switch {
			case !limits:
				f = append(f, "rpm: 0", "rpd: 0", "tpm: 0", "tpd: 0")
			case p == "nvidia" && m == "moonshotai/kimi-k2-instruct":
				// Not in the config's preset: its emulated throttle.
				f = append(f, "rpm: 10")
			}
			if scarce[p+"/"+m] {
				f = append(f, "scarce: true")
			}
			fmt.Fprintf(&b, " {%s}\n", strings.Join(f, ", "))
		}
	}
	b.WriteString("chains:\n  answer:\n    routes:\n")
	for _, id := range chain {
		fmt.Fprintf(&b, "      - %s\n", id)
	}
	// Seed 000: own timeouts of 8 to 20 s, a hedge after 3 s.
	b.WriteString("    attempt_timeout: 10s\n    deadline: 30s\n    hedge_delay: 3s\n    keep_exchanges: 2\n")
	b.WriteString("    fallback: {message: \"The assistant is resting; here is what the site says.\"}\n")
	return b.String()
}
