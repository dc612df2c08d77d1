package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
)

// TestPresetsCommand: `tollfree presets` prints every preset with its
// status, the public page it was checked against and that page's date,
// and every model with its status; GitHub Models shows as retired with
// what to use instead. Each says where its key is read from and whether it
// is set (never the key), and each model what it takes, its context and
// its JSON support (issue 34).
func TestPresetsCommand(t *testing.T) {
	t.Setenv("GROQ_API_KEY", "gsk-presets-test-key")
	t.Setenv("GEMINI_API_KEY", "")
	var out, errb bytes.Buffer
	if code := run([]string{"presets"}, &out, &errb); code != 0 {
		t.Fatalf("presets: exit %d, %s", code, errb.String())
	}
	got := out.String()
	for _, p := range config.Presets() {
		head := p.Name + ": " + p.Checked.Status.String()
		if !strings.Contains(got, head) {
			t.Errorf("no line %q", head)
		}
		if !strings.Contains(got, "  checked: "+p.Checked.URL+" dated "+p.Checked.Date) {
			t.Errorf("%s: its source and date are not printed", p.Name)
		}
		for _, m := range p.Models {
			if !strings.Contains(got, "  "+p.Name+"/"+m.ID) {
				t.Errorf("model %s/%s not listed", p.Name, m.ID)
			}
		}
	}
	for _, want := range []string{
		"github: retired since 2026-07-30; use openrouter",
		"groq/llama-3.3-70b-versatile",
		"retired 2026-08-16, use groq/openai/gpt-oss-120b",
		"  key: GROQ_API_KEY (set)",
		"  key: GEMINI_API_KEY (not set: the provider is disabled)",
		"  key: none needed",
		"MODEL", "FREE LIMITS", "TAKES", "CONTEXT", "JSON",
		"tools,vision,audio", "embeddings(3072)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("presets does not say %q", want)
		}
	}
	if strings.Contains(got, "gsk-presets-test-key") {
		t.Error("presets printed a key")
	}
	if code := run([]string{"presets", "extra"}, &out, &errb); code == 0 {
		t.Error("presets took an argument")
	}
}

// TestCheckWarnsOfAnOldPreset: `tollfree check` warns, naming the provider,
// when the preset a chain uses was checked more than 120 days ago by the
// clock (moved here), and not a day before; a retired model is a warning
// with what to use instead, a retired preset an error.
func TestCheckWarnsOfAnOldPreset(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tollfree.yaml")
	src := "providers:\n  nvidia: {}\n  groq: {}\nchains:\n  a: {routes: [nvidia/openai/gpt-oss-120b, groq/llama-3.3-70b-versatile]}\n"
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	nvidia, _ := config.LookupPreset("nvidia")
	checked, err := nvidia.Checked.When()
	if err != nil {
		t.Fatal(err)
	}
	defer func(old func() time.Time) { now = old }(now)
	stale := "warning: provider nvidia: the nvidia preset was last checked against https://build.nvidia.com dated " + nvidia.Checked.Date
	retired := "warning: chain a: groq/llama-3.3-70b-versatile was retired by groq on 2026-08-16"
	for _, tc := range []struct {
		days      int
		wantStale bool
	}{{119, false}, {121, true}} {
		now = func() time.Time { return checked.Add(time.Duration(tc.days) * 24 * time.Hour) }
		var out, errb bytes.Buffer
		if code := run([]string{"check", file}, &out, &errb); code != 0 {
			t.Fatalf("check: exit %d: %s", code, errb.String())
		}
		if got := strings.Contains(out.String(), stale); got != tc.wantStale {
			t.Errorf("%d days after the check: stale warning %v, want %v:\n%s", tc.days, got, tc.wantStale, out.String())
		}
		if !strings.Contains(out.String(), retired) {
			t.Errorf("no warning %q:\n%s", retired, out.String())
		}
	}
	if err := os.WriteFile(file, []byte("providers:\n  github: {}\nchains:\n  a: {routes: [github/openai/gpt-4o]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"check", file}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "the github preset was retired on 2026-07-30") {
		t.Errorf("check of a chain naming GitHub Models: exit %d, %s", code, errb.String())
	}
}

// TestPresetsRead: `tollfree presets -read FILE` reads each enabled
// provider's model list now and says which routes' models it lacks and
// which free models no chain uses, and what a chain's route patterns
// expand to; a list it cannot read is said so.
func TestPresetsRead(t *testing.T) {
	emu := emulator.New(emulator.Options{})
	emu.AddProvider(emulator.Provider{Name: "groq", Flavor: emulator.FlavorGroq, Key: "gsk-presets-read"})
	emu.AddProvider(emulator.Provider{Name: "openrouter", Flavor: emulator.FlavorOpenRouter, Key: "or-presets-read"})
	emu.AddModel("groq", emulator.Model{ID: "openai/gpt-oss-120b"})
	emu.AddModel("openrouter", emulator.Model{ID: "a/one:free"})
	emu.AddModel("openrouter", emulator.Model{ID: "b/two:free"})
	emu.AddModel("openrouter", emulator.Model{ID: "c/paid", Price: emulator.Price{Prompt: 0.000001}})
	srv := httptest.NewServer(emu)
	defer srv.Close()
	t.Setenv("GROQ_API_KEY", "gsk-presets-read")
	t.Setenv("OPENROUTER_API_KEY", "or-presets-read")
	t.Setenv("MISTRAL_API_KEY", "mistral-wrong-key")
	file := filepath.Join(t.TempDir(), "tollfree.yaml")
	src := strings.ReplaceAll(`providers:
  groq: {base_url: EMU/groq/v1}
  openrouter: {base_url: EMU/openrouter/v1}
  mistral: {base_url: EMU/nobody/v1}
chains:
  a: {routes: [groq/openai/gpt-oss-120b, groq/openai/gpt-oss-20b, "openrouter/a/one:free", mistral/mistral-small-latest]}
  p: {routes: ["openrouter/c/*", "openrouter/a/*"]}
`, "EMU", srv.URL)
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"presets", "-read", file}, &out, &errb); code != 0 {
		t.Fatalf("presets -read: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"groq: 1 models listed\n  gone: groq/openai/gpt-oss-20b is not in the list\n",
		"openrouter: 3 models listed\n  free and used by no chain: b/two:free\n",
		"mistral: model list not read (see below); routes left as they are\n",
		"GET /models answered 404",
		"chain p: openrouter/c/*, openrouter/a/* expanded to openrouter/a/one:free\n", // c/paid: priced, not a :free id
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("presets -read does not say %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "gsk-presets-read") || strings.Contains(out.String(), "or-presets-read") {
		t.Error("presets -read printed a key")
	}
}
