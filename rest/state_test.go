package rest

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/state"
)

// TestOf: a route is in the first state that applies, whichever of its own
// and its provider's rests decides.
func TestOf(t *testing.T) {
	auto := func(k Key, c failure.Class, d time.Duration) Rest {
		return Rest{Key: k, Class: c, Until: t0.Add(d), Since: t0}
	}
	pause := func(k Key) Rest { return Rest{Key: k, Manual: true, Since: t0} }
	own, prov := RouteKey("p/a"), ProviderKey("p")
	tests := []struct {
		name  string
		rests []Rest
		want  State
		key   Key
		label string
	}{
		{"ready", nil, Ready, Key{}, ""},
		{"resting", []Rest{auto(own, failure.Overloaded, time.Minute)}, Resting, own, "overloaded"},
		{"provider resting", []Rest{auto(prov, failure.Auth, time.Hour)}, Resting, prov, "auth"},
		{"the later of both", []Rest{auto(own, failure.Overloaded, time.Minute), auto(prov, failure.Auth, time.Hour)}, Resting, prov, "auth"},
		{"own when it ends later", []Rest{auto(own, failure.Timeout, 6*time.Hour), auto(prov, failure.Auth, time.Hour)}, Resting, own, "timeout"},
		{"gone before exhausted", []Rest{auto(own, failure.Gone, time.Hour), auto(prov, failure.RateDay, 6*time.Hour)}, Gone, own, "gone"},
		{"exhausted before resting", []Rest{auto(own, failure.Overloaded, 5*time.Hour), auto(prov, failure.RateDay, time.Hour)}, Exhausted, prov, "rate_day"},
		{"paused before exhausted", []Rest{auto(own, failure.RateDay, time.Hour), pause(prov)}, Paused, prov, "paused"},
		{"own pause first", []Rest{pause(own), pause(prov)}, Paused, own, "paused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := Table{}
			for _, r := range tt.rests {
				tab.Put(r)
			}
			st := tab.Of(testRoute("p/a", "p"))
			if st.State != tt.want || st.Rest.Key != tt.key || st.Label() != tt.label {
				t.Errorf("got %s %v %q, want %s %v %q", st.State, st.Rest.Key, st.Label(), tt.want, tt.key, tt.label)
			}
		})
	}
	rt := testRoute("p/b", "p")
	rt.Disabled, rt.DisabledReason = true, "no key"
	if st := (Table{}).Of(rt); st.State != Disabled || st.Label() != "disabled" || st.Rest.Reason != "no key" || st.Rest.Key != RouteKey("p/b") {
		t.Errorf("disabled: got %+v", st)
	}
	if st := (Table{prov: auto(prov, failure.RateDay, time.Hour)}).OfProvider(rt.Provider); st.State != Exhausted {
		t.Errorf("provider: got %+v, want exhausted", st)
	}
}

// TestRecord: a rest reads back from the store as it was written; a pause's
// stored class is "paused", and a class this version does not know reads
// as unknown.
func TestRecord(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore()
	p, err := Pause(ctx, st, ProviderKey("p"), t0, t0.Add(2*time.Hour), "rotating the key")
	if err != nil {
		t.Fatal(err)
	}
	if s := st.rests["provider:p"]; s.Class != "paused" || !s.Manual || s.Reason != "paused by hand: rotating the key" || !s.Until.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("stored pause %+v", s)
	}
	st.rests["p/x"] = state.Rest{Key: "p/x", Class: "from_the_future", Until: t0.Add(time.Minute), Since: t0}
	tab, err := Load(ctx, st, t0)
	if err != nil || tab[ProviderKey("p")] != p {
		t.Fatalf("loaded %+v (%v), want %+v", tab[ProviderKey("p")], err, p)
	}
	if r := tab[RouteKey("p/x")]; r.Label() != "unknown" || r.Exhausts() {
		t.Errorf("unknown class reads as %q", r.Label())
	}
	if err := Resume(ctx, st, ProviderKey("p")); err != nil {
		t.Fatal(err)
	}
	if tab, _ := Load(ctx, st, t0); len(tab) != 1 {
		t.Errorf("after Resume: %+v", tab)
	}
	if tab, _ := Load(ctx, st, t0.Add(time.Hour)); len(tab) != 0 {
		t.Errorf("an ended rest is not loaded: %+v", tab)
	}
}
