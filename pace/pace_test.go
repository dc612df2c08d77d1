package pace_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/pace"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/state/memstore"
)

// plan has a chain of a day-capped route (rpd as given, midnight UTC)
// before a renewable one (60 a minute).
func plan(t *testing.T, rpd int, paceOpt string) *config.Plan { return planOf(t, rpd, paceOpt) }

func planOf(t testing.TB, rpd int, paceOpt string) *config.Plan {
	t.Helper()
	y := `
roles: []
providers:
  capped:
    base_url: http://127.0.0.1:1/v1
    api_key: ${K}
    reset: midnight UTC
    models:
      m: {rpd: ` + itoa(rpd) + `}
  renew:
    base_url: http://127.0.0.1:1/v1
    api_key: ${K}
    models:
      m: {rpm: 60}
chains:
  answer:
    routes: [capped/m, renew/m]
    pace: ` + paceOpt + `
    fallback: {message: resting}
`
	return parsePlan(t, y)
}

// parsePlan parses a config whose keys are ${K}.
func parsePlan(t testing.TB, y string) *config.Plan {
	t.Helper()
	p, err := config.Parse("pace.yaml", []byte(y), func(k string) string {
		if k == "K" {
			return "key-for-tests"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startPacer starts a Pacer over a Book and a memstore on a fake clock at
// 06:00 UTC, closed when the test ends.
func startPacer(t testing.TB) (*clock.Fake, *quota.Book, *pace.Pacer) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 6, 16, 6, 0, 0, 0, time.UTC))
	store, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	book := quota.New(quota.Options{Store: store, Clock: clk})
	t.Cleanup(book.Close)
	pc := pace.New(pace.Options{Store: store, Budget: book, Clock: clk})
	t.Cleanup(pc.Close)
	return clk, book, pc
}

func itoa(n int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

// day runs 6:00 to 6:40 UTC with a request a minute, spending the route
// the pacer's order puts first, and returns how many the capped route took.
func day(t *testing.T, p *config.Plan) (capped int, snap *pace.Snapshot) {
	t.Helper()
	clk, book, pc := startPacer(t)
	ch := p.Chains["answer"]
	for range 40 {
		pc.Arrived(ch, 500, 500)
		pc.Refresh(ch)
		for _, rt := range pc.Order(ch, ch.Routes, 1000) {
			if _, err := book.Reserve(context.Background(), rt, 500, ch.Margin); err == nil {
				pc.Picked(ch, rt)
				if rt.ID == "capped/m" {
					capped++
				}
				break
			}
		}
		clk.Advance(time.Minute)
	}
	return capped, pc.Snapshot("answer")
}

func TestHeldToItsPaceWhenCapsBind(t *testing.T) {
	// A request a minute from 6:00 forecasts about a thousand before
	// midnight: a 24-a-day route binds once ten requests were counted. The
	// renewable route (60 a minute) carries every hour forecast, so the
	// capped route's line stays at 0: after those ten and its one request
	// of slack, it takes only what the renewable one cannot.
	capped, s := day(t, plan(t, 24, "on"))
	if s == nil || !s.Binding {
		t.Fatalf("snapshot %+v: want the caps to bind", s)
	}
	if capped > 11 {
		t.Errorf("the capped route took %d of 40 requests between 6:00 and 6:40 while the renewable one had room; want at most 11", capped)
	}
}

func TestSpentFreelyWhenCapsDoNotBind(t *testing.T) {
	capped, s := day(t, plan(t, 5000, "on"))
	if s == nil || s.Binding {
		t.Fatalf("snapshot %+v: want caps that do not bind", s)
	}
	if capped != 40 {
		t.Errorf("the capped route took %d of 40 requests; want all: its cap does not bind", capped)
	}
}

func TestPaceOff(t *testing.T) {
	capped, s := day(t, plan(t, 24, "off"))
	if s != nil {
		t.Errorf("pace: off made a forecast: %+v", s)
	}
	if capped != 23 {
		t.Errorf("the capped route took %d of 40 requests with pace: off; want its 24 less the margin's one, in the chain's order", capped)
	}
}

// TestHeldRoutesByCost: among the routes held back by their pace, a long
// question goes first to a cap counted in requests (where it costs what a
// short one does) and a short one to a cap counted in tokens (which then
// answers more questions); a route with a token cap is held sooner for a
// long question than for a short one.
func TestHeldRoutesByCost(t *testing.T) {
	y := `
roles: []
providers:
  tok:
    base_url: http://127.0.0.1:1/v1
    api_key: ${K}
    reset: midnight UTC
    models:
      m: {tpd: 100000}
  req:
    base_url: http://127.0.0.1:1/v1
    api_key: ${K}
    reset: midnight UTC
    models:
      m: {rpd: 100}
  renew:
    base_url: http://127.0.0.1:1/v1
    api_key: ${K}
    models:
      m: {rpm: 6000}
chains:
  answer:
    routes: [tok/m, req/m, renew/m]
    fallback: {message: resting}
`
	p := parsePlan(t, y)
	clk, book, pc := startPacer(t)
	ch := p.Chains["answer"]
	tok, req := p.Routes["tok/m"], p.Routes["req/m"]
	for range 40 { // a request a minute of 1,000 tokens: the caps bind
		pc.Arrived(ch, 1000, 1000)
		clk.Advance(time.Minute)
	}
	order := func(tokens int) string {
		pc.Refresh(ch)
		s := ""
		for _, rt := range pc.Order(ch, ch.Routes, tokens) {
			s += rt.ID + " "
		}
		return s
	}
	// Nothing spent yet: each is within its pace for a question of the
	// average size, but the token cap is held for one three times as long.
	if got, want := order(1000), "tok/m req/m renew/m "; got != want {
		t.Errorf("nothing spent, an average question: order %q, want the chain's %q", got, want)
	}
	if got, want := order(3000), "req/m renew/m tok/m "; got != want {
		t.Errorf("nothing spent, a long question: order %q, want the token cap held: %q", got, want)
	}
	for range 2 {
		for _, rt := range []*config.Route{tok, req} {
			if _, err := book.Reserve(context.Background(), rt, 1000, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Both past their line (0: the renewable route carries every hour):
	// held, after the renewable route, cheapest first.
	if got, want := order(3000), "renew/m req/m tok/m "; got != want {
		t.Errorf("both held, a long question: order %q, want %q", got, want)
	}
	if got, want := order(300), "renew/m tok/m req/m "; got != want {
		t.Errorf("both held, a short question: order %q, want %q", got, want)
	}
}

// TestSmallCapIsNotRenewable: a day-capped route that does not bind (its
// cap resets before the demand would spend it) carries what its cap has
// left over the hours to its reset, not its minute limit's rate. Counted at
// its 60 a minute, a route with 10 left for 20 minutes once passed for
// room for every hour forecast, and the binding route before it was held
// back entirely behind it (the evaluation batch of tools/sim: Cerebras
// held behind OpenRouter's 50 a day).
func TestSmallCapIsNotRenewable(t *testing.T) {
	y := `
roles: []
providers:
  big:
    base_url: http://127.0.0.1:1/v1
    api_key: ${K}
    reset: midnight UTC
    models:
      m: {rpd: 100}
  small:
    base_url: http://127.0.0.1:1/v1
    api_key: ${K}
    reset: midnight America/Los_Angeles
    models:
      m: {rpm: 60, rpd: 10}
chains:
  answer:
    routes: [big/m, small/m]
    fallback: {message: resting}
`
	p := parsePlan(t, y)
	clk, book, pc := startPacer(t)
	ch := p.Chains["answer"]
	for range 40 { // 6:00 to 6:40 UTC, a request a minute: 60 an hour
		pc.Arrived(ch, 1000, 1000)
		clk.Advance(time.Minute)
	}
	for range 2 {
		if _, err := book.Reserve(context.Background(), p.Routes["big/m"], 1000, 0); err != nil {
			t.Fatal(err)
		}
	}
	pc.Refresh(ch)
	s := pc.Snapshot("answer")
	if s == nil || len(s.Routes) != 2 || !s.Routes[0].Binding || s.Routes[1].Binding {
		t.Fatalf("snapshot %+v: want big/m to bind (1,000 expected before midnight UTC, 98 left) and small/m not (20 expected before its reset at 07:00 UTC, 10 left)", s)
	}
	// small/m has 10 left for the 20 minutes to its reset: 30 an hour.
	if s.Renewable > 30.5 {
		t.Errorf("renewable rate %.1f an hour; want at most 30: small/m's 10 left over the 20 minutes to its reset, not its 60 a minute", s.Renewable)
	}
	var got []string
	for _, rt := range pc.Order(ch, ch.Routes, 1000) {
		got = append(got, rt.ID)
	}
	if len(got) != 2 || got[0] != "big/m" {
		t.Errorf("order %v; want big/m first: it spent 2 of 100 with a third of its day's excess demand gone, within its pace", got)
	}
}

// TestGeminiCarriesPromptsAlone: Gemini's tokens a minute count input
// alone, so the forecast finds a Gemini route carrying as many requests an
// hour as its limit holds of their prompts, not of their prompts and
// answers: 15,000 tokens a minute carry 1,125 requests of 800 prompt
// tokens and 200 of answer an hour, where another provider's carry 900.
func TestGeminiCarriesPromptsAlone(t *testing.T) {
	p := parsePlan(t, `
roles: []
providers:
  gemini:
    preset: gemini
    api_key: ${K}
    models:
      gemma-3-27b-it: {rpm: 0, rpd: 0, tpm: 15000}
  other:
    base_url: http://127.0.0.1:1/v1
    api_key: ${K}
    models:
      m: {tpm: 15000}
chains:
  answer:
    routes: [gemini/gemma-3-27b-it, other/m]
    fallback: {message: resting}
`)
	_, _, pc := startPacer(t)
	ch := p.Chains["answer"]
	for range 10 {
		pc.Arrived(ch, 800, 1000)
	}
	pc.Refresh(ch)
	s := pc.Snapshot("answer")
	if s == nil || len(s.Routes) != 2 {
		t.Fatalf("snapshot: %+v, want two routes", s)
	}
	for _, tc := range []struct {
		route string
		want  float64
	}{{"gemini/gemma-3-27b-it", 1125}, {"other/m", 900}} {
		for _, rp := range s.Routes {
			if rp.Route == tc.route && math.Abs(rp.PerHour-tc.want) > 1 {
				t.Errorf("%s carries %.0f requests an hour, want %.0f", tc.route, rp.PerHour, tc.want)
			}
		}
	}
}
