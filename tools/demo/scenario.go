package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/clock"
)

// Chain is the name of the demo's chain: the model its traffic asks for.
const Chain = "answer"

// The routes of seed 000, in its order: the fastest and most dependable
// first (Gemini Flash-Lite, then Groq, then NVIDIA), then the better but
// scarce Flash models (20 a day), then Gemma as the bulk reserve.
var seedRoutes = []string{
	"gemini/gemini-2.5-flash-lite",
	"groq/llama-3.3-70b-versatile",
	"groq/openai/gpt-oss-120b",
	"groq/qwen/qwen3-32b",
	"groq/moonshotai/kimi-k2-instruct-0905",
	"nvidia/meta/llama-3.3-70b-instruct",
	"nvidia/openai/gpt-oss-120b",
	"nvidia/nvidia/nemotron-3-nano-30b-a3b",
	"groq/llama-3.1-8b-instant",
	"gemini/gemini-2.5-flash",
	"gemini/gemini-3-flash",
	"gemini/gemma-3-27b-it",
	"gemini/gemma-3-12b-it",
}

// The failure modes seed 000 met while probing, each on one route.
const (
	// overloadedRoute answers "high demand" 503s in bursts of minutes.
	overloadedProvider, overloadedModel = "gemini", "gemini-2.5-flash-lite"
	// hangingRoute accepts every call and says nothing for 198 s.
	hangingProvider, hangingModel = "nvidia", "meta/llama-3.3-70b-instruct"
	// hangFor is how long the hanging route stays silent (seed 000).
	hangFor = 198 * time.Second
)

// goneRoutes are the two models already gone for new accounts.
var goneRoutes = [][2]string{
	{"groq", "moonshotai/kimi-k2-instruct-0905"},
	{"nvidia", "nvidia/nemotron-3-nano-30b-a3b"},
}

// Bursts of "high demand": the first starts burstFirst after the demo
// starts (once the route's scriptedCalls opening calls were made), then
// one every burstEvery, each lasting burstLen.
const (
	scriptedCalls = 4
	burstFirst    = 30 * time.Second
	burstEvery    = 20 * time.Minute
	burstLen      = 4 * time.Minute
)

// newEmulator returns the emulated free tiers of seed 000's three
// providers, with their limits (emulator.FreeTier) and failure modes.
func newEmulator(clk clock.Clock) *emulator.Emulator {
	emu := emulator.New(emulator.Options{Clock: clk})
	for _, p := range emulator.FreeTier() {
		switch p.Provider.Name {
		case "gemini", "groq", "nvidia":
			emu.AddPreset(p)
		}
	}
	// Models of the chain the presets do not carry.
	emu.AddModel("gemini", emulator.Model{ID: "gemma-3-12b-it", Limits: emulator.Limits{RPM: 30, RPD: 14400, TPM: 15000}, Latency: 700 * time.Millisecond, ChunkDelay: 30 * time.Millisecond})
	emu.AddModel("nvidia", emulator.Model{ID: "nvidia/nemotron-3-nano-30b-a3b", Latency: 900 * time.Millisecond})
	for _, g := range goneRoutes {
		m := findModel(g[0], g[1])
		m.Gone = true
		emu.AddModel(g[0], m)
	}
	emu.SetDefault(hangingProvider, hangingModel, emulator.Step{Kind: emulator.Hang, Delay: hangFor})
	// Seed 000: "When I made Gemini hang in a test, the answer arrived from
	// Groq in 3.6 seconds." The fourth call to Flash-Lite hangs, so the
	// hedge shows in the first seconds of the demo.
	emu.Script(overloadedProvider, overloadedModel, // scriptedCalls steps
		emulator.Step{Kind: emulator.Answer}, emulator.Step{Kind: emulator.Answer}, emulator.Step{Kind: emulator.Answer},
		emulator.Step{Kind: emulator.Hang, Delay: hangFor})
	return emu
}

