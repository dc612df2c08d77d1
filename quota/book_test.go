package quota

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) // a slot boundary

func newTestBook(start time.Time) (*Book, *fakeStore, *clock.Fake) {
	st := newFakeStore()
	clk := clock.NewFake(start)
	return New(Options{Store: st, Clock: clk}), st, clk
}

func testProvider(name string, l config.Limits, rs config.Reset) *config.Provider {
	return &config.Provider{Name: name, Flavor: name, Limits: l, Reset: rs}
}

func testRoute(id string, p *config.Provider, l config.Limits) *config.Route {
	return &config.Route{ID: id, Provider: p, Limits: l, Reset: p.Reset}
}

var utcMidnight = config.Reset{Kind: config.ResetMidnight, Location: time.UTC}

// mustReserve reserves and fails the test on any error.
func mustReserve(t *testing.T, b *Book, r *config.Route, tokens int, margin float64) *Reservation {
	t.Helper()
	res, err := b.Reserve(context.Background(), r, tokens, margin)
	if err != nil {
		t.Fatalf("Reserve(%s, %d) at %v: %v", r.ID, tokens, b.clock.Now(), err)
	}
	return res
}

// refused reserves and wants a *SpentError.
func refused(t *testing.T, b *Book, r *config.Route, tokens int, margin float64) *SpentError {
	t.Helper()
	_, err := b.Reserve(context.Background(), r, tokens, margin)
	var ex *SpentError
	if !errors.As(err, &ex) {
		t.Fatalf("Reserve(%s, %d) at %v = %v, want *SpentError", r.ID, tokens, b.clock.Now(), err)
	}
	return ex
}

func TestSlidingMinute(t *testing.T) {
	b, _, clk := newTestBook(t0)
	testSlidingMinute(t, b, clk)
}

func testSlidingMinute(t *testing.T, b *Book, clk *clock.Fake) {
	r := testRoute("groq/llama-3.1-8b-instant", testProvider("groq", config.Limits{}, utcMidnight), config.Limits{RPM: 30})
	for i := range 3 {
		clk.Set(t0.Add(time.Duration(i) * 10 * time.Second))
		for range 10 {
			mustReserve(t, b, r, 0, 0)
		}
	}
	// The minute is summed over 241 quarter-second slots, so that it never
	// covers less than a provider's true minute: a slot drops out 60.25 s
	// after it began.
	clk.Set(t0.Add(25 * time.Second))
	ex := refused(t, b, r, 0, 0)
	if want := t0.Add(60250 * time.Millisecond); ex.Limit != "rpm" || !ex.Until.Equal(want) {
		t.Errorf("31st request: got %s until %v, want rpm until %v", ex.Limit, ex.Until, want)
	}
	clk.Set(t0.Add(60250*time.Millisecond - time.Millisecond))
	refused(t, b, r, 0, 0)
	clk.Set(t0.Add(60250 * time.Millisecond)) // the first slot expires: its 10 come back
	for range 10 {
		mustReserve(t, b, r, 0, 0)
	}
	// The next counted slot began at 10 s: it drops out at 70.25 s.
	ex = refused(t, b, r, 0, 0)
	if want := t0.Add(70250 * time.Millisecond); !ex.Until.Equal(want) {
		t.Errorf("after refill: got until %v, want %v", ex.Until, want)
	}
}

