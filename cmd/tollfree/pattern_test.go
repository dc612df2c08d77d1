package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state/memstore"
)

// TestFreePatternFollowsTheList (issue 35): a chain of routes:
// ["openrouter/*:free"], served as `tollfree serve` serves it, expands to
// the free models OpenRouter's list offers, largest context first; when a
// daily read finds a new free model and one that turned paid, the chain
// is served again with the new one in and the paid one out: its answers
// come from the new model, and the paid one is never called again.
func TestFreePatternFollowsTheList(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	emu, emuURL := emutest.Start(t, clk, nil)
	emu.AddModel("openrouter", emulator.Model{ID: "qwen/qwen3-coder:free", ContextLength: 262144})
	plan := emutest.Plan(t, "data_dir: "+t.TempDir()+"\ncall_log: \"off\"\n"+emutest.Providers+
		"chains:\n  free: {routes: [\"openrouter/*:free\"], fallback: {error: true}}\n", emuURL, nil)
	st, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lv := &live{logger: slog.New(slog.DiscardHandler), store: st, discover: 24 * time.Hour, clock: clk}
	g, err := lv.build(plan)
	if err != nil {
		t.Fatal(err)
	}
	lv.swap(g)
	defer lv.close()
	srv := httptest.NewServer(lv)
	defer srv.Close()

	routes := func() []string {
		var out []string
		for _, r := range lv.plan().Chains["free"].Routes {
			out = append(out, r.ID)
		}
		return out
	}
	servedWith := func(want ...string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !slices.Equal(routes(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("chain free served with %v, want %v", routes(), want)
			}
			time.Sleep(5 * time.Millisecond) // waiting for the discovery's goroutine, not for the clock
		}
	}
	answeredBy := func(want string) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"free","messages":[{"role":"user","content":"`+emutest.Question+`"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Tollfree-Route"); resp.StatusCode != http.StatusOK || got != want {
			t.Fatalf("answered %d by %q, want 200 by %s", resp.StatusCode, got, want)
		}
	}

	// The first read: the two free models, the larger context first (the
	// preset gives gpt-oss-120b's, the list none).
	servedWith("openrouter/qwen/qwen3-coder:free", "openrouter/openai/gpt-oss-120b:free")
	answeredBy("openrouter/qwen/qwen3-coder:free")

	// Each day's read, by the gateway serving then: the one before it is
	// closed (its wait stopped), and the current one waits for the day.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	day := 0
	nextDay := func() {
		t.Helper()
		lv.closing.Wait()
		day++
		if err := clk.BlockUntilDeadline(ctx, t0.Add(time.Duration(day)*24*time.Hour)); err != nil {
			t.Fatalf("the gateway serving now never waits for day %d's read: %v", day, err)
		}
		clk.Advance(24 * time.Hour)
	}

	// A day later qwen3-coder costs money and kimi-k2 is new and free.
	emu.SetPrice("openrouter", "qwen/qwen3-coder:free", emulator.Price{Prompt: 0.0000002, Completion: 0.0000008})
	emu.AddModel("openrouter", emulator.Model{ID: "moonshotai/kimi-k2:free", ContextLength: 1 << 20})
	paid := emu.Calls("openrouter", "qwen/qwen3-coder:free")
	nextDay()
	servedWith("openrouter/moonshotai/kimi-k2:free", "openrouter/openai/gpt-oss-120b:free")
	for range 3 {
		answeredBy("openrouter/moonshotai/kimi-k2:free")
	}
	if n := emu.Calls("openrouter", "qwen/qwen3-coder:free"); n != paid {
		t.Errorf("the model that turned paid was called %d times after the read", n-paid)
	}

	// kimi-k2 leaves the list for a day, then comes back: back in the
	// chain, and answering (not resting as gone).
	emu.Unlist("openrouter", "moonshotai/kimi-k2:free", true)
	nextDay()
	servedWith("openrouter/openai/gpt-oss-120b:free")
	answeredBy("openrouter/openai/gpt-oss-120b:free")
	emu.Unlist("openrouter", "moonshotai/kimi-k2:free", false)
	nextDay()
	servedWith("openrouter/moonshotai/kimi-k2:free", "openrouter/openai/gpt-oss-120b:free")
	answeredBy("openrouter/moonshotai/kimi-k2:free")
}
