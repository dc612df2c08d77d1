package config

import (
	"fmt"
	"time"
)

// Free tiers change every few weeks (issue 35): a provider retires models,
// asks for a payment method, or closes its free offer. Each preset says
// when the catalog last checked it against the provider's own page
// (Preset.Checked), and each model the provider retired or stopped
// offering free says so (PresetModel.Status), with the date and what to
// use instead. They are kept, so that a config naming them gets a clear
// message rather than a silent failure: a chain naming a retired preset is
// an error, a retired or paid-only model or a paid-only preset a warning,
// and a check older than StaleAfter a warning too (Plan.CatalogNotes).

// Status is whether an offer still stands.
type Status string

// The statuses of a preset or a model.
const (
	// StatusActive (the zero value): offered free as the catalog says.
	StatusActive Status = ""
	// StatusRetired: the provider turned it off; a call fails.
	StatusRetired Status = "retired"
	// StatusPaidOnly: it still answers, but no longer without a payment
	// method or bought credits.
	StatusPaidOnly Status = "paid-only"
)

// String is the status as `tollfree presets` prints it.
func (s Status) String() string {
	if s == StatusActive {
		return "active"
	}
	return string(s)
}

// StaleAfter is how old a preset's check may be before `check` and `serve`
// warn that it should be done again.
const StaleAfter = 120 * 24 * time.Hour

// Checked is a preset's last check against its provider's public page.
type Checked struct {
	// URL is the page checked, public.
	URL string
	// Date is the date the page gives (YYYY-MM-DD); for a page that gives
	// none, the day it was read, and Note says so.
	Date string
	// Status is the free offer's; Since the date it changed, Instead what
	// to use in its place.
	Status  Status
	Since   string
	Instead string
	// Note is what the page says, in a line.
	Note string
}

// When returns the check's date.
func (c Checked) When() (time.Time, error) {
	return time.Parse(time.DateOnly, c.Date)
}

// Sources of the model statuses below, each a public page.
const (
	stGroqDeprecations = "https://console.groq.com/docs/deprecations (shutdown dates as quoted in github.com/promptfoo/promptfoo/pull/9933 [2026-07-01] and github.com/groq/groq-changelog/pull/20 [2026-08-10])"
	stGeminiDeprec     = "https://ai.google.dev/gemini-api/docs/deprecations (read 2026-11-10 by dev.to/aideprecations): gemini-2.5-flash shut down 2026-12-01, its requests sent to gemini-3.5-flash-lite"
	stGeminiFree       = "https://ai.google.dev/gemini-api/docs/pricing free-tier column (read 2026-10-22, apidog.com/jp/blog/gemini-api-free-tier): free are gemini-3.8-flash, 3.6-flash, 3.5-flash-lite, 3.1-flash-lite and Gemma; not this one"
	stCerebrasDeprec   = "https://inference-docs.cerebras.ai/support/deprecation"
	stMistralNemo      = "https://docs.mistral.ai/models/mistral-nemo-12b-24-07.md: deprecated 2026-05-22, retired 2026-07-31, replaced by Ministral 3 8B"
	stCloudflare       = "https://developers.cloudflare.com/changelog/post/2026-05-08-planned-model-deprecations/: eighteen older models deprecated on 2026-05-30, @cf/zai-org/glm-4.7-flash recommended"
)

