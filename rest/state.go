package rest

import (
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
)

// State is what a route or provider is doing, as the status page, the
// metrics and the admin API read it. Its values are their labels.
type State string

// The states, in the order they win: a route is in the first that applies.
const (
	// Disabled: the route or its provider cannot be called (no key).
	Disabled State = "disabled"
	// Paused: a hand paused the route or its provider.
	Paused State = "paused"
	// Gone: the provider no longer lists the route's model (package
	// discover), or answered that it is decommissioned: a rest of class
	// failure.Gone of the route itself (issue 35).
	Gone State = "gone"
	// Exhausted: today's quota is spent (a per-day rest; package status
	// adds a daily budget window counted full).
	Exhausted State = "exhausted"
	// Resting: an automatic rest of the route or its provider.
	Resting State = "resting"
	// Ready: none of the above.
	Ready State = "ready"
)

// Standing is a route's or provider's State and the rest behind it.
type Standing struct {
	State State
	// Rest decides State: the zero Rest when Ready; for Disabled, the key
	// and the reason it cannot be called.
	Rest Rest
}

// Label is the class shown with the standing: "disabled", "paused", the
// failure class of a rest ("rate_day"), or "" when ready.
func (s Standing) Label() string {
	switch s.State {
	case Ready:
		return ""
	case Disabled:
		return string(Disabled)
	}
	return s.Rest.Label()
}

// Of says what rt is doing according to the rests in t (see State): a
// pause of the route or its provider before a per-day rest of either, and
// that before an automatic rest, the later ending of the route's and its
// provider's.
func (t Table) Of(rt *config.Route) Standing {
	if rt.Disabled {
		return Standing{State: Disabled, Rest: Rest{Key: RouteKey(rt.ID), Reason: rt.DisabledReason}}
	}
	own, ownOK := t[RouteKey(rt.ID)]
	prov, provOK := t[ProviderKey(rt.Provider.Name)]
	switch {
	case ownOK && own.Manual:
		return Standing{Paused, own}
	case provOK && prov.Manual:
		return Standing{Paused, prov}
	case ownOK && own.Class == failure.Gone:
		return Standing{Gone, own}
	case ownOK && own.Exhausts():
		return Standing{Exhausted, own}
	case provOK && prov.Exhausts():
		return Standing{Exhausted, prov}
	case ownOK && provOK && prov.Until.After(own.Until):
		return Standing{Resting, prov}
	case ownOK:
		return Standing{Resting, own}
	case provOK:
		return Standing{Resting, prov}
	}
	return Standing{State: Ready}
}

// OfProvider says what the provider pr is doing according to the rests in
// t: disabled, paused, exhausted, resting or ready, the first that applies.
func (t Table) OfProvider(pr *config.Provider) Standing {
	key := ProviderKey(pr.Name)
	r, ok := t[key]
	switch {
	case pr.Disabled:
		return Standing{State: Disabled, Rest: Rest{Key: key, Reason: pr.DisabledReason}}
	case ok && r.Manual:
		return Standing{Paused, r}
	case ok && r.Exhausts():
		return Standing{Exhausted, r}
	case ok:
		return Standing{Resting, r}
	}
	return Standing{State: Ready}
}
