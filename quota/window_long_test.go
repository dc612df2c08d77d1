package quota

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/state/memstore"
	"github.com/tollfree/tollfree/state/redisstore"
)

// longScenarios run on two Books sharing one Store, taking requests in
// turn: what one counts the other must see.
var longScenarios = []struct {
	name  string
	start time.Time
	run   func(*testing.T, []*Book, *clock.Fake)
}{
	{"hour", t0, testHourWindow},
	{"month", time.Date(2026, 5, 31, 23, 59, 0, 0, time.UTC), testMonthWindow},
	{"month in a zone", time.Date(2026, 6, 1, 3, 0, 0, 0, time.UTC), testMonthZone},
	{"requests a month", time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC), testMonthRequests},
}

// testHourWindow: rph 3 takes three requests in an hour, refuses the
// fourth until the first one's 10-minute slot drops out, 70 minutes after
// it began; the provider's tph is checked alongside.
func testHourWindow(t *testing.T, books []*Book, clk *clock.Fake) {
	p := testProvider("cerebras", config.Limits{TPH: 1000}, utcMidnight)
	r := testRoute("cerebras/gpt-oss-120b", p, config.Limits{RPH: 3})
	for i := range 3 {
		clk.Set(t0.Add(time.Duration(i) * 10 * time.Minute))
		mustReserve(t, books[i%2], r, 100, 0)
	}
	clk.Set(t0.Add(59 * time.Minute))
	ex := refused(t, books[1], r, 100, 0)
	if ex.Limit != "rph" || !ex.Until.Equal(t0.Add(70*time.Minute)) {
		t.Fatalf("4th request: refused on %q until %v, want rph until %v", ex.Limit, ex.Until, t0.Add(70*time.Minute))
	}
	clk.Set(t0.Add(70*time.Minute - time.Second))
	refused(t, books[0], r, 100, 0)
	clk.Set(t0.Add(70 * time.Minute))
	mustReserve(t, books[0], r, 100, 0)
	// The provider's hour, shared by its routes: 300 tokens in it now (the
	// 12:00 request dropped out), so 700 more pass and 701 do not.
	other := testRoute("cerebras/llama3.1-8b", p, config.Limits{})
	if ex := refused(t, books[1], other, 701, 0); ex.Limit != "provider tph" {
		t.Fatalf("701 tokens: refused on %q, want provider tph", ex.Limit)
	}
	mustReserve(t, books[1], other, 700, 0)
	left, err := books[0].Left(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if left.Route.RPH.Used != 3 || left.Route.RPH.Limit != 3 || left.Provider.TPH.Used != 1000 {
		t.Fatalf("Left: rph %d/%d, provider tph %d, want 3/3 and 1000", left.Route.RPH.Used, left.Route.RPH.Limit, left.Provider.TPH.Used)
	}
}

// testMonthWindow: a month of 1000 tokens (Mistral's is tokens per month)
// spent on May 31st is refused until June 1st 00:00 UTC, then taken again.
func testMonthWindow(t *testing.T, books []*Book, clk *clock.Fake) {
	rolling := config.Reset{Kind: config.ResetRolling}
	p := testProvider("mistral", config.Limits{TPMo: 1000}, rolling)
	r := testRoute("mistral/mistral-small-latest", p, config.Limits{})
	mustReserve(t, books[0], r, 1000, 0)
	june := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	ex := refused(t, books[1], r, 1, 0)
	if ex.Limit != "provider tpmo" || !ex.Until.Equal(june) {
		t.Fatalf("refused on %q until %v, want provider tpmo until %v", ex.Limit, ex.Until, june)
	}
	clk.Set(june.Add(-time.Second))
	refused(t, books[0], r, 1, 0)
	clk.Set(june)
	mustReserve(t, books[1], r, 1000, 0)
	refused(t, books[0], r, 1, 0)
}

// testMonthZone: on a midnight reset in a zone, the month turns at that
// zone's midnight: 03:00 UTC on June 1st is still May 31st in Los Angeles.
func testMonthZone(t *testing.T, books []*Book, clk *clock.Fake) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip(err)
	}
	p := testProvider("p", config.Limits{}, config.Reset{Kind: config.ResetMidnight, Location: la})
	r := testRoute("p/m", p, config.Limits{TPMo: 10})
	mustReserve(t, books[0], r, 10, 0)
	june := time.Date(2026, 6, 1, 0, 0, 0, 0, la)
	if ex := refused(t, books[1], r, 1, 0); ex.Limit != "tpmo" || !ex.Until.Equal(june) {
		t.Fatalf("refused on %q until %v, want tpmo until %v", ex.Limit, ex.Until, june)
	}
	clk.Set(june)
	mustReserve(t, books[1], r, 10, 0)
}

