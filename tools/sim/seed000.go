package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// chain is seed 000's chain, in its order: the fast dependable routes first
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

// CappedChain returns the routes of seed 000's chain that have a published
// daily cap or a per-minute token cap a day of questions can fill: seed
// 000's chain without NVIDIA's three routes. NVIDIA publishes 40 requests
// a minute and no daily cap (docs/PROVIDERS.md), so with it in the chain a day
// binds only past 40 questions a minute, hour after hour; without it the
// day's demand can exceed what the free tiers carry and the policies'
// yields part. It is the simulated day's default chain.
func CappedChain() []string {
	var out []string
	for _, id := range chain {
		if !strings.HasPrefix(id, "nvidia/") {
			out = append(out, id)
		}
	}
	return out
}

// scarce are the 20-a-day models: never hedged onto (seed 000).
var scarce = map[string]bool{
	"gemini/gemini-3-flash": true, "gemini/gemini-2.5-flash": true, "gemini/gemini-2.5-flash-lite": true,
}

// providersOf lists the providers of routes in the order they first
// appear.
func providersOf(routes []string) []string {
	var out []string
	for _, id := range routes {
		p, _, _ := strings.Cut(id, "/")
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// tiers returns the free tiers of the routes' providers as
// emulator.FreeTier gives them (docs/PROVIDERS.md), with only the routes'
// models, each model's limits multiplied by scale[route] when set (a day
// where the configured limits are wrong: the config keeps the presets').
// The emulator enforces these limits and the optimum is computed from
// them.
func tiers(routes []string, scale map[string]float64) ([]emulator.Preset, error) {
	want := map[string]bool{}
	for _, id := range routes {
		want[id] = true
	}
	var out []emulator.Preset
	for _, name := range providersOf(routes) {
		for _, p := range emulator.FreeTier() {
			if p.Provider.Name != name {
				continue
			}
			var models []emulator.Model
			for _, m := range p.Models {
				id := name + "/" + m.ID
				if !want[id] {
					continue
				}
				delete(want, id)
				if f, ok := scale[id]; ok {
					m.Limits = scaleLimits(m.Limits, f)
				}
				models = append(models, m)
			}
			p.Models = models
			out = append(out, p)
		}
	}
	for id := range want {
		return nil, fmt.Errorf("sim: route %q is not one of the emulated free tiers (emulator.FreeTier)", id)
	}
	return out, nil
}

// scaleLimits multiplies every limit set by f, leaving at least 1.
func scaleLimits(l emulator.Limits, f float64) emulator.Limits {
	s := func(n int) int {
		if n <= 0 {
			return n
		}
		return max(1, int(float64(n)*f))
	}
	return emulator.Limits{RPM: s(l.RPM), RPD: s(l.RPD), TPM: s(l.TPM), TPD: s(l.TPD)}
}

// newEmulator returns the emulated free tiers ps, their limits enforced on
// the emulator's side, each refusal counted against the day as seed 000
// saw. As the capacity oracle (oracle true) every answer is instant and
// every refusal free. Every model answers as long as the question asks
// (answerFor).
func newEmulator(d *driver, ps []emulator.Preset, oracle bool) *emulator.Emulator {
	emu := emulator.New(emulator.Options{Clock: d.clockFor(true)})
	for _, p := range ps {
		if oracle {
			p.Provider.CountRefusals = false
		}
		emu.AddProvider(p.Provider)
		for _, m := range p.Models {
			if oracle {
				m.Latency = 0
			}
			m.Answer, m.Reply = "", answerFor
			emu.AddModel(p.Provider.Name, m)
		}
	}
	return emu
}

// answerText is the site's answer: 250 tokens (1,000 bytes), a
// site-assistant answer of a few paragraphs, within the questions' cap of
// 400, so that a token limit charges what a real answer costs.
var answerText = strings.TrimSpace(strings.Repeat(answerSentence, 11)[:1000])

const answerSentence = "The map app was built for the city's open data and you can write to me from the contact page. "

// answerMark ends a question that asks for an answer of another length
// than the site's: "[answer: N tokens]" (question).
const answerMark = " [answer: "

// answerFor is every emulated model's answer: answerText, or, when the
// last message ends with an answer mark, an answer of that many tokens
// (four bytes each, as the emulator counts).
func answerFor(turns []emulator.Turn) string {
	if len(turns) == 0 {
		return answerText
	}
	last := turns[len(turns)-1].Text
	i := strings.LastIndex(last, answerMark)
	if i < 0 {
		return answerText
	}
	n, err := strconv.Atoi(strings.TrimSuffix(last[i+len(answerMark):], " tokens]"))
	if err != nil || n <= 0 {
		return answerText
	}
	return answerOfLen(n)
}

// answerOfLen is an answer of n tokens: 4n bytes of answerSentence.
func answerOfLen(n int) string {
	b := []byte(strings.Repeat(answerSentence, 4*n/len(answerSentence)+1)[:4*n])
	b[len(b)-1] = '.'
	return string(b)
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
func configYAML(url string, routes []string, limits bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "call_log: \"off\"\nroles: []\n")
	// Seed 000: a timeout or a 5xx rests its route two minutes.
	b.WriteString("rest: {overloaded: 2m, timeout: 2m}\n")
	b.WriteString("providers:\n")
	models := map[string][]string{}
	for _, id := range routes {
		p, m, _ := strings.Cut(id, "/")
		models[p] = append(models[p], m)
	}
	for _, p := range providersOf(routes) {
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
	for _, id := range routes {
		fmt.Fprintf(&b, "      - %s\n", id)
	}
	// Seed 000: own timeouts of 8 to 20 s, a hedge after 3 s.
	b.WriteString("    attempt_timeout: 10s\n    deadline: 30s\n    hedge_delay: 3s\n    keep_exchanges: 2\n")
	// The chain's margin is left at its default (margins by evidence:
	// none where the provider reports what is left, a shrinking one
	// where the limit is known from the config alone).
	b.WriteString("    fallback: {message: \"The assistant is resting; here is what the site says.\"}\n")
	return b.String()
}
