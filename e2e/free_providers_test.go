package e2e_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tollfree/tollfree/emulator"
)

// freeConfig: Hugging Face's router first, Cerebras second, Pollinations
// last with no key at all (seed 001's keyless safety net).
const freeConfig = `
providers:
  huggingface:  {preset: huggingface,  base_url: EMU/huggingface/v1,  api_key: ${HF_TOKEN}}
  cerebras:     {preset: cerebras,     base_url: EMU/cerebras/v1,     api_key: ${CEREBRAS_API_KEY}}
  pollinations: {preset: pollinations, base_url: EMU/pollinations/v1}
chains:
  free:
    routes: [huggingface/openai/gpt-oss-120b, cerebras/gpt-oss-120b, pollinations/openai]
    attempt_timeout: 8s
    deadline: 25s
`

// authSeen records the Authorization header of every call to a provider.
type authSeen struct {
	mu   sync.Mutex
	seen map[string][]string // by path prefix: "/pollinations"
}

func (a *authSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	a.mu.Lock()
	p := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0]
	a.seen[p] = append(a.seen[p], r.Header.Get("Authorization"))
	a.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestKeylessAndFreeProviders: with Hugging Face's credits spent (its 402)
// and Cerebras busy, Pollinations answers with no key set and none sent;
// the spent router rests as a spent day, not a dead key.
func TestKeylessAndFreeProviders(t *testing.T) {
	checkLeaks(t)
	seen := &authSeen{seen: map[string][]string{}}
	s := startStackWith(t, stackOptions{providers: freeConfig, env: map[string]string{"HF_TOKEN": "hf_test_0001"}, httpClient: &http.Client{Transport: seen}})
	h := harnessOf(t, s)
	h.emu.AddProvider(emulator.Provider{Name: "huggingface", Flavor: emulator.FlavorHuggingFace, Key: "hf_test_0001"})
	h.emu.AddModel("huggingface", emulator.Model{ID: "openai/gpt-oss-120b"})
	h.emu.AddProvider(emulator.Provider{Name: "pollinations", Flavor: emulator.FlavorPollinations})
	h.emu.AddModel("pollinations", emulator.Model{ID: "openai"})
	h.emu.Script("huggingface", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.RateDay})
	h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.HighDemand})

	r := h.askText("free", "hello")
	if got := r.header.Get("X-Tollfree-Route"); r.status != 200 || got != "pollinations/openai" {
		t.Fatalf("status %d, answered by %q, want pollinations/openai: %s", r.status, got, r.body)
	}
	seen.mu.Lock()
	if a := seen.seen["pollinations"]; len(a) != 1 || a[0] != "" {
		t.Errorf("calls to pollinations carried Authorization %q, want one call with none", a)
	}
	if a := seen.seen["huggingface"]; len(a) != 1 || a[0] != "Bearer hf_test_0001" {
		t.Errorf("calls to huggingface carried %d keys, want its token once", len(a))
	}
	seen.mu.Unlock()
	hf := routeOf(t, h.snapshot(), "huggingface/openai/gpt-oss-120b")
	if hf.Rest == nil || hf.Rest.Class != "rate_day" {
		t.Fatalf("huggingface after its 402: state %s rest %+v, want a rate_day rest (credits spent)", hf.State, hf.Rest)
	}
}

// moreFreeConfig: Z.ai's free Flash model first, SambaNova's Free Tier
// second, each from its preset with nothing but a base URL and a key.
const moreFreeConfig = `
providers:
  zai:       {preset: zai,       base_url: EMU/zai/v1,       api_key: ${ZAI_API_KEY}}
  sambanova: {preset: sambanova, base_url: EMU/sambanova/v1, api_key: ${SAMBANOVA_API_KEY}}
chains:
  free:
    routes: [zai/glm-4.7-flash, sambanova/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
`

// TestZaiThrottleAndSambaNovaFreeTier: Z.ai's concurrency throttle (a 429
// with code 1302) hands the answer to SambaNova and rests the Z.ai route as
// a rate limit; SambaNova's answer counts against its preset's Free Tier
// day of 20 requests.
func TestZaiThrottleAndSambaNovaFreeTier(t *testing.T) {
	checkLeaks(t)
	env := map[string]string{"ZAI_API_KEY": "zai_test_0001", "SAMBANOVA_API_KEY": "sn_test_0001"}
	s := startStackWith(t, stackOptions{providers: moreFreeConfig, env: env})
	h := harnessOf(t, s)
	h.emu.AddProvider(emulator.Provider{Name: "zai", Flavor: emulator.FlavorZai, Key: "zai_test_0001"})
	h.emu.AddModel("zai", emulator.Model{ID: "glm-4.7-flash"})
	h.emu.AddProvider(emulator.Provider{Name: "sambanova", Flavor: emulator.FlavorGeneric, Key: "sn_test_0001"})
	h.emu.AddModel("sambanova", emulator.Model{ID: "gpt-oss-120b"})
	h.emu.Script("zai", "glm-4.7-flash", emulator.Step{Kind: emulator.HighDemand})

	r := h.askText("free", "hello")
	if got := r.header.Get("X-Tollfree-Route"); r.status != 200 || got != "sambanova/gpt-oss-120b" {
		t.Fatalf("status %d, answered by %q, want sambanova/gpt-oss-120b: %s", r.status, got, r.body)
	}
	snap := h.snapshot()
	z := routeOf(t, snap, "zai/glm-4.7-flash")
	if z.Rest == nil || z.Rest.Class != "rate_minute" {
		t.Errorf("zai after its 1302 throttle: state %s rest %+v, want a rate_minute rest", z.State, z.Rest)
	}
	sn := routeOf(t, snap, "sambanova/gpt-oss-120b")
	if d := sn.Budget.RPD; d.Limit != 20 || d.Used != 1 {
		t.Errorf("sambanova day window = %d/%d, want 1/20 (the Free Tier's 20 requests a day)", d.Used, d.Limit)
	}
}