func TestTokenWindowsSettle(t *testing.T) {
	ctx := context.Background()
	b, _, clk := newTestBook(t0)
	r := testRoute("groq/llama-3.1-8b-instant", testProvider("groq", config.Limits{}, utcMidnight), config.Limits{TPM: 6000, TPD: 20000})
	res := mustReserve(t, b, r, 5000, 0)
	ex := refused(t, b, r, 2000, 0)
	if want := t0.Add(60250 * time.Millisecond); ex.Limit != "tpm" || !ex.Until.Equal(want) {
		t.Errorf("over TPM: got %s until %v, want tpm until %v", ex.Limit, ex.Until, want)
	}
	if err := b.Settle(ctx, res, 1200, true); err != nil {
		t.Fatal(err)
	}
	if err := b.Settle(ctx, res, 9999, true); err != nil { // a second Settle does nothing
		t.Fatal(err)
	}
	res2 := mustReserve(t, b, r, 2000, 0)
	if err := b.Settle(ctx, res2, 0, false); err != nil { // unknown usage: the estimate stands
		t.Fatal(err)
	}
	left, err := b.Left(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if left.Route.TPM.Used != 3200 || left.Route.TPD.Used != 3200 || left.Route.RPM.Used != 2 {
		t.Errorf("Left: got tpm %d tpd %d rpm %d, want 3200 3200 2", left.Route.TPM.Used, left.Route.TPD.Used, left.Route.RPM.Used)
	}
	ex = refused(t, b, r, 7000, 0)
	if !ex.TooLarge || ex.Limit != "tpm" || !ex.Until.IsZero() {
		t.Errorf("7000 tokens on a 6000 TPM route: got %+v, want TooLarge tpm", ex)
	}
	// Settled usage later than the reservation's slot lands in its slot.
	clk.Set(t0.Add(75 * time.Second))
	left, _ = b.Left(ctx, r)
	if left.Route.TPM.Used != 0 || left.Route.TPD.Used != 3200 {
		t.Errorf("a minute later: got tpm %d tpd %d, want 0 3200", left.Route.TPM.Used, left.Route.TPD.Used)
	}
}

func TestMidnightResetAcrossDST(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	reset := config.Reset{Kind: config.ResetMidnight, Location: la}
	tests := []struct {
		name     string
		dayStart time.Time // local midnight starting the day
		last     time.Time // late in that same local day
		dayLen   time.Duration
	}{
		{"spring forward, 23h day", time.Date(2026, 3, 8, 0, 0, 0, 0, la), time.Date(2026, 3, 8, 23, 59, 0, 0, la), 23 * time.Hour},
		{"fall back, 25h day", time.Date(2026, 11, 1, 0, 0, 0, 0, la), time.Date(2026, 11, 1, 23, 59, 0, 0, la), 25 * time.Hour},
		{"ordinary day", time.Date(2026, 6, 1, 0, 0, 0, 0, la), time.Date(2026, 6, 1, 23, 59, 0, 0, la), 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.last.Sub(tt.dayStart); got != tt.dayLen-time.Minute {
				t.Fatalf("test setup: day is %v long", got+time.Minute)
			}
			b, _, clk := newTestBook(tt.dayStart.Add(-30 * time.Minute))
			r := testRoute("gemini/gemini-2.5-flash", testProvider("gemini", config.Limits{}, reset), config.Limits{RPD: 2})
			mustReserve(t, b, r, 0, 0)
			mustReserve(t, b, r, 0, 0)
			if ex := refused(t, b, r, 0, 0); ex.Limit != "rpd" || !ex.Until.Equal(tt.dayStart) {
				t.Errorf("before midnight: got %s until %v, want rpd until %v", ex.Limit, ex.Until, tt.dayStart)
			}
			clk.Set(tt.dayStart)
			mustReserve(t, b, r, 0, 0)
			clk.Set(tt.last)
			mustReserve(t, b, r, 0, 0)
			ex := refused(t, b, r, 0, 0)
			if want := tt.dayStart.Add(tt.dayLen); !ex.Until.Equal(want) {
				t.Errorf("late in the day: got until %v, want %v", ex.Until, want)
			}
			clk.Set(tt.dayStart.Add(tt.dayLen - time.Nanosecond))
			refused(t, b, r, 0, 0)
			clk.Set(tt.dayStart.Add(tt.dayLen))
			mustReserve(t, b, r, 0, 0)
		})
	}
}

func TestRollingDay(t *testing.T) {
	b, _, clk := newTestBook(t0)
	testRollingDay(t, b, clk)
}

func testRollingDay(t *testing.T, b *Book, clk *clock.Fake) {
	rolling := config.Reset{Kind: config.ResetRolling}
	r := testRoute("groq/llama-3.3-70b-versatile", testProvider("groq", config.Limits{}, rolling), config.Limits{RPD: 3})
	for i := range 3 {
		clk.Set(t0.Add(time.Duration(i) * time.Hour))
		mustReserve(t, b, r, 0, 0)
	}
	clk.Set(t0.Add(5 * time.Hour))
	// The day is summed over 25 hourly slots, never less than 24 hours.
	if ex := refused(t, b, r, 0, 0); ex.Limit != "rpd" || !ex.Until.Equal(t0.Add(25*time.Hour)) {
		t.Errorf("got %s until %v, want rpd until %v", ex.Limit, ex.Until, t0.Add(25*time.Hour))
	}
	clk.Set(t0.Add(25 * time.Hour))
	mustReserve(t, b, r, 0, 0)
	if ex := refused(t, b, r, 0, 0); !ex.Until.Equal(t0.Add(26 * time.Hour)) {
		t.Errorf("after the first hour expired: got until %v, want %v", ex.Until, t0.Add(26*time.Hour))
	}
}

func TestProviderLimitsShared(t *testing.T) {
	b, _, clk := newTestBook(t0)
	or := testProvider("openrouter", config.Limits{RPM: 20, RPD: 50}, utcMidnight)
	a := testRoute("openrouter/deepseek/deepseek-r1:free", or, config.Limits{})
	c := testRoute("openrouter/qwen/qwen3-coder:free", or, config.Limits{})
	for i := range 20 {
		mustReserve(t, b, []*config.Route{a, c}[i%2], 0, 0)
	}
	if ex := refused(t, b, c, 0, 0); ex.Limit != "provider rpm" || ex.Route != c.ID {
		t.Errorf("21st in a minute: got %s on %s, want provider rpm on %s", ex.Limit, ex.Route, c.ID)
	}
	for i := range 30 {
		clk.Set(t0.Add(70*time.Second + time.Duration(i)*10*time.Second)) // 6 a minute
		mustReserve(t, b, []*config.Route{a, c}[i%2], 0, 0)
	}
	clk.Advance(time.Hour)
	ex := refused(t, b, a, 0, 0)
	if want := time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC); ex.Limit != "provider rpd" || !ex.Until.Equal(want) {
		t.Errorf("51st today: got %s until %v, want provider rpd until %v", ex.Limit, ex.Until, want)
	}
	left, err := b.Left(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if n, limited := left.DailyLeft(); n != 0 || !limited || left.Provider.RPD.Used != 50 || left.Route.RPD.Used != 25 {
		t.Errorf("Left: got daily left %d (%v), provider used %d, route used %d; want 0, 50, 25", n, limited, left.Provider.RPD.Used, left.Route.RPD.Used)
	}
}

