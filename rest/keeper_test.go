package rest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/state"
)

// fakeStore keeps rests in a map, with state.Store's rule that a pause set
// by hand wins over an automatic rest. err, when set, fails every call.
type fakeStore struct {
	mu    sync.Mutex
	rests map[string]state.Rest
	err   error
}

func newFakeStore() *fakeStore { return &fakeStore{rests: make(map[string]state.Rest)} }

func (f *fakeStore) SetRest(_ context.Context, r state.Rest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if old, ok := f.rests[r.Key]; ok && old.Manual && !r.Manual {
		return nil
	}
	f.rests[r.Key] = r
	return nil
}

func (f *fakeStore) ClearRest(_ context.Context, key string, manual bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if old, ok := f.rests[key]; ok && (manual || !old.Manual) {
		delete(f.rests, key)
	}
	return nil
}

func (f *fakeStore) Rests(_ context.Context, now time.Time) ([]state.Rest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	var out []state.Rest
	for _, r := range f.rests {
		if r.Active(now) {
			out = append(out, r)
		}
	}
	return out, nil
}

var t0 = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func testRoute(id, provider string) *config.Route {
	return &config.Route{ID: id, Provider: &config.Provider{Name: provider}}
}

// TestKeeperStreak: failures in a row grow a rest (Growth 2), and an
// answer starts the count again.
func TestKeeperStreak(t *testing.T) {
	st := newFakeStore()
	k := NewKeeper(Options{Policy: NewPolicy(config.RestTimes{Growth: 2}), Store: st})
	rt := testRoute("p/a", "p")
	over := failure.Verdict{Class: failure.Overloaded, Scope: failure.ScopeRoute, Message: "503"}
	for i, want := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute} {
		r := k.Settle(context.Background(), rt, over, false, t0)
		if r.Key != RouteKey("p/a") || !r.Until.Equal(t0.Add(want)) || r.Class != failure.Overloaded {
			t.Fatalf("failure %d: got %+v, want p/a until +%v", i+1, r, want)
		}
	}
	// A failure that stays with the request counts nothing.
	if r := k.Settle(context.Background(), rt, failure.Verdict{Class: failure.BadRequest, Scope: failure.ScopeRequest}, false, t0); !r.Key.IsZero() {
		t.Fatalf("bad request rested %+v", r)
	}
	k.Answered(rt)
	if r := k.Settle(context.Background(), rt, over, false, t0); !r.Until.Equal(t0.Add(30 * time.Second)) {
		t.Fatalf("after an answer: until %v, want +30s", r.Until.Sub(t0))
	}
	tab, err := Load(context.Background(), st, t0)
	if err != nil || len(tab) != 1 || tab[RouteKey("p/a")].Class != failure.Overloaded {
		t.Fatalf("stored: %+v (%v)", tab, err)
	}
}

// TestKeeperStrikes: silent losses rest the route as a timeout at
// SilentStrikes in a row; a loser that had started answering, or an
// answer, clears the count.
func TestKeeperStrikes(t *testing.T) {
	ctx := context.Background()
	k := NewKeeper(Options{Store: newFakeStore()})
	rt := testRoute("p/a", "p")
	silent := failure.Verdict{Class: failure.SilentLoser, Scope: failure.ScopeRoute}
	cancelled := failure.Verdict{Class: failure.Cancelled, Scope: failure.ScopeRequest}
	steps := []struct {
		name     string
		v        failure.Verdict
		lostRace bool
		answered bool
		rests    bool
	}{
		{"first silent loss", silent, true, false, false},
		{"second silent loss rests", silent, true, false, true},
		{"count starts again", silent, true, false, false},
		{"a loser that had answered clears it", cancelled, true, false, false},
		{"so one more is the first", silent, true, false, false},
		{"an answer clears it", failure.Verdict{}, false, true, false},
		{"first again", silent, true, false, false},
		{"a caller gone is no lost race", cancelled, false, false, false},
		{"second in a row", silent, true, false, true},
	}
	for _, s := range steps {
		if s.answered {
			k.Answered(rt)
			continue
		}
		r := k.Settle(ctx, rt, s.v, s.lostRace, t0)
		if s.rests != !r.Key.IsZero() {
			t.Fatalf("%s: rest %+v, want rest %v", s.name, r, s.rests)
		}
		if s.rests && (r.Class != failure.Timeout || r.Key != RouteKey("p/a") || !r.Until.Equal(t0.Add(30*time.Second))) {
			t.Fatalf("%s: got %+v, want a 30s timeout rest of p/a", s.name, r)
		}
	}
}

// TestKeeperProvider: a provider-wide failure rests the provider's key; a
// store that fails still returns the rest, for the request to honour.
func TestKeeperProvider(t *testing.T) {
	st := newFakeStore()
	st.err = errors.New("store down")
	k := NewKeeper(Options{Store: st})
	r := k.Settle(context.Background(), testRoute("p/a", "p"), failure.Verdict{Class: failure.Auth, Scope: failure.ScopeProvider}, false, t0)
	if r.Key != ProviderKey("p") || !r.Until.Equal(t0.Add(time.Hour)) {
		t.Fatalf("got %+v, want provider:p for 1h", r)
	}
}

// TestKeeperDayEnd: a per-day limit with no provider-named end rests until
// the route's next daily reset.
func TestKeeperDayEnd(t *testing.T) {
	midnight := time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC)
	var got config.Reset
	k := NewKeeper(Options{Store: newFakeStore(), DayEnd: func(rs config.Reset, now time.Time) time.Time { got = rs; return midnight }})
	rt := testRoute("p/a", "p")
	rt.Reset = config.Reset{Kind: config.ResetRolling}
	r := k.Settle(context.Background(), rt, failure.Verdict{Class: failure.RateDay, Scope: failure.ScopeRoute}, false, t0)
	if !r.Until.Equal(midnight) || got != rt.Reset || !r.Exhausts() {
		t.Fatalf("got %+v (reset asked %+v), want until %v", r, got, midnight)
	}
}

// TestLift: a probe that answered lifts automatic rests of the route and
// its provider, never a pause.
func TestLift(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore()
	k := NewKeeper(Options{Store: st})
	a, b := testRoute("p/a", "p"), testRoute("q/b", "q")
	k.Settle(ctx, a, failure.Verdict{Class: failure.Auth, Scope: failure.ScopeProvider}, false, t0)
	k.Settle(ctx, a, failure.Verdict{Class: failure.Gone, Scope: failure.ScopeRoute}, false, t0)
	if _, err := Pause(ctx, st, RouteKey("q/b"), t0, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	if err := k.Lift(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := k.Lift(ctx, b); err != nil {
		t.Fatal(err)
	}
	tab, _ := Load(ctx, st, t0)
	if len(tab) != 1 || !tab[RouteKey("q/b")].Manual {
		t.Fatalf("after Lift: %+v, want only the pause of q/b", tab)
	}
}