// findModel returns the FreeTier settings of a model, or a plain model of
// that id when the presets do not list it.
func findModel(provider, id string) emulator.Model {
	for _, p := range emulator.FreeTier() {
		if p.Provider.Name != provider {
			continue
		}
		for _, m := range p.Models {
			if m.ID == id {
				return m
			}
		}
	}
	return emulator.Model{ID: id}
}

// weather plays the bursts of "high demand" on the overloaded route until
// ctx ends. It reports each change through note.
func weather(ctx context.Context, clk clock.Clock, emu *emulator.Emulator, note func(string)) {
	wait := burstFirst
	for {
		if clock.Sleep(ctx, clk, wait) != nil {
			return
		}
		// A scripted step comes before the default: let the route's
		// opening script (newEmulator) play out before the first burst.
		if emu.Calls(overloadedProvider, overloadedModel) < scriptedCalls {
			wait = burstFirst
			continue
		}
		emu.SetDefault(overloadedProvider, overloadedModel, emulator.Step{Kind: emulator.HighDemand})
		note("weather: " + overloadedProvider + "/" + overloadedModel + " starts answering 503 \"high demand\" for " + burstLen.String())
		if clock.Sleep(ctx, clk, burstLen) != nil {
			return
		}
		emu.SetDefault(overloadedProvider, overloadedModel, emulator.Step{Kind: emulator.Answer})
		note("weather: " + overloadedProvider + "/" + overloadedModel + " is back to normal")
		wait = burstEvery - burstLen
	}
}

// configYAML is the gateway's configuration: seed 000's three providers
// pointing at the emulator, its thirteen routes in one chain with its
// timeouts and hedging. EMU stands for the emulator's URL.
const configYAML = `
listen: LISTEN
data_dir: DATA
call_log: DATA/calls.jsonl
admin_token: ${TOLLFREE_DEMO_ADMIN_TOKEN}
providers:
  gemini: {preset: gemini, base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  groq:   {preset: groq,   base_url: EMU/groq/v1,       api_key: ${GROQ_API_KEY}}
  nvidia: {preset: nvidia, base_url: EMU/nvidia/v1,     api_key: ${NVIDIA_API_KEY}}
chains:
  answer:
    routes:
ROUTES
    attempt_timeout: 8s
    deadline: 25s
    hedge_delay: 3s
    keep_exchanges: 2
    fallback: {search: DATA/content}
  # Tools, images and structured output (issue 33): Gemini's own API first,
  # an OpenAI-compatible route that sees images second.
  agent:
    routes: [gemini/gemini-2.5-flash, groq/meta-llama/llama-4-scout-17b-16e-instruct]
  # Embeddings: POST /v1/embeddings, model vectors.
  vectors:
    routes: [gemini/gemini-embedding-001]
`

// adminTokenEnv names the demo's admin token in its config; Run generates
// a fresh one per run and prints it, so pause and resume can be tried from
// the status page.
const adminTokenEnv = "TOLLFREE_DEMO_ADMIN_TOKEN"

// adminToken returns a fresh random admin token.
func adminToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("demo: making an admin token: %w", err)
	}
	return "demo-admin-" + hex.EncodeToString(b), nil
}

// demoEnv resolves the config's ${NAME}s: the demo's keys and token.
func demoEnv(token string) func(string) string {
	return func(k string) string {
		if k == adminTokenEnv {
			return token
		}
		return demoKeys[k]
	}
}

// demoKeys stand in for the provider keys: the emulator accepts any key,
// and the presets want one to enable a provider.
var demoKeys = map[string]string{
	"GEMINI_API_KEY": "demo-gemini-key",
	"GROQ_API_KEY":   "demo-groq-key",
	"NVIDIA_API_KEY": "demo-nvidia-key",
}

// gatewayYAML returns the gateway's YAML for an emulator at emuURL.
func gatewayYAML(emuURL, listen, dataDir string) string {
	var routes strings.Builder
	for _, r := range seedRoutes {
		routes.WriteString("      - " + r + "\n")
	}
	return strings.NewReplacer(
		"EMU", emuURL, "LISTEN", listen, "DATA", dataDir, "ROUTES\n", routes.String(),
	).Replace(configYAML)
}