// presetChecks is each preset's last check (issue 35, done 2026-12-04).
var presetChecks = map[string]Checked{
	"groq": {URL: "https://console.groq.com/docs/deprecations", Date: "2026-08-16",
		Note: "llama-3.3-70b-versatile and llama-3.1-8b-instant shut down 2026-08-16 for free and developer plans, qwen3-32b and llama-4-scout 2026-07-17; use openai/gpt-oss-120b or qwen/qwen3.6-27b. Free limits (30 RPM, 1,000 RPD on gpt-oss) as published 2026-07-25 (github.com/xyzs996/free-llm-api/discussions/3)"},
	"gemini": {URL: "https://ai.google.dev/gemini-api/docs/deprecations", Date: "2026-11-10",
		Note: "gemini-2.5-flash shut down 2026-12-01; Google no longer publishes per-model free RPM/RPD (they show in AI Studio per project), so the newer models carry none; RPD resets at midnight Pacific (https://ai.google.dev/gemini-api/docs/rate-limits)"},
	"cerebras": {URL: "https://www.cerebras.ai/pricing", Date: "2026-09-03", Status: StatusPaidOnly, Since: "2026-08-17", Instead: "groq/openai/gpt-oss-120b",
		Note: "the no-card free tier ended 2026-08-17: a one-time $5 credit behind a verified payment method, valid 30 days (as read 2026-09-03 in github.com/diegosouzapw/OmniRoute/pull/12591; github.com/mnfst/awesome-free-llm-apis/issues/76)"},
	"openrouter": {URL: "https://openrouter.ai/docs/guides/routing/model-variants/free.md", Date: "2026-10-17",
		Note: "20 RPM and 50 RPD over every :free model (1,000 RPD once 10 credits were bought), the UTC day (read 2026-10-17, developersdigest.tech/rate-limits/openrouter)"},
	"nvidia": {URL: "https://build.nvidia.com", Date: "2026-06-10",
		Note: "40 RPM per account, rolling, no daily cap; credits discontinued (audit of 2026-06-10, github.com/tashfeenahmed/freellmapi/pull/274)"},
	"mistral": {URL: "https://mistral.ai/pricing", Date: "2026-08-19",
		Note: "Free mode (was Experiment), no card: $10 a month of API credits shared with Studio and Vibe; the 1B tokens a month is on no Mistral page any more (github.com/mnfst/awesome-free-llm-apis/pull/100); open-mistral-nemo retired 2026-07-31"},
	"github": {URL: "https://github.blog/changelog/2026-07-30-github-models-is-now-retired/", Date: "2026-07-30", Status: StatusRetired, Since: "2026-07-30", Instead: "openrouter (OPENROUTER_API_KEY) or groq/openai/gpt-oss-120b",
		Note: "GitHub Models retired on 2026-07-30: playground, catalog and inference API; the endpoint answers 410 (github.com/slack-ruby/slack-ruby-client/pull/593)"},
	"cloudflare": {URL: "https://developers.cloudflare.com/changelog/post/2026-05-08-planned-model-deprecations/", Date: "2026-05-08",
		Note: "10,000 Neurons a day, reset 00:00 UTC (https://developers.cloudflare.com/workers-ai/platform/pricing/); eighteen older models deprecated 2026-05-30, @cf/zai-org/glm-4.7-flash recommended"},
	"pollinations": {URL: "https://github.com/pollinations/pollinations/blob/main/APIDOCS.md", Date: "2026-12-04",
		Note: "undated page, read 2026-12-04: OpenAI-compatible /v1/chat/completions on gen.pollinations.ai; keys from enter.pollinations.ai, pollen tiers in beta"},
	"cohere": {URL: "https://docs.cohere.com/docs/rate-limits", Date: "2026-12-04",
		Note: "undated page, read 2026-12-04: trial keys 1,000 API calls a month, 20 req/min per chat model"},
	"sambanova": {URL: "https://github.com/mnfst/awesome-free-llm-apis/issues/95", Date: "2026-08-20", Status: StatusPaidOnly, Since: "2026-08-20", Instead: "groq/openai/gpt-oss-120b",
		Note: "every model answers 402 PAYMENT_METHOD_REQUIRED with a real key, and https://sambanova.ai/pricing lists per-token prices only (verified over two days, 2026-08-19 to 2026-08-20)"},
	"zai": {URL: "https://docs.z.ai/guides/overview/pricing", Date: "2026-05-08",
		Note: "GLM-4.7-Flash and GLM-4.5-Flash free; limits unpublished (as read 2026-05-08, github.com/api-evangelist/zhipu-ai plans)"},
	"ovhcloud": {URL: "https://endpoints.ai.cloud.ovh.net", Date: "2026-06-10",
		Note: "keyless anonymous tier, 2 requests a minute per IP and per model (audit of 2026-06-10, github.com/tashfeenahmed/freellmapi/pull/274)"},
	"huggingface": {URL: "https://huggingface.co/docs/inference-providers/pricing", Date: "2026-12-04", Status: StatusPaidOnly, Since: "2026-12-04", Instead: "openrouter/*:free",
		Note: "read 2026-12-04 (hub-docs pricing.md on main): free users get no monthly credits; Inference Providers need bought credits or PRO"},
	"ollama": {URL: "https://github.com/ollama/ollama/blob/main/docs/openai.md", Date: "2026-12-04",
		Note: "local: no key and no limits; read 2026-12-04"},
}

