package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
)

// TestPresetsCommand: `tollfree presets` prints every preset with its
// status, the public page it was checked against and that page's date,
// and every model with its status; GitHub Models shows as retired with
// what to use instead.
func TestPresetsCommand(t *testing.T) {
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
	} {
		if !strings.Contains(got, want) {
			t.Errorf("presets does not say %q", want)
		}
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
