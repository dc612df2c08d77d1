package doctor

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// TestDoctorSaysTheProvidersLimits (issue 35): a probe whose rate-limit
// headers report a daily limit unlike the preset's is reported, with the
// preset's figure and the day; a limit the headers confirm is not.
func TestDoctorSaysTheProvidersLimits(t *testing.T) {
	f := newFixture(t, "chains:\n  answer: {routes: [groq/openai/gpt-oss-120b, groq/llama-3.3-70b-versatile]}\n")
	// The preset says 1000 a day for gpt-oss and 1000 for the 70B; the
	// account says 500 for gpt-oss and 1000 for the 70B.
	f.emu.AddModel("groq", emulator.Model{ID: "openai/gpt-oss-120b", Limits: emulator.Limits{RPD: 500, TPM: 8000}})
	f.emu.AddModel("groq", emulator.Model{ID: "llama-3.3-70b-versatile", Limits: emulator.Limits{RPD: 1000, TPM: 12000}})
	var out bytes.Buffer
	rep, err := Run(context.Background(), Options{Plan: f.plan, Clock: f.clk, Out: &out, NoThinking: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "groq/openai/gpt-oss-120b: preset rpd 1000, provider says 500 since " + t0.Format(time.DateOnly)
	if len(rep.LimitsSaid) != 1 || rep.LimitsSaid[0] != want {
		t.Errorf("LimitsSaid = %q, want [%q]", rep.LimitsSaid, want)
	}
	if !strings.Contains(out.String(), "limits the providers report unlike the configuration (the provider's figure is used):\n  "+want+"\n") {
		t.Errorf("doctor's output does not say %q:\n%s", want, out.String())
	}
}
