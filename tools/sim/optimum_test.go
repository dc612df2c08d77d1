package sim

import (
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// tinyTier is one provider "p" (midnight-UTC days) with the given models.
func tinyTier(acct emulator.Limits, models ...emulator.Model) []emulator.Preset {
	return []emulator.Preset{{Provider: emulator.Provider{Name: "p", Limits: acct}, Models: models}}
}

// TestOptimumExact: on traces small enough to count by hand, where no
// relaxation of the bound bites (request limits, or questions of one
// size), the bound is the optimum itself, and its witness keeps every
// limit.
func TestOptimumExact(t *testing.T) {
	start := time.Date(2026, 6, 16, 0, 0, 0, 0, time.UTC)
	at := func(d ...time.Duration) []Arrival {
		var tr []Arrival
		for _, x := range d {
			tr = append(tr, Arrival{At: x, Prompt: 1000})
		}
		return tr
	}
	c := tokens(Arrival{Prompt: 1000})
	s, m, h := time.Second, time.Minute, time.Hour
	tests := []struct {
		name   string
		tr     []Arrival
		routes []string
		ps     []emulator.Preset
		want   int
		by     map[string]int
	}{
		{
			// Minute 0 takes 2 of its 3, minute 5 both of its 2, but the
			// day holds 3.
			name: "a day cap binds over two minutes", tr: at(0, 0, 0, 5*m, 5*m), routes: []string{"p/a"},
			ps: tinyTier(emulator.Limits{}, emulator.Model{ID: "a", Limits: emulator.Limits{RPM: 2, RPD: 3}}), want: 3,
		},
		{
			// Three at once: a takes one a minute, b one a day; the
			// fourth, at 40 s, may wait into minute 1 (its deadline is 30
			// s), where a has room again.
			name: "a question waits into the next minute", tr: at(0, 0, 0, 40*s), routes: []string{"p/a", "p/b"},
			ps: tinyTier(emulator.Limits{}, emulator.Model{ID: "a", Limits: emulator.Limits{RPM: 1}},
				emulator.Model{ID: "b", Limits: emulator.Limits{RPD: 1}}), want: 3, by: map[string]int{"p/a": 2, "p/b": 1},
		},
		{
			// Four of one size against three sizes' worth of tokens a
			// minute.
			name: "a token limit", tr: at(0, 1*s, 2*s, 3*s), routes: []string{"p/a"},
			ps: tinyTier(emulator.Limits{}, emulator.Model{ID: "a", Limits: emulator.Limits{TPM: 3*c + c/2}}), want: 3,
		},
		{
			// The account's 2 a day over two models of 5 a minute each.
			name: "an account's day", tr: at(0, 1*h, 2*h, 3*h), routes: []string{"p/a", "p/b"},
			ps: tinyTier(emulator.Limits{RPD: 2}, emulator.Model{ID: "a", Limits: emulator.Limits{RPM: 5}},
				emulator.Model{ID: "b", Limits: emulator.Limits{RPM: 5}}), want: 2,
		},
		{
			// Midnight UTC renews the day: one each side of it.
			name: "the next day", tr: at(23*h+59*m, 23*h+59*m, 24*h+m, 24*h+m), routes: []string{"p/a"},
			ps: tinyTier(emulator.Limits{}, emulator.Model{ID: "a", Limits: emulator.Limits{RPD: 1}}), want: 2,
		},
		{
			// A question larger than the minute's tokens fits no route.
			name: "too large", tr: []Arrival{{Prompt: 5000}, {At: m, Prompt: 1000}}, routes: []string{"p/a"},
			ps: tinyTier(emulator.Limits{}, emulator.Model{ID: "a", Limits: emulator.Limits{TPM: 3000}}), want: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Optimum(tt.tr, start, chainDeadline, tt.routes, tt.ps)
			if r.ByModel != tt.want || r.ByFallback != len(tt.tr)-tt.want {
				t.Errorf("got %d answered by a model and %d by the fallback, want %d and %d", r.ByModel, r.ByFallback, tt.want, len(tt.tr)-tt.want)
			}
			sum := 0
			for id, n := range r.ByRoute {
				sum += n
				if want, ok := tt.by[id]; ok && n != want {
					t.Errorf("%s answered %d, want %d", id, n, want)
				}
			}
			if sum != r.ByModel {
				t.Errorf("the witness answers %d by route, %d in all", sum, r.ByModel)
			}
		})
	}
}

// TestOptimumBoundsCapacity: the bound is never below what the greedy
// capacity oracle answered on the same trace and limits (it answers a
// feasible schedule), on a day that binds and on each shape's first
// hours.
func TestOptimumBoundsCapacity(t *testing.T) {
	rep, err := Run(t.Context(), Options{Trace: shortDay(), Policies: []string{PolicyCapacity, PolicyOptimum}})
	if err != nil {
		t.Fatal(err)
	}
	capa, opt := rep.Result(PolicyCapacity), rep.Result(PolicyOptimum)
	t.Logf("capacity %d, optimum %d of %d", capa.ByModel, opt.ByModel, rep.Requests)
	if opt.ByModel < capa.ByModel {
		t.Errorf("optimum %d below the greedy capacity %d", opt.ByModel, capa.ByModel)
	}
	if capa.ByFallback == 0 {
		t.Errorf("capacity answered all %d: the day does not bind, the check shows nothing", rep.Requests)
	}
}
