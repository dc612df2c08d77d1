package rest

import (
	"context"
	"errors"
	"testing"

	"github.com/tollfree/tollfree/failure"
)

// TestTraitKey: a trait's key has its own text form, which reads back,
// and is neither a route's nor a provider's key; a route ID that merely
// looks like one stays a route's key.
func TestTraitKey(t *testing.T) {
	k := TraitKey(NoPrefix, "openrouter/qwen/qwen3-coder:free")
	const text = "trait:noprefix:openrouter/qwen/qwen3-coder:free"
	if got := k.String(); got != text {
		t.Errorf("String() = %q, want %q", got, text)
	}
	if got := ParseKey(text); got != k {
		t.Errorf("ParseKey(%q) = %#v, want %#v", text, got, k)
	}
	trait, id, ok := k.Trait()
	if !ok || trait != NoPrefix || id != "openrouter/qwen/qwen3-coder:free" {
		t.Errorf("Trait() = %q %q %v", trait, id, ok)
	}
	if _, ok := k.Route(); ok {
		t.Error("a trait's key reads as a route's")
	}
	if _, ok := k.Provider(); ok {
		t.Error("a trait's key reads as a provider's")
	}
	if k == RouteKey("openrouter/qwen/qwen3-coder:free") {
		t.Error("a trait's key equals its route's key")
	}
	for _, s := range []string{"trait:", "trait:noprefix", "trait::groq/m"} {
		if _, ok := ParseKey(s).Route(); !ok {
			t.Errorf("ParseKey(%q) is not a route's key", s)
		}
	}
}

// TestLearn (issue 13): a learned trait is kept in the store, read back
// by Load as every request reads the rests, known until it expires; it
// never holds the route back or shows as a rest of it.
func TestLearn(t *testing.T) {
	st := newFakeStore()
	rt := testRoute("groq/m", "groq")
	key := TraitKey(NoPrefix, rt.ID)
	if _, err := Learn(context.Background(), st, key, failure.BadRequest, t0, t0.Add(TraitTTL), "refused a prefix"); err != nil {
		t.Fatalf("Learn: %v", err)
	}
	tab, err := Load(context.Background(), st, t0.Add(TraitTTL-1))
	if err != nil {
		t.Fatal(err)
	}
	if !tab.Knows(key, t0.Add(TraitTTL-1)) {
		t.Error("the trait is not known after a reload")
	}
	if st := tab.Of(rt); st.State != Ready {
		t.Errorf("the route is %s, want ready: a trait holds nothing back", st.State)
	}
	if _, ok := tab.Holding(rt, t0); ok {
		t.Error("a trait holds the route back")
	}
	if end := tab.Ends(rt, t0); !end.IsZero() {
		t.Errorf("Ends = %v, want none", end)
	}
	if tab.Knows(TraitKey(NoPrefix, "groq/other"), t0) {
		t.Error("another route knows the trait")
	}
	tab, _ = Load(context.Background(), st, t0.Add(TraitTTL))
	if tab.Knows(key, t0.Add(TraitTTL)) {
		t.Error("the trait is known past its expiry")
	}
	if _, err := Learn(context.Background(), st, RouteKey(rt.ID), failure.BadRequest, t0, t0.Add(TraitTTL), ""); err == nil {
		t.Error("Learn took a route's key")
	}
	st.err = errors.New("down")
	if r, err := Learn(context.Background(), st, key, failure.BadRequest, t0, t0.Add(TraitTTL), ""); err == nil || r.Key != key {
		t.Errorf("Learn on a failed store = %+v, %v; want the trait and the error", r, err)
	}
}
