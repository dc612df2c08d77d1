package config

import (
	"strings"
	"testing"
	"time"
)

// TestEveryPresetChecked: every preset names the public page it was last
// checked against and the date that page gives, in one form
// (YYYY-MM-DD); a retired or paid-only one says since when and what to use
// instead, and so does every retired or paid-only model, with its source.
func TestEveryPresetChecked(t *testing.T) {
	cat := presetCatalog()
	for _, p := range Presets() {
		c := p.Checked
		if !strings.HasPrefix(c.URL, "https://") {
			t.Errorf("%s: checked against %q, not a public URL", p.Name, c.URL)
		}
		if _, err := time.Parse(time.DateOnly, c.Date); err != nil {
			t.Errorf("%s: checked date %q is not YYYY-MM-DD", p.Name, c.Date)
		}
		if c.Note == "" {
			t.Errorf("%s: no note of what the page says", p.Name)
		}
		switch c.Status {
		case StatusActive:
			if c.Since != "" || c.Instead != "" {
				t.Errorf("%s: active, but since %q instead %q", p.Name, c.Since, c.Instead)
			}
		case StatusRetired, StatusPaidOnly:
			if _, err := time.Parse(time.DateOnly, c.Since); err != nil || c.Instead == "" {
				t.Errorf("%s: %s since %q, instead %q: want a date and what to use", p.Name, c.Status, c.Since, c.Instead)
			}
		default:
			t.Errorf("%s: status %q is none of active, retired, paid-only", p.Name, c.Status)
		}
		for _, m := range p.Models {
			if m.Status == StatusActive {
				if m.Retired != "" || m.Instead != "" {
					t.Errorf("%s/%s: active, but retired %q instead %q", p.Name, m.ID, m.Retired, m.Instead)
				}
				continue
			}
			if _, err := time.Parse(time.DateOnly, m.Retired); err != nil {
				t.Errorf("%s/%s: %s on %q, not YYYY-MM-DD", p.Name, m.ID, m.Status, m.Retired)
			}
			if !strings.Contains(m.StatusSource, "https://") {
				t.Errorf("%s/%s: %s, source %q has no public URL", p.Name, m.ID, m.Status, m.StatusSource)
			}
			// What to use instead is a route of the catalog that is
			// itself offered.
			prov, model, _ := strings.Cut(m.Instead, "/")
			ip, ok := cat[prov]
			if !ok {
				t.Errorf("%s/%s: instead %q names no preset", p.Name, m.ID, m.Instead)
				continue
			}
			im, ok := ip.Model(model)
			if (!ok && !ip.acceptsAny(model)) || im.Status != StatusActive || ip.Checked.Status == StatusRetired {
				t.Errorf("%s/%s: instead %q is not an offered route", p.Name, m.ID, m.Instead)
			}
		}
	}
	for route := range modelStatuses {
		prov, model, _ := strings.Cut(route, "/")
		if _, ok := cat[prov].Model(model); !ok {
			t.Errorf("status for %s, a model no preset lists", route)
		}
	}
	for name := range presetChecks {
		if _, ok := cat[name]; !ok {
			t.Errorf("check for %s, no such preset", name)
		}
	}
}

// TestRetiredPresetIsAnError: a chain naming a route of a retired preset
// does not load, and the error says when and what to use instead.
func TestRetiredPresetIsAnError(t *testing.T) {
	_, err := Parse("t.yaml", []byte("providers:\n  github: {}\nchains:\n  a: {routes: [github/openai/gpt-4o-mini]}\n"), testEnv(nil))
	if err == nil {
		t.Fatal("a chain naming GitHub Models loaded")
	}
	for _, want := range []string{"t.yaml:4: chains.a.routes[0]", "retired on 2026-07-30", "https://github.blog/changelog/2026-07-30-github-models-is-now-retired/", "use openrouter"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// Listed but named by no chain, it loads.
	if _, err := Parse("t.yaml", []byte("providers:\n  github: {}\n  groq: {}\nchains:\n  a: {routes: [groq/openai/gpt-oss-120b]}\n"), testEnv(nil)); err != nil {
		t.Errorf("a plan listing github but routing elsewhere: %v", err)
	}
}

// TestCatalogNotes: a chain naming a retired model, a paid-only preset or
// a preset whose check is older than 120 days loads, with a warning that
// names the provider, the date and what to use instead; the age is
// measured against the clock given, not the machine's.
func TestCatalogNotes(t *testing.T) {
	src := `
providers:
  groq: {}
  cerebras: {}
  nvidia: {}
chains:
  a: {routes: [groq/llama-3.3-70b-versatile, groq/openai/gpt-oss-120b, cerebras/gpt-oss-120b, nvidia/openai/gpt-oss-120b]}
`
	p, err := Parse("t.yaml", []byte(src), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	nvidia, _ := LookupPreset("nvidia")
	checked, err := nvidia.Checked.When()
	if err != nil {
		t.Fatal(err)
	}
	text := func(now time.Time) string {
		var b strings.Builder
		for _, n := range p.CatalogNotes(now) {
			b.WriteString(n.Provider + ": " + n.Text + "\n")
		}
		return b.String()
	}
	fresh := text(checked.Add(119 * 24 * time.Hour))
	for _, want := range []string{
		"groq: chain a: groq/llama-3.3-70b-versatile was retired by groq on 2026-08-16",
		"use groq/openai/gpt-oss-120b instead",
		"cerebras: provider cerebras: the cerebras preset's free tier needs a payment method since 2026-08-17",
	} {
		if !strings.Contains(fresh, want) {
			t.Errorf("notes do not say %q:\n%s", want, fresh)
		}
	}
	if strings.Contains(fresh, "provider nvidia") || strings.Contains(fresh, "gpt-oss-120b was retired") {
		t.Errorf("a check 119 days old, or an active model, warned about:\n%s", fresh)
	}
	stale := text(checked.Add(121 * 24 * time.Hour))
	want := "nvidia: provider nvidia: the nvidia preset was last checked against https://build.nvidia.com dated " + nvidia.Checked.Date + ", 121 days ago"
	if !strings.Contains(stale, want) {
		t.Errorf("a check 121 days old: notes do not say %q:\n%s", want, stale)
	}
}