// modelStatuses are the models a provider retired or stopped offering
// free, by route id.
var modelStatuses = map[string]PresetModel{
	"groq/llama-3.1-8b-instant":                      {Status: StatusRetired, Retired: "2026-08-16", Instead: "groq/openai/gpt-oss-20b", StatusSource: stGroqDeprecations},
	"groq/llama-3.3-70b-versatile":                   {Status: StatusRetired, Retired: "2026-08-16", Instead: "groq/openai/gpt-oss-120b", StatusSource: stGroqDeprecations},
	"groq/qwen/qwen3-32b":                            {Status: StatusRetired, Retired: "2026-07-17", Instead: "groq/openai/gpt-oss-120b", StatusSource: stGroqDeprecations},
	"groq/meta-llama/llama-4-scout-17b-16e-instruct": {Status: StatusRetired, Retired: "2026-07-17", Instead: "groq/qwen/qwen3.6-27b", StatusSource: stGroqDeprecations},
	"gemini/gemini-2.5-flash":                        {Status: StatusRetired, Retired: "2026-12-01", Instead: "gemini/gemini-3.5-flash-lite", StatusSource: stGeminiDeprec},
	"gemini/gemini-3.5-flash":                        {Status: StatusPaidOnly, Retired: "2026-10-22", Instead: "gemini/gemini-3.6-flash", StatusSource: stGeminiFree},
	"gemini/gemini-3-flash":                          {Status: StatusPaidOnly, Retired: "2026-10-22", Instead: "gemini/gemini-3.6-flash", StatusSource: stGeminiFree},
	"cerebras/llama-3.3-70b":                         {Status: StatusRetired, Retired: "2026-02-16", Instead: "groq/openai/gpt-oss-120b", StatusSource: stCerebrasDeprec + ": deprecated 2026-02-16, GPT OSS 120B recommended"},
	"cerebras/qwen-3-32b":                            {Status: StatusRetired, Retired: "2026-02-16", Instead: "groq/openai/gpt-oss-120b", StatusSource: stCerebrasDeprec + ": deprecated 2026-02-16, GPT OSS 120B recommended"},
	"cerebras/llama3.1-8b":                           {Status: StatusRetired, Retired: "2026-05-27", Instead: "groq/openai/gpt-oss-20b", StatusSource: stCerebrasDeprec + ": fully deprecated 2026-05-27"},
	"cerebras/qwen-3-235b-a22b-instruct-2507":        {Status: StatusRetired, Retired: "2026-05-27", Instead: "groq/openai/gpt-oss-120b", StatusSource: stCerebrasDeprec + ": fully deprecated 2026-05-27"},
	"cerebras/qwen-3-235b-a22b-thinking-2507":        {Status: StatusRetired, Retired: "2025-11-14", Instead: "groq/openai/gpt-oss-120b", StatusSource: stCerebrasDeprec + ": deprecated 2025-11-14"},
	"cerebras/qwen-3-coder-480b":                     {Status: StatusRetired, Retired: "2025-11-05", Instead: "openrouter/qwen/qwen3-coder:free", StatusSource: stCerebrasDeprec + ": deprecated 2025-11-05"},
	"mistral/open-mistral-nemo":                      {Status: StatusRetired, Retired: "2026-07-31", Instead: "mistral/mistral-small-latest", StatusSource: stMistralNemo},
	"cloudflare/@cf/meta/llama-3.1-8b-instruct":      {Status: StatusRetired, Retired: "2026-05-30", Instead: "cloudflare/@cf/zai-org/glm-4.7-flash", StatusSource: stCloudflare},
}

