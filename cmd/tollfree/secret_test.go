package main

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/emulator"
)

// TestDoctorNeverPrintsEchoedKey: a provider that quotes the refused key
// back (issue 10, item 2) does not get it printed by doctor, on stdout or
// stderr, whatever the key's shape.
func TestDoctorNeverPrintsEchoedKey(t *testing.T) {
	const key = "correcthorsebatterystaple"
	emu := emulator.New(emulator.Options{})
	emu.AddProvider(emulator.Provider{Name: "groq", Flavor: emulator.FlavorGroq, Key: "gsk_cmd_test_key", EchoKey: emulator.EchoFull})
	emu.AddModel("groq", emulator.Model{ID: "llama-3.3-70b-versatile"})
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	path := writeFile(t, "test.yaml", strings.ReplaceAll(`
providers:
  groq: {preset: groq, base_url: EMU/groq/v1, api_key: ${GROQ_API_KEY}}
chains:
  answer: {routes: [groq/llama-3.3-70b-versatile]}
`, "EMU", srv.URL))
	t.Setenv("GROQ_API_KEY", key)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"doctor", "-config", path, "-thinking=false"}, &stdout, &stderr); code != 1 {
		t.Errorf("exit code %d, want 1 (the key is refused)", code)
	}
	if n := len(emu.Records()); n != 1 {
		t.Fatalf("emulator got %d calls, want 1", n)
	}
	out := stdout.String() + stderr.String()
	if !strings.Contains(out, "auth") {
		t.Errorf("doctor does not say the key was refused:\n%s", out)
	}
	if strings.Contains(out, key[:10]) {
		t.Error("doctor printed the key")
	}
}
