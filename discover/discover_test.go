package discover

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state/memstore"
)

var t0 = time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)

// setup is an emulator serving groq, gemini and openrouter, a plan over
// them (with the keys given) and a Discoverer on a memstore.
func setup(t *testing.T, groqKey string) (*emulator.Emulator, *Discoverer, *memstore.Store) {
	t.Helper()
	clk := clock.NewFake(t0)
	emu := emulator.New(emulator.Options{Clock: clk})
	emu.AddProvider(emulator.Provider{Name: "groq", Flavor: emulator.FlavorGroq, Key: "gsk-good-key"})
	emu.AddProvider(emulator.Provider{Name: "gemini", Flavor: emulator.FlavorGemini, Key: "AIza-good-key"})
	emu.AddProvider(emulator.Provider{Name: "openrouter", Flavor: emulator.FlavorOpenRouter, Key: "or-good-key"})
	emu.AddModel("groq", emulator.Model{ID: "openai/gpt-oss-120b"})
	emu.AddModel("gemini", emulator.Model{ID: "gemini-3.6-flash"})
	emu.AddModel("openrouter", emulator.Model{ID: "a/free:free", ContextLength: 262144})
	emu.AddModel("openrouter", emulator.Model{ID: "b/paid", Price: emulator.Price{Prompt: 0.000001}})
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	yaml := strings.ReplaceAll(`
providers:
  groq: {preset: groq, base_url: EMU/groq/v1, api_key: ${GROQ_KEY}}
  gemini: {preset: gemini, base_url: EMU/gemini/v1beta, api_key: ${GEMINI_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OR_KEY}}
chains:
  a: {routes: [groq/openai/gpt-oss-20b, groq/openai/gpt-oss-120b, gemini/gemini-3.5-flash-lite, gemini/gemini-3.6-flash, "openrouter/a/free:free"]}
`, "EMU", srv.URL)
	env := map[string]string{"GROQ_KEY": groqKey, "GEMINI_KEY": "AIza-good-key", "OR_KEY": "or-good-key"}
	plan, err := config.Parse("t.yaml", []byte(yaml), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	st, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return emu, New(Options{Plan: plan, Store: st, Clock: clk}), st
}

// TestRefreshReadsEveryShape: the OpenAI-compatible list, Gemini's
// models.list and OpenRouter's with prices are read; a route whose model
// is not listed gets a rest of class gone, the others none; OpenRouter's
// models with both prices 0 are marked free.
func TestRefreshReadsEveryShape(t *testing.T) {
	_, d, st := setup(t, "gsk-good-key")
	ctx := context.Background()
	d.Refresh(ctx)
	rests, err := st.Rests(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rests {
		got[r.Key] = r.Class + ": " + r.Reason
	}
	want := map[string]string{
		"groq/openai/gpt-oss-20b":      "gone: gone from groq's model list since 2026-12-04",
		"gemini/gemini-3.5-flash-lite": "gone: gone from gemini's model list since 2026-12-04",
	}
	if len(got) != len(want) {
		t.Errorf("rests %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("rest of %s: %q, want %q", k, got[k], v)
		}
	}
	or := d.Findings(ctx)["openrouter"]
	if len(or.Models) != 2 || or.Models[0] != (Model{ID: "a/free:free", Free: true, Priced: true, Context: 262144}) || or.Models[1] != (Model{ID: "b/paid", Priced: true}) {
		t.Errorf("openrouter's list read as %+v", or.Models)
	}
	if g := d.Findings(ctx)["gemini"].Models; len(g) != 1 || g[0].ID != "gemini-3.6-flash" {
		t.Errorf("gemini's list read as %+v", g)
	}
}

// TestUnreadableListChangesNothing: a list refused (a bad key: 401) leaves
// every route of the provider as it was, gone ones included.
func TestUnreadableListChangesNothing(t *testing.T) {
	_, d, st := setup(t, "gsk-bad-key")
	ctx := context.Background()
	d.Refresh(ctx)
	noGroqRest(t, st, "a list answered 401")
	if _, ok := d.Findings(ctx)["groq"]; ok {
		t.Error("a list answered 401 was kept")
	}
}

// TestListNamingNoneOfTheRoutesChangesNothing: a list that names none of
// the provider's routes' models (aliases, a proxy's own list) is taken as
// unreadable, not as every model retired.
func TestListNamingNoneOfTheRoutesChangesNothing(t *testing.T) {
	emu, d, st := setup(t, "gsk-good-key")
	emu.Unlist("groq", "openai/gpt-oss-120b", true)
	emu.AddModel("groq", emulator.Model{ID: "someone-elses-name"})
	ctx := context.Background()
	d.Refresh(ctx)
	noGroqRest(t, st, "a list naming none of groq's routes")
}

// noGroqRest fails the test for every groq route resting in st: what
// happened (why) should have changed nothing.
func noGroqRest(t *testing.T, st *memstore.Store, why string) {
	t.Helper()
	rests, err := st.Rests(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rests {
		if strings.HasPrefix(r.Key, "groq/") {
			t.Errorf("%s, yet it rested %s", why, r.Key)
		}
	}
}