// applyChecks sets each preset's Checked and its models' statuses.
func applyChecks(list []Preset) {
	for i := range list {
		p := &list[i]
		p.Checked = presetChecks[p.Name]
		for j := range p.Models {
			m := &p.Models[j]
			if st, ok := modelStatuses[p.Name+"/"+m.ID]; ok {
				m.Status, m.Retired, m.Instead, m.StatusSource = st.Status, st.Retired, st.Instead, st.StatusSource
			}
		}
	}
}

// retiredRoute says why a chain may not name a route of a retired preset,
// and what to use instead; "" when it may.
func (p *Preset) retiredRoute(id string) string {
	c := p.Checked
	if c.Status != StatusRetired {
		return ""
	}
	return fmt.Sprintf("route %q: the %s preset was retired on %s (%s); use %s instead", id, p.Name, c.Since, c.URL, c.Instead)
}

// CatalogNote is one warning about the catalog behind a plan.
type CatalogNote struct {
	// Provider is the provider it is about.
	Provider string
	// Text is the line, without "warning: ".
	Text string
}

// CatalogNotes returns what `check` and `serve` warn about the presets the
// plan's chains use, as of now: a preset whose check is older than
// StaleAfter, a paid-only preset, and a retired or paid-only model.
// Providers no chain names are left out: the built-in defaults list every
// preset.
func (p *Plan) CatalogNotes(now time.Time) []CatalogNote {
	var out []CatalogNote
	seen := map[string]bool{}
	for _, name := range p.ChainOrder {
		for _, r := range p.Chains[name].Routes {
			pr := r.Provider
			if pr == nil || pr.Preset == "" {
				continue
			}
			preset, ok := LookupPreset(pr.Preset)
			if !ok {
				continue
			}
			if !seen[pr.Name] {
				seen[pr.Name] = true
				out = append(out, presetNotes(pr.Name, preset, now)...)
			}
			if m, ok := preset.Model(r.Model); ok && m.Status != StatusActive && !seen[r.ID] {
				seen[r.ID] = true
				verb := "was retired by " + pr.Name + " on " + m.Retired
				if m.Status == StatusPaidOnly {
					verb = "is no longer free on " + pr.Name + " (since " + m.Retired + ")"
				}
				out = append(out, CatalogNote{Provider: pr.Name, Text: fmt.Sprintf("chain %s: %s %s (%s); use %s instead", name, r.ID, verb, m.StatusSource, m.Instead)})
			}
		}
	}
	return out
}

// presetNotes are the warnings about one preset itself.
func presetNotes(name string, p Preset, now time.Time) []CatalogNote {
	var out []CatalogNote
	c := p.Checked
	if c.Status == StatusPaidOnly {
		out = append(out, CatalogNote{Provider: name, Text: fmt.Sprintf("provider %s: the %s preset's free tier needs a payment method since %s (%s); keep it if your account has one, else use %s", name, p.Name, c.Since, c.URL, c.Instead)})
	}
	if when, err := c.When(); err == nil && now.Sub(when) > StaleAfter {
		days := int(now.Sub(when) / (24 * time.Hour))
		out = append(out, CatalogNote{Provider: name, Text: fmt.Sprintf("provider %s: the %s preset was last checked against %s dated %s, %d days ago: its free limits may have changed (the preset's limits are defaults; learned limits win)", name, p.Name, c.URL, c.Date, days)})
	}
	return out
}
