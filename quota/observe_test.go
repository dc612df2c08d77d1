package quota

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/state"
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func secs(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

func TestParseHeaders(t *testing.T) {
	// OpenRouter's verbatim reset, 1779321600000, is 2026-05-21 00:00 UTC.
	orDay := time.UnixMilli(1779321600000)
	if orDay.UTC().Hour() != 0 || orDay.UTC().Minute() != 0 {
		t.Fatalf("test setup: %v is not a UTC midnight", orDay.UTC())
	}
	orBusy := time.UnixMilli(1783519380000) // a busy model's minute boundary
	groq := testProvider("groq", config.Limits{}, utcMidnight)
	cerebras := testProvider("cerebras", config.Limits{}, utcMidnight)
	or := testProvider("openrouter", config.Limits{RPM: 20, RPD: 50}, utcMidnight)
	tests := []struct {
		name string
		p    *config.Provider
		now  time.Time
		h    http.Header
		want []reading
	}{
		{
			name: "groq table (Groq's docs)", p: groq, now: t0,
			h: header("retry-after", "2",
				"x-ratelimit-limit-requests", "14400", "x-ratelimit-limit-tokens", "18000",
				"x-ratelimit-remaining-requests", "14370", "x-ratelimit-remaining-tokens", "17997",
				"x-ratelimit-reset-requests", "2m59.56s", "x-ratelimit-reset-tokens", "7.66s"),
			want: []reading{
				{k: rpd, limit: 14400, remaining: 14370, hasLimit: true, hasRemain: true, reset: 2*time.Minute + 59560*time.Millisecond},
				{k: tpm, limit: 18000, remaining: 17997, hasLimit: true, hasRemain: true, reset: 7660 * time.Millisecond},
			},
		},
		{
			name: "groq reset in ms", p: groq, now: t0,
			h:    header("x-ratelimit-limit-tokens", "6000", "x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "520ms"),
			want: []reading{{k: tpm, limit: 6000, remaining: 0, hasLimit: true, hasRemain: true, reset: 520 * time.Millisecond}},
		},
		{
			name: "groq names on another flavor are not Groq's", p: testProvider("generic", config.Limits{}, utcMidnight), now: t0,
			h: header("x-ratelimit-limit-requests", "14400", "x-ratelimit-remaining-requests", "14370"),
		},
		{
			name: "cerebras docs example", p: cerebras, now: t0,
			h: header("x-ratelimit-limit-requests-day", "1000000000", "x-ratelimit-limit-tokens-minute", "1000000000",
				"x-ratelimit-remaining-requests-day", "999997455", "x-ratelimit-remaining-tokens-minute", "999998298",
				"x-ratelimit-reset-requests-day", "33011.382867097855", "x-ratelimit-reset-tokens-minute", "11.382867097854614"),
			want: []reading{
				{k: rpd, limit: 1000000000, remaining: 999997455, hasLimit: true, hasRemain: true, reset: secs(33011.382867097855)},
				{k: tpm, limit: 1000000000, remaining: 999998298, hasLimit: true, hasRemain: true, reset: secs(11.382867097854614)},
			},
		},
		{
			name: "cerebras free key (eliza #8434)", p: cerebras, now: t0,
			h: header("x-ratelimit-limit-requests-minute", "5", "x-ratelimit-limit-requests-day", "2400", "x-ratelimit-limit-tokens-day", "1000000"),
			want: []reading{
				{k: rpm, limit: 5, hasLimit: true},
				{k: rpd, limit: 2400, hasLimit: true},
				{k: tpd, limit: 1000000, hasLimit: true},
			},
		},
		{
			name: "openrouter free daily cap", p: or, now: orDay.Add(-12 * time.Hour),
			h:    header("X-RateLimit-Limit", "50", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1779321600000"),
			want: []reading{{k: rpd, provider: true, limit: 50, remaining: 0, hasLimit: true, hasRemain: true, reset: 12 * time.Hour}},
		},
		{
			name: "openrouter busy model, 8 a minute", p: or, now: orBusy.Add(-20 * time.Second),
			h:    header("X-RateLimit-Limit", "8", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1783519380000"),
			want: []reading{{k: rpm, limit: 8, remaining: 0, hasLimit: true, hasRemain: true, reset: 20 * time.Second}},
		},
		{
			name: "openrouter free minute cap", p: or, now: orBusy.Add(-40 * time.Second),
			h:    header("X-RateLimit-Limit", "20", "X-RateLimit-Remaining", "3", "X-RateLimit-Reset", "1783519380000"),
			want: []reading{{k: rpm, provider: true, limit: 20, remaining: 3, hasLimit: true, hasRemain: true, reset: 40 * time.Second}},
		},
		{
			name: "openrouter day cap in the last minute of the day", p: or, now: orDay.Add(-30 * time.Second),
			h:    header("X-RateLimit-Limit", "50", "X-RateLimit-Remaining", "7", "X-RateLimit-Reset", "1779321600000"),
			want: []reading{{k: rpd, provider: true, limit: 50, remaining: 7, hasLimit: true, hasRemain: true, reset: 30 * time.Second}},
		},
		{
			name: "reset in seconds is not OpenRouter's format", p: or, now: t0,
			h: header("X-RateLimit-Limit", "50", "X-RateLimit-Remaining", "7", "X-RateLimit-Reset", "1779321600"),
		},
		{
			name: "garbage", p: groq, now: t0,
			h: header("x-ratelimit-limit-tokens", "-5", "x-ratelimit-remaining-tokens", "lots", "x-ratelimit-limit-requests-day", "1e9",
				"X-RateLimit-Limit", "", "X-RateLimit-Reset", "soon"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testRoute(tt.p.Name+"/m", tt.p, config.Limits{})
			got := parseHeaders(r, tt.h, tt.now)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d readings %+v, want %d %+v", len(got), got, len(tt.want), tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("reading %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestObserveLearnsAndCorrects(t *testing.T) {
	ctx := context.Background()
	b, _, _ := newTestBook(t0)
	groq := testProvider("groq", config.Limits{}, config.Reset{Kind: config.ResetRolling})
	r := testRoute("groq/qwen/qwen3.6-27b", groq, config.Limits{})
	// No limit is known yet: nothing is counted (Reserve returns nil).
	if res := mustReserve(t, b, r, 100, 0); res != nil {
		t.Fatalf("Reserve on a route with no limit known = %+v, want nil", res)
	}
	err := b.Observe(ctx, r, header(
		"x-ratelimit-limit-requests", "1000", "x-ratelimit-remaining-requests", "990", "x-ratelimit-reset-requests", "14m24s",
		"x-ratelimit-limit-tokens", "8000", "x-ratelimit-remaining-tokens", "7000", "x-ratelimit-reset-tokens", "7.5s"))
	if err != nil {
		t.Fatal(err)
	}
	left, err := b.Left(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if w := left.Route.RPD; w.Limit != 1000 || w.Used != 10 || !w.Learned {
		t.Errorf("RPD after Observe: got %+v, want limit 1000 used 10 learned", w)
	}
	if w := left.Route.TPM; w.Limit != 8000 || w.Used != 1000 || !w.Learned {
		t.Errorf("TPM after Observe: got %+v, want limit 8000 used 1000 learned", w)
	}
	if ex := refused(t, b, r, 7001, 0); ex.Limit != "tpm" {
		t.Errorf("over the learned TPM: got %s, want tpm", ex.Limit)
	}
	if ex := refused(t, b, r, 9000, 0); !ex.TooLarge {
		t.Errorf("above the learned TPM: got %+v, want TooLarge", ex)
	}
	mustReserve(t, b, r, 7000, 0) // in flight from here on
	// The provider says it counted nothing: it has not seen the 7000 yet.
	// The 1000 that Observe added is taken back; the reservation in flight
	// is not erased.
	if err := b.Observe(ctx, r, header("x-ratelimit-limit-tokens", "8000", "x-ratelimit-remaining-tokens", "8000")); err != nil {
		t.Fatal(err)
	}
	left, _ = b.Left(ctx, r)
	if w := left.Route.TPM; w.Used != 7000 {
		t.Errorf("TPM after a lower count: used %d, want 7000 (the reservation in flight, without the correction)", w.Used)
	}
	refused(t, b, r, 1001, 0)
	mustReserve(t, b, r, 1000, 0)

	// A configured limit lower than the provider's stands.
	r2 := testRoute("groq/llama-3.1-8b-instant", groq, config.Limits{RPD: 2})
	if err := b.Observe(ctx, r2, header("x-ratelimit-limit-requests", "14400", "x-ratelimit-remaining-requests", "14400")); err != nil {
		t.Fatal(err)
	}
	left, _ = b.Left(ctx, r2)
	if w := left.Route.RPD; w.Limit != 2 || w.Learned {
		t.Errorf("configured RPD 2 under a 14400 header: got %+v, want limit 2 not learned", w)
	}
}

// groqRequests is Groq's header pair for a day of limit requests of which
// remaining are left.
func groqRequests(limit, remaining int) http.Header {
	return header("x-ratelimit-limit-requests", strconv.Itoa(limit), "x-ratelimit-remaining-requests", strconv.Itoa(remaining),
		"x-ratelimit-reset-requests", "2m59.56s")
}

// TestObserveKeepsReservationsInFlight: headers computed before the
// provider saw the calls reserved meanwhile never erase those reservations
// (issue 10). Nine calls of an rpd-10 route are in flight; the provider took
// them in order, so call i's headers say i were used, and the answers come
// back last first. Taking limit − remaining as the count ended at 1, and
// nine more calls passed.
func TestObserveKeepsReservationsInFlight(t *testing.T) {
	ctx := context.Background()
	b, _, _ := newTestBook(t0)
	groq := testProvider("groq", config.Limits{}, config.Reset{Kind: config.ResetRolling})
	r := testRoute("groq/m1", groq, config.Limits{RPD: 10})
	var res []*Reservation
	for range 9 {
		res = append(res, mustReserve(t, b, r, 0, 0))
	}
	used := func() int64 {
		t.Helper()
		l, err := b.Left(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return l.Route.RPD.Used
	}
	for i := 8; i >= 0; i-- {
		if err := b.Settle(ctx, res[i], 0, false); err != nil {
			t.Fatal(err)
		}
		if err := b.Observe(ctx, r, groqRequests(10, 10-(i+1))); err != nil {
			t.Fatal(err)
		}
		if u := used(); u < 9 {
			t.Fatalf("after the answer of call %d: RPD used %d, below the 9 reserved", i+1, u)
		}
	}
	if u := used(); u != 9 {
		t.Errorf("after every answer: RPD used %d, want 9 (what was reserved and the provider counted)", u)
	}
	last := mustReserve(t, b, r, 0, 0)
	refused(t, b, r, 0, 0)
	if err := b.Settle(ctx, last, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := b.Observe(ctx, r, groqRequests(10, 0)); err != nil {
		t.Fatal(err)
	}
	if u := used(); u != 10 {
		t.Errorf("after the tenth: RPD used %d, want 10", u)
	}
}

// TestObserveTakesBackOnlyItsOwnRaises: a provider that counted more than
// this Book (calls made by another client of the key) raises the count; a
// later, lower count takes that raise back, but never a reservation.
func TestObserveTakesBackOnlyItsOwnRaises(t *testing.T) {
	ctx := context.Background()
	b, _, clk := newTestBook(t0)
	groq := testProvider("groq", config.Limits{}, config.Reset{Kind: config.ResetRolling})
	r := testRoute("groq/m1", groq, config.Limits{RPD: 100})
	used := func() int64 {
		t.Helper()
		l, err := b.Left(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return l.Route.RPD.Used
	}
	if err := b.Observe(ctx, r, groqRequests(100, 95)); err != nil {
		t.Fatal(err)
	}
	if u := used(); u != 5 {
		t.Fatalf("after a count of 5 with none reserved: used %d, want 5", u)
	}
	clk.Advance(time.Hour) // the raise lies in an older slot of the rolling day
	if err := b.Settle(ctx, mustReserve(t, b, r, 0, 0), 0, false); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ counted, want int64 }{
		{3, 3}, // 6 counted here: 3 of the raise go back
		{0, 1}, // the rest of the raise goes back; the reservation stays
		{4, 4}, // raised again
		{2, 2},
	} {
		if err := b.Observe(ctx, r, groqRequests(100, int(100-tt.counted))); err != nil {
			t.Fatal(err)
		}
		if u := used(); u != tt.want {
			t.Errorf("after a count of %d: used %d, want %d", tt.counted, u, tt.want)
		}
	}
}

func TestObserveOpenRouterAccountWide(t *testing.T) {
	ctx := context.Background()
	day := time.UnixMilli(1779321600000)
	b, _, _ := newTestBook(day.Add(-6 * time.Hour))
	or := testProvider("openrouter", config.Limits{}, utcMidnight) // limits left out of the config
	a := testRoute("openrouter/a:free", or, config.Limits{})
	c := testRoute("openrouter/c:free", or, config.Limits{})
	err := b.Observe(ctx, a, header("X-RateLimit-Limit", "50", "X-RateLimit-Remaining", "1", "X-RateLimit-Reset", "1779321600000"))
	if err != nil {
		t.Fatal(err)
	}
	mustReserve(t, b, c, 0, 0)
	if ex := refused(t, b, c, 0, 0); ex.Limit != "provider rpd" || !ex.Until.Equal(day) {
		t.Errorf("other route after the account's cap: got %s until %v, want provider rpd until %v", ex.Limit, ex.Until, day)
	}
}

func TestObserveStoreDown(t *testing.T) {
	b, st, _ := newTestBook(t0)
	r := testRoute("groq/x", testProvider("groq", config.Limits{}, utcMidnight), config.Limits{})
	st.setErr(errDown())
	err := b.Observe(context.Background(), r, header("x-ratelimit-limit-tokens", "6000", "x-ratelimit-remaining-tokens", "10"))
	if !errors.Is(err, state.ErrUnavailable) {
		t.Errorf("Observe with the store down = %v, want a wrapped ErrUnavailable", err)
	}
	if got := b.limit(scopeOf(r), tpm, t0); got != 6000 {
		t.Errorf("learned TPM with the store down = %d, want 6000", got)
	}
}

func FuzzParseHeaders(f *testing.F) {
	f.Add("14400", "14370", "2m59.56s", "33011.382867097855", "1779321600000")
	f.Add("8", "0", "520ms", "11.382867097854614", "1783519380000")
	f.Add("-1", "x", "1h1h1h", "NaN", "99999999999999999999")
	f.Add("9223372036854775807", "9223372036854775807", "-3s", "1e308", "9223372036854775807")
	f.Fuzz(func(t *testing.T, limit, remaining, goDur, secs, ms string) {
		h := header(
			"x-ratelimit-limit-requests", limit, "x-ratelimit-remaining-requests", remaining, "x-ratelimit-reset-requests", goDur,
			"x-ratelimit-limit-tokens-minute", limit, "x-ratelimit-remaining-tokens-minute", remaining, "x-ratelimit-reset-tokens-minute", secs,
			"X-RateLimit-Limit", limit, "X-RateLimit-Remaining", remaining, "X-RateLimit-Reset", ms)
		for _, flavor := range []string{"groq", "cerebras", "openrouter"} {
			p := testProvider(flavor, config.Limits{RPM: 20, RPD: 50}, utcMidnight)
			r := testRoute(flavor+"/m", p, config.Limits{})
			for _, rd := range parseHeaders(r, h, t0) {
				if rd.limit < 0 || rd.remaining < 0 || rd.reset < 0 || rd.reset > maxReset || rd.k < 0 || rd.k >= nKinds {
					t.Fatalf("%s: bad reading %+v", flavor, rd)
				}
			}
			b, _, _ := newTestBook(t0)
			if err := b.Observe(context.Background(), r, h); err != nil {
				t.Fatalf("%s: Observe: %v", flavor, err)
			}
		}
	})
}

// TestObserveConcurrentNeverBelowReserved: answers observed at once, each
// with a count that misses calls, take back only raises: the count never
// ends below what was reserved.
func TestObserveConcurrentNeverBelowReserved(t *testing.T) {
	ctx := context.Background()
	b, _, _ := newTestBook(t0)
	groq := testProvider("groq", config.Limits{}, config.Reset{Kind: config.ResetRolling})
	r := testRoute("groq/m1", groq, config.Limits{RPD: 1000})
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				res, err := b.Reserve(ctx, r, 0, 0)
				if err != nil {
					t.Error(err)
					return
				}
				// Counts from 0 to 2×what was reserved: some low, some
				// high (a raise), in no order.
				counted := (w*each + i*7) % (2 * (w*each + i + 1))
				_ = b.Settle(ctx, res, 0, false)
				if err := b.Observe(ctx, r, groqRequests(1000, 1000-counted)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	// One last answer that counted nothing takes back every raise.
	if err := b.Observe(ctx, r, groqRequests(1000, 1000)); err != nil {
		t.Fatal(err)
	}
	l, err := b.Left(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Route.RPD.Used; got != workers*each {
		t.Errorf("RPD used %d after every raise was taken back, want the %d reserved", got, workers*each)
	}
}

// scopeOf is r's own scope.
func scopeOf(r *config.Route) scope {
	sc, _ := scopes(r)
	return sc[0]
}
