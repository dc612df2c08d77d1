package quota

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
)

// A route's spends are kept as of a second (template.go): within that
// second, a limit learned from headers, another chain's margin and the
// request's own tokens still decide, and the next second's windows are
// its own.
func TestTemplateFollowsMarginsLearnedLimitsAndTime(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(t0)
	st := newFakeStore()
	b := New(Options{Store: st, Clock: clk})
	defer b.Close()
	p := testProvider("groq", config.Limits{}, utcMidnight)
	r := testRoute("groq/m", p, config.Limits{RPM: 40, TPM: 10_000})

	// Margin: 20 requests pass at margin 0.5, the 21st does not; at
	// margin 0, in the same second, it does.
	for range 20 {
		mustReserve(t, b, r, 10, 0.5)
	}
	if ex := refused(t, b, r, 10, 0.5); ex.Limit != "rpm" {
		t.Errorf("21st at margin 0.5: refused on %q, want rpm", ex.Limit)
	}
	mustReserve(t, b, r, 10, 0)

	// Tokens: the amount is each request's own.
	if ex := refused(t, b, r, 9_900, 0); ex.Limit != "tpm" {
		t.Errorf("9,900 tokens after 210: refused on %q, want tpm", ex.Limit)
	}
	mustReserve(t, b, r, 9_000, 0)

	// A limit learned in the same second binds the next Reserve.
	clk.Advance(500 * time.Millisecond)
	if err := b.Observe(ctx, r, header(
		"x-ratelimit-limit-requests", "25", "x-ratelimit-remaining-requests", "3", "x-ratelimit-reset-requests", "30s")); err != nil {
		t.Fatal(err)
	}
	if ex := refused(t, b, r, 1, 0); ex.Limit != "rpd" {
		t.Errorf("after learning 25 requests a day with 22 spent: refused on %q, want rpd", ex.Limit)
	}

	// The next day's window is a new slot: the day's count starts again,
	// the minute's has long gone.
	clk.Set(t0.Add(24 * time.Hour))
	for range 3 {
		mustReserve(t, b, r, 10, 0)
	}
	sums, err := st.Sums(ctx, b.template(r, 0, clk.Now()).spends[:2])
	if err != nil {
		t.Fatal(err)
	}
	if sums[0] != 3 || sums[1] != 3 {
		t.Errorf("the next day: rpm and rpd windows hold %v, want [3 3]", sums)
	}
}
