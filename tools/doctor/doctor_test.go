package doctor

import (
	"bytes"
	"context"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/clock"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// keys are what the emulated providers expect; cerebras is given a wrong
// one and openrouter none.
var keys = map[string]string{
	"GROQ_API_KEY":     "gsk_test_groq_key_0001",
	"GEMINI_API_KEY":   "AIzaTestGeminiKey0001",
	"CEREBRAS_API_KEY": "csk-wrong-key",
}

const providersYAML = `
providers:
  groq:       {preset: groq,       base_url: EMU/groq/v1,       api_key: ${GROQ_API_KEY}, models: {retired-model: {}}}
  gemini:     {preset: gemini,     base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras:   {preset: cerebras,   base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`

// fixture is an emulator on a fake clock and a plan pointing at it.
type fixture struct {
	clk  *clock.Fake
	emu  *emulator.Emulator
	plan *config.Plan
}

func newFixture(t *testing.T, chains string) *fixture {
	t.Helper()
	clk := clock.NewFake(t0)
	emu := emulator.New(emulator.Options{Clock: clk})
	emu.AddProvider(emulator.Provider{Name: "groq", Flavor: emulator.FlavorGroq, Key: keys["GROQ_API_KEY"]})
	emu.AddProvider(emulator.Provider{Name: "gemini", Flavor: emulator.FlavorGemini, Key: keys["GEMINI_API_KEY"]})
	emu.AddProvider(emulator.Provider{Name: "cerebras", Flavor: emulator.FlavorCerebras, Key: "csk-the-right-key"})
	emu.AddProvider(emulator.Provider{Name: "openrouter", Flavor: emulator.FlavorOpenRouter})
	for _, m := range []struct{ p, id string }{
		{"groq", "llama-3.3-70b-versatile"}, {"groq", "openai/gpt-oss-120b"}, {"groq", "retired-model"},
		{"gemini", "gemini-3-flash"}, {"gemini", "gemini-2.5-flash"}, {"gemini", "gemma-3-27b-it"},
		{"cerebras", "gpt-oss-120b"}, {"cerebras", "llama3.1-8b"},
		{"openrouter", "openai/gpt-oss-120b:free"},
	} {
		emu.AddModel(m.p, emulator.Model{ID: m.id})
	}
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	yaml := "data_dir: " + t.TempDir() + "\ncall_log: \"off\"\n" + strings.ReplaceAll(providersYAML, "EMU", srv.URL) + chains
	plan, err := config.Parse("test.yaml", []byte(yaml), func(k string) string { return keys[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return &fixture{clk: clk, emu: emu, plan: plan}
}

const mixedChains = `
chains:
  answer:
    routes:
      - groq/llama-3.3-70b-versatile
      - groq/openai/gpt-oss-120b
      - gemini/gemini-3-flash
      - gemini/gemini-2.5-flash
      - gemini/gemma-3-27b-it
  backup:
    routes:
      - cerebras/gpt-oss-120b
      - cerebras/llama3.1-8b
      - groq/retired-model
      - openrouter/openai/gpt-oss-120b:free
`

func TestRun(t *testing.T) {
	tests := []struct {
		name   string
		chains string
		// script scripts the emulator before the run.
		script func(e *emulator.Emulator)
		opts   Options
		// wantBroken are the chains with no working route.
		wantBroken []string
		// wantCalls is how many calls the emulator should receive.
		wantCalls int
		// scripted429 is set when the script itself answers a 429.
		scripted429 bool
	}{
		{
			name:   "mixed",
			chains: mixedChains,
			script: func(e *emulator.Emulator) {
				// gpt-oss: the probe, then low, medium (refused), high.
				e.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer}, emulator.Step{Kind: emulator.Answer},
					emulator.Step{Kind: emulator.BadThinking}, emulator.Step{Kind: emulator.Answer})
				e.SetDefault("groq", "retired-model", emulator.Step{Kind: emulator.NotFound})
				// gemini-3-flash refuses MINIMAL; HIGH meets a minute limit.
				e.Script("gemini", "gemini-3-flash", emulator.Step{Kind: emulator.Answer}, emulator.Step{Kind: emulator.BadThinking},
					emulator.Step{Kind: emulator.Answer}, emulator.Step{Kind: emulator.Answer}, emulator.Step{Kind: emulator.RateMinute})
			},
			opts:        Options{Parallel: 1},
			wantBroken:  []string{"backup"},
			scripted429: true,
			// groq 1+4+1, gemini 5+3+1, cerebras 1 (the second is skipped)
			wantCalls: 16,
		},
		{
			name:   "no thinking",
			chains: mixedChains,
			opts:   Options{Parallel: 1, NoThinking: true, MaxTokens: 4},
			script: func(e *emulator.Emulator) {
				e.SetDefault("groq", "retired-model", emulator.Step{Kind: emulator.Decommissioned})
				e.SetDefault("gemini", "gemini-3-flash", emulator.Step{Kind: emulator.HighDemand})
			},
			wantCalls:  7,
			wantBroken: []string{"backup"},
		},
		{
			name:      "dry run",
			chains:    mixedChains,
			opts:      Options{DryRun: true},
			wantCalls: 0,
		},
		{
			name: "all working concurrent",
			chains: `
chains:
  answer: {routes: [groq/llama-3.3-70b-versatile, gemini/gemma-3-27b-it]}
  other:  {routes: [gemini/gemini-2.5-flash]}
`,
			opts:      Options{},
			wantCalls: 1 + 1 + 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.chains)
			if tt.script != nil {
				tt.script(f.emu)
			}
			var out bytes.Buffer
			o := tt.opts
			o.Plan, o.Clock, o.Out, o.Source = f.plan, f.clk, &out, "test.yaml"
			rep, err := Run(context.Background(), o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := rep.Broken(); !slices.Equal(got, tt.wantBroken) {
				t.Errorf("Broken() = %v, want %v", got, tt.wantBroken)
			}
			recs := f.emu.Records()
			if len(recs) != tt.wantCalls {
				t.Errorf("emulator got %d calls, want %d", len(recs), tt.wantCalls)
			}
			sent := 0
			for _, s := range rep.Spent {
				sent += s.Requests
			}
			if sent != len(recs) {
				t.Errorf("report says %d requests were spent, the emulator got %d", sent, len(recs))
			}
			for _, r := range recs {
				if r.Status == 429 && !tt.scripted429 {
					t.Errorf("emulator answered 429 to %s/%s: the probes were not paced", r.Provider, r.Model)
				}
			}
			for _, k := range keys {
				if strings.Contains(out.String(), k) {
					t.Errorf("output holds the key %q", k)
				}
			}
			if strings.Contains(out.String(), probePrompt) {
				t.Errorf("output holds the probe prompt")
			}
			got := out.String()
			if o.Parallel == 0 && !o.DryRun {
				// Providers finish in any order: compare the tables only.
				got = got[strings.Index(got, "\nROUTE"):]
			}
			golden(t, filepath.Join("testdata", strings.ReplaceAll(tt.name, " ", "_")+".golden"), got)
		})
	}
}

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file: %v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestRunPaces shows that the probes of one route keep within its requests
// per minute: the emulator enforces the same limit and would answer 429.
func TestRunPaces(t *testing.T) {
	f := newFixture(t, `
chains:
  answer: {routes: [gemini/gemini-3-flash]}
`)
	// The plan's preset says 5 a minute; make it 2 on both sides.
	f.plan.Routes["gemini/gemini-3-flash"].Limits.RPM = 2
	f.emu.AddModel("gemini", emulator.Model{ID: "gemini-3-flash", Limits: emulator.Limits{RPM: 2}})
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	clk := &sleepClock{Fake: f.clk, slept: make(chan time.Duration, 1)}
	done := make(chan *Report, 1)
	go func() {
		rep, err := Run(ctx, Options{Plan: f.plan, Clock: clk, Out: &out})
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- rep
	}()
	var rep *Report
	for waits := 0; rep == nil; {
		select {
		case rep = <-done:
		case d := <-clk.slept:
			if waits++; waits > 5 {
				t.Fatalf("more than 5 pacing waits for 5 requests at 2 a minute")
			}
			if err := f.clk.BlockUntil(ctx, 1); err != nil {
				t.Fatal(err)
			}
			f.clk.Advance(d)
		case <-ctx.Done():
			t.Fatal("the run did not finish")
		}
	}
	r := rep.Routes[0]
	if r.Result != ResultOK || r.Requests != 5 {
		t.Fatalf("route result %s after %d requests, want ok after 5\n%s", r.Result, r.Requests, out.String())
	}
	for _, l := range r.Thinking {
		if l.Result != LevelAccepted {
			t.Errorf("level %s: %s (%s %s), want accepted", l.Level, l.Result, l.Class, l.Detail)
		}
	}
	for _, rec := range f.emu.Records() {
		if rec.Status != 200 {
			t.Errorf("emulator answered %d at %s: the probes were not paced", rec.Status, rec.Time.Format(time.TimeOnly))
		}
	}
	if got, want := strings.Count(out.String(), "waiting 1m0s before the next probe: gemini/gemini-3-flash allows 2 requests a minute"), 2; got != want {
		t.Errorf("output has %d pacing notes, want %d:\n%s", got, want, out.String())
	}
}

// sleepClock is a Fake that tells the test each time the code under test
// starts a timer (the pacing wait; timeouts use AfterFunc).
type sleepClock struct {
	*clock.Fake
	slept chan time.Duration
}

func (c *sleepClock) NewTimer(d time.Duration) clock.Timer {
	t := c.Fake.NewTimer(d)
	c.slept <- d
	return t
}

// TestRunTimeout shows that a route that never answers is reported as a
// timeout once the probe's own timeout passes on the clock.
func TestRunTimeout(t *testing.T) {
	f := newFixture(t, `
chains:
  answer: {routes: [groq/llama-3.3-70b-versatile]}
`)
	f.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan *Report, 1)
	go func() {
		rep, err := Run(ctx, Options{Plan: f.plan, Clock: f.clk, Out: &out, Timeout: 5 * time.Second})
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- rep
	}()
	// The probe's timeout and the emulator's hang are both pending.
	if err := f.clk.BlockUntil(ctx, 2); err != nil {
		t.Fatalf("the probe never started: %v", err)
	}
	f.clk.Advance(5 * time.Second)
	rep := <-done
	if got := rep.Routes[0].Result; got != "timeout" {
		t.Errorf("result %q, want timeout\n%s", got, out.String())
	}
	if got := rep.Broken(); !slices.Equal(got, []string{"answer"}) {
		t.Errorf("Broken() = %v, want [answer]", got)
	}
	if got := rep.Routes[0].Latency; got != 5*time.Second {
		t.Errorf("latency %s, want 5s", got)
	}
}
