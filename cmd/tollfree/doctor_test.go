package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/emulator"
)

// doctorEmulator serves groq and gemini, expecting the keys set by
// doctorEnv, and returns the config file text pointing at it.
func doctorEmulator(t *testing.T) (*emulator.Emulator, string) {
	t.Helper()
	emu := emulator.New(emulator.Options{})
	emu.AddProvider(emulator.Provider{Name: "groq", Flavor: emulator.FlavorGroq, Key: "gsk_cmd_test_key"})
	emu.AddProvider(emulator.Provider{Name: "gemini", Flavor: emulator.FlavorGemini, Key: "AIzaCmdTestKey"})
	emu.AddModel("groq", emulator.Model{ID: "llama-3.3-70b-versatile"})
	emu.AddModel("groq", emulator.Model{ID: "llama-3.1-8b-instant"})
	emu.AddModel("gemini", emulator.Model{ID: "gemini-3-flash"})
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	cfg := strings.ReplaceAll(`
providers:
  groq:   {preset: groq,   base_url: EMU/groq/v1,       api_key: ${GROQ_API_KEY}}
  gemini: {preset: gemini, base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
chains:
  answer: {routes: [groq/llama-3.3-70b-versatile, gemini/gemini-3-flash]}
  small:  {routes: [groq/llama-3.1-8b-instant]}
`, "EMU", srv.URL)
	return emu, cfg
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDoctorCommand(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		groqKey   string
		script    func(e *emulator.Emulator)
		badConfig bool
		wantCode  int
		wantCalls int
		// wantOut and wantErr must appear in stdout and stderr.
		wantOut []string
		wantErr []string
	}{
		{
			name: "all working", args: []string{"-thinking=false"}, groqKey: "gsk_cmd_test_key",
			wantCode: 0, wantCalls: 3,
			wantOut: []string{
				"test.yaml: valid, 2 providers, 3 routes, 2 chains",
				"present (env GROQ_API_KEY)",
				"at most 3 requests",
				"chain answer: 2 of 2 routes working",
				"chain small: 1 of 1 route working",
				"spent: 3 requests",
			},
		},
		{
			name: "key refused", groqKey: "gsk_wrong", wantCode: 1,
			// groq: one 401, its second route not called; gemini: 1 + 4 levels.
			wantCalls: 6,
			wantOut: []string{
				"groq/llama-3.3-70b-versatile: auth",
				"groq/llama-3.1-8b-instant: skipped",
				"chain answer: 1 of 2 routes working, first gemini/gemini-3-flash",
				"chain small: NO WORKING ROUTE",
			},
			wantErr: []string{"tollfree doctor: no working route in chain small"},
		},
		{
			name: "gone and a refused level", groqKey: "gsk_cmd_test_key", wantCode: 1,
			script: func(e *emulator.Emulator) {
				e.SetDefault("groq", "llama-3.1-8b-instant", emulator.Step{Kind: emulator.NotFound})
				e.Script("gemini", "gemini-3-flash", emulator.Step{Kind: emulator.Answer}, emulator.Step{Kind: emulator.BadThinking})
			},
			wantCalls: 7,
			wantOut: []string{
				"groq/llama-3.1-8b-instant: gone",
				"accepts LOW MEDIUM HIGH; refuses MINIMAL",
				"MINIMAL refused: bad_config",
			},
			wantErr: []string{"no working route in chain small"},
		},
		{
			name: "dry run", args: []string{"-dry-run"}, wantCode: 0, wantCalls: 0,
			wantOut: []string{"missing (no key: set GROQ_API_KEY)", "dry run: nothing is sent", "gemini/gemini-3-flash  5"},
		},
		{
			name: "invalid config", badConfig: true, wantCode: 1,
			wantErr: []string{"tollfree doctor: the config is not valid"},
		},
		{name: "bad flag", args: []string{"-nope"}, wantCode: 2, wantErr: []string{"flag provided but not defined: -nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emu, cfg := doctorEmulator(t)
			if tt.script != nil {
				tt.script(emu)
			}
			if tt.badConfig {
				cfg += "  broken: {routes: [groq/no-such-model]}\n"
			}
			path := writeFile(t, "test.yaml", cfg)
			t.Setenv("GROQ_API_KEY", tt.groqKey)
			t.Setenv("GEMINI_API_KEY", "AIzaCmdTestKey")
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"doctor", "-config", path}, tt.args...), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			if got := len(emu.Records()); got != tt.wantCalls {
				t.Errorf("emulator got %d calls, want %d", got, tt.wantCalls)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			for _, key := range []string{"gsk_cmd_test_key", "gsk_wrong", "AIzaCmdTestKey"} {
				if strings.Contains(stdout.String()+stderr.String(), key) {
					t.Errorf("output holds the key %q", key)
				}
			}
		})
	}
}