func TestMargin(t *testing.T) {
	tests := []struct {
		limit  int
		margin float64
		want   int
	}{
		{20, 0.05, 19},
		{14400, 0.05, 13680},
		{8, 0.05, 8},
		{1, 0.05, 1},
		{30, 0.05, 29},
		{20, 0, 20},
		{1000, 0.1, 900},
	}
	for _, tt := range tests {
		if got := allowed(int64(tt.limit), tt.margin); got != int64(tt.want) {
			t.Errorf("allowed(%d, %v) = %d, want %d", tt.limit, tt.margin, got, tt.want)
		}
	}
	for _, tt := range tests[:2] {
		t.Run("reserve", func(t *testing.T) {
			b, _, _ := newTestBook(t0)
			r := testRoute("gemini/gemma-3-27b-it", testProvider("gemini", config.Limits{}, utcMidnight), config.Limits{RPD: tt.limit})
			n := 0
			for ; n <= tt.limit; n++ {
				if _, err := b.Reserve(context.Background(), r, 0, tt.margin); err != nil {
					break
				}
			}
			if n != tt.want {
				t.Errorf("RPD %d at margin %v: %d requests passed, want %d", tt.limit, tt.margin, n, tt.want)
			}
		})
	}
}

func TestStoreDown(t *testing.T) {
	ctx := context.Background()
	b, st, _ := newTestBook(t0)
	r := testRoute("groq/x", testProvider("groq", config.Limits{}, utcMidnight), config.Limits{RPM: 1})
	res := mustReserve(t, b, r, 100, 0)
	st.setErr(errDown())
	_, err := b.Reserve(ctx, r, 100, 0)
	var ex *SpentError
	if !errors.Is(err, state.ErrUnavailable) || errors.As(err, &ex) {
		t.Errorf("Reserve with the store down = %v, want a wrapped ErrUnavailable", err)
	}
	if err := b.Settle(ctx, res, 10, true); !errors.Is(err, state.ErrUnavailable) {
		t.Errorf("Settle with the store down = %v, want a wrapped ErrUnavailable", err)
	}
	if err := b.Settle(ctx, nil, 10, true); err != nil {
		t.Errorf("Settle(nil) = %v, want nil", err)
	}
	if _, err := b.Left(ctx, r); !errors.Is(err, state.ErrUnavailable) {
		t.Errorf("Left with the store down = %v, want a wrapped ErrUnavailable", err)
	}
}

func TestNextReset(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	tests := []struct {
		name  string
		reset config.Reset
		now   time.Time
		want  time.Time
	}{
		{"LA before spring forward", config.Reset{Location: la}, time.Date(2026, 3, 7, 12, 0, 0, 0, la), time.Date(2026, 3, 8, 0, 0, 0, 0, la)},
		{"LA on spring-forward day", config.Reset{Location: la}, time.Date(2026, 3, 8, 3, 0, 0, 0, la), time.Date(2026, 3, 9, 7, 0, 0, 0, time.UTC)},
		{"LA on fall-back day", config.Reset{Location: la}, time.Date(2026, 11, 1, 1, 30, 0, 0, la), time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)},
		{"at midnight", config.Reset{Location: la}, time.Date(2026, 6, 1, 0, 0, 0, 0, la), time.Date(2026, 6, 2, 0, 0, 0, 0, la)},
		{"UTC", utcMidnight, time.Date(2026, 5, 1, 23, 59, 59, 0, time.UTC), time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)},
		{"nil location is UTC", config.Reset{}, time.Date(2026, 5, 1, 1, 0, 0, 0, time.UTC), time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)},
		{"rolling: next hour", config.Reset{Kind: config.ResetRolling}, time.Date(2026, 5, 1, 1, 20, 0, 0, time.UTC), time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NextReset(tt.reset, tt.now); !got.Equal(tt.want) {
				t.Errorf("NextReset(%v) = %v, want %v", tt.now, got, tt.want)
			}
		})
	}
}

func BenchmarkReserve(b *testing.B) {
	ctx := context.Background()
	bk, _, _ := newTestBook(t0)
	// Limits that every window checks but the fixed clock never reaches.
	huge := 1 << 40
	r := testRoute("groq/llama-3.1-8b-instant", testProvider("groq", config.Limits{RPM: huge, RPD: huge}, utcMidnight), config.Limits{RPM: huge, RPD: huge, TPM: huge, TPD: huge})
	b.ReportAllocs()
	for b.Loop() {
		res, err := bk.Reserve(ctx, r, 1500, 0.05)
		if err != nil {
			b.Fatal(err)
		}
		_ = bk.Settle(ctx, res, 1200, true)
	}
}
