package quota

import (
	"context"
	"os"
	"testing"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state/memstore"
)

func evidenceBook(t *testing.T) *Book {
	t.Helper()
	clk := clock.NewFake(t0)
	st, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := New(Options{Store: st, Clock: clk})
	t.Cleanup(b.Close)
	return b
}

// TestMarginShrinksWithAnswers: a config-only limit starts with the
// chain's whole margin, which halves after 50 answers and is whole again
// after a rate refusal; a limit the headers report has none.
func TestMarginShrinksWithAnswers(t *testing.T) {
	b := evidenceBook(t)
	gem := testProvider("gemini", config.Limits{}, utcMidnight)
	r := testRoute("gemini/flash", gem, config.Limits{RPD: 500})
	if m := b.Margin(r, "rpd", 0.05); m != 0.05 {
		t.Fatalf("margin before any answer: %v, want 0.05", m)
	}
	for range 50 {
		b.Answered(r)
	}
	if m := b.Margin(r, "rpd", 0.05); m != 0.025 {
		t.Errorf("margin after 50 answers: %v, want 0.025", m)
	}
	b.RateRefused(r)
	if m := b.Margin(r, "rpd", 0.05); m != 0.05 {
		t.Errorf("margin after a 429: %v, want 0.05 again", m)
	}

	groq := testProvider("groq", config.Limits{}, config.Reset{Kind: config.ResetRolling})
	g := testRoute("groq/m", groq, config.Limits{RPD: 1000})
	if err := b.Observe(context.Background(), g, header("x-ratelimit-limit-requests", "1000", "x-ratelimit-remaining-requests", "999", "x-ratelimit-reset-requests", "1m")); err != nil {
		t.Fatal(err)
	}
	if m := b.Margin(g, "rpd", 0.05); m != 0 {
		t.Errorf("margin of a limit Groq's headers report: %v, want 0", m)
	}
}

// TestLearnRefusalReadsGeminiQuota: Gemini's 429 names its window and
// limit in a QuotaFailure detail; the limit is learned from it.
func TestLearnRefusalReadsGeminiQuota(t *testing.T) {
	b := evidenceBook(t)
	gem := testProvider("gemini", config.Limits{}, utcMidnight)
	r := testRoute("gemini/gemini-2.5-flash", gem, config.Limits{TPM: 1_000_000})
	body, err := os.ReadFile("../failure/testdata/gemini_429_minute.json")
	if err != nil {
		t.Fatal(err)
	}
	b.LearnRefusal(r, body)
	left, err := b.Left(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if w := left.Route.TPM; w.Limit != 250000 || !w.Learned {
		t.Errorf("TPM after the 429: %+v, want the 250,000 its body names, learned", w)
	}
}
