package quota

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state/memstore"
)

// TestSaidNamesWhatTheProviderReports (issue 35): a limit the headers
// report unlike the preset's is listed with the preset's figure and the
// day the provider first said it, kept across later answers and through
// the store for another instance; a limit the headers confirm is not.
func TestSaidNamesWhatTheProviderReports(t *testing.T) {
	ctx := context.Background()
	plan, err := config.Parse("t.yaml", []byte("providers:\n  groq: {}\nchains:\n  a: {routes: [groq/openai/gpt-oss-120b]}\n"),
		func(k string) string { return map[string]string{"GROQ_API_KEY": "gsk-test-key"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	r := plan.Routes["groq/openai/gpt-oss-120b"]
	clk := clock.NewFake(t0)
	st, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := New(Options{Store: st, Clock: clk})
	said := func(b *Book) []string {
		var out []string
		for _, l := range b.Said(plan, clk.Now()) {
			out = append(out, l.String())
		}
		return out
	}
	if got := said(b); len(got) != 0 {
		t.Fatalf("before any answer: %q", got)
	}
	// The preset says 1000 requests a day and 8000 tokens a minute; Groq's
	// headers say 500 and 8000.
	h := header("x-ratelimit-limit-requests", "500", "x-ratelimit-remaining-requests", "499", "x-ratelimit-reset-requests", "2m",
		"x-ratelimit-limit-tokens", "8000", "x-ratelimit-remaining-tokens", "7900", "x-ratelimit-reset-tokens", "1s")
	if err := b.Observe(ctx, r, h); err != nil {
		t.Fatal(err)
	}
	clk.Advance(20 * time.Hour)
	if err := b.Observe(ctx, r, h); err != nil {
		t.Fatal(err)
	}
	want := "groq/openai/gpt-oss-120b: preset rpd 1000, provider says 500 since " + t0.Format(time.DateOnly)
	if got := said(b); len(got) != 1 || got[0] != want {
		t.Errorf("said %q, want [%q]", got, want)
	}
	b.Close() // its notes written
	other := New(Options{Store: st, Clock: clk})
	defer other.Close()
	if got := said(other); len(got) != 1 || got[0] != want {
		t.Errorf("another instance on the store: said %q, want [%q]", got, want)
	}
}