// testMonthRequests: a provider's rpmo 3 (Cohere's trial keys count calls
// a month over all models) refuses the 4th call of December on another
// model, and the year's turn starts January afresh.
func testMonthRequests(t *testing.T, books []*Book, clk *clock.Fake) {
	p := testProvider("cohere", config.Limits{RPMo: 3}, config.Reset{Kind: config.ResetRolling})
	a := testRoute("cohere/command-a-03-2025", p, config.Limits{RPM: 20})
	b := testRoute("cohere/command-r7b-12-2024", p, config.Limits{RPM: 20})
	for i := range 3 {
		clk.Set(time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute))
		mustReserve(t, books[i%2], a, 10, 0)
	}
	jan := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	if ex := refused(t, books[1], b, 10, 0); ex.Limit != "provider rpmo" || !ex.Until.Equal(jan) {
		t.Fatalf("4th call: refused on %q until %v, want provider rpmo until %v", ex.Limit, ex.Until, jan)
	}
	clk.Set(jan)
	mustReserve(t, books[0], b, 10, 0)
}

func TestLongWindowsMemstore(t *testing.T) {
	for _, sc := range longScenarios {
		t.Run(sc.name, func(t *testing.T) {
			clk := clock.NewFake(sc.start)
			st, err := memstore.Open(memstore.Options{Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			sc.run(t, []*Book{New(Options{Store: st, Clock: clk}), New(Options{Store: st, Clock: clk})}, clk)
		})
	}
}

// TestLongWindowsRedis: two instances, each its own redisstore, share the
// hour and the month through Redis.
func TestLongWindowsRedis(t *testing.T) {
	url := testenv.RedisURL(t)
	for _, sc := range longScenarios {
		t.Run(sc.name, func(t *testing.T) {
			ns := testenv.Namespace(t, url)
			clk := clock.NewFake(sc.start)
			var books []*Book
			var stores []*redisstore.Store
			for range 2 {
				st, err := redisstore.Open(context.Background(), redisstore.Options{URL: url, Namespace: ns, Clock: clk, OpTimeout: 2 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				stores = append(stores, st)
				books = append(books, New(Options{Store: st, Clock: clk}))
			}
			sc.run(t, books, clk)
			for i, st := range stores {
				if h := st.Health(); !h.Connected {
					t.Errorf("instance %d served from local state (%s): the instances did not share the counts", i, h.LastError)
				}
			}
		})
	}
}

// The day windows kept per zone (midnightWindow) are the windows worked
// out afresh, at any instant, in zones with daylight saving and one whose
// change skips midnight, with time going back as well as forth.
func TestMidnightWindowKeptIsWorkedOut(t *testing.T) {
	var zones []*time.Location
	for _, name := range []string{"UTC", "America/Los_Angeles", "America/Santiago", "Asia/Tokyo", "Europe/London"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatalf("zone %s: %v", name, err)
		}
		zones = append(zones, loc)
	}
	rng := rand.New(rand.NewPCG(18, 2))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := start
	for i := range 200000 {
		switch {
		case i%1000 == 0:
			at = start.Add(time.Duration(rng.Int64N(int64(2 * 365 * 24 * time.Hour))))
		case i%7 == 0:
			at = at.Add(-time.Duration(rng.Int64N(int64(30 * time.Hour))))
		default:
			at = at.Add(time.Duration(rng.Int64N(int64(3 * time.Hour))))
		}
		loc := zones[rng.IntN(len(zones))]
		got := midnightWindow(at, loc)
		want := window{slot: dayNumber(at, loc), slots: 1, ttl: dayTTL, reset: NextReset(config.Reset{Kind: config.ResetMidnight, Location: loc}, at)}
		if got.slot != want.slot || !got.reset.Equal(want.reset) || got.slots != want.slots || got.ttl != want.ttl {
			t.Fatalf("the day window at %v in %s = slot %d reset %v, want slot %d reset %v", at, loc, got.slot, got.reset, want.slot, want.reset)
		}
	}
}

// America/Santiago skips 00:00 on the first Sunday of September: the reset
// worked out late on the Saturday is the Sunday's first instant, 01:00,
// after the instant it was worked out from. time.Date alone gave 23:00 of
// the Saturday.
func TestNextResetAcrossASkippedMidnight(t *testing.T) {
	loc, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 9, 5, 23, 41, 0, 0, loc)
	got := NextReset(config.Reset{Kind: config.ResetMidnight, Location: loc}, now)
	if want := time.Date(2026, 9, 6, 1, 0, 0, 0, loc); !got.Equal(want) || !got.After(now) {
		t.Errorf("NextReset at %v = %v, want %v", now, got, want)
	}
}
