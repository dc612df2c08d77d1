package rest

import (
	"strings"

	"github.com/tollfree/tollfree/config"
)

// providerPrefix starts the text of a provider's key. A route ID is
// "provider/model" and never starts with it.
const providerPrefix = "provider:"

// traitPrefix starts the text of a learned trait's key:
// "trait:<name>:<route ID>". A route ID never starts with it.
const traitPrefix = "trait:"

// Key names what a rest holds back: one route, or every route of one
// provider (they share the account). A third kind, a learned trait of a
// route (TraitKey), holds nothing back: it rides in the same store for
// what every instance must know of a route without resting it. It is
// comparable, so it keys maps, and its text form (String, ParseKey) is the
// one the state store, the call log, the metrics and the admin API write:
// the route ID, "provider:<name>" or "trait:<name>:<route ID>". The zero
// Key names nothing.
type Key struct {
	name     string
	provider bool
	trait    string // a learned trait of the route name
}

// RouteKey is the key that rests the route with ID id.
func RouteKey(id string) Key { return Key{name: id} }

// ProviderKey is the key that rests every route of the provider name.
func ProviderKey(name string) Key { return Key{name: name, provider: true} }

// TraitKey is the key of a trait learned of the route with ID id (see
// NoPrefix). A trait never holds the route back: Holding, Of and Ends do
// not read it, and nothing shows it as a rest.
func TraitKey(trait, id string) Key { return Key{name: id, trait: trait} }

// NoPrefix is the trait of a route that refused a prefix continuation
// (config.ContinuePrefix): it is asked to continue by instruct instead,
// until the trait expires (issue 13).
const NoPrefix = "noprefix"

// KeysOf returns the two keys that can hold rt back: its own, then its
// provider's.
func KeysOf(rt *config.Route) [2]Key {
	return [2]Key{RouteKey(rt.ID), ProviderKey(rt.Provider.Name)}
}

// ParseKey reads a key's text form: "provider:<name>" is a provider's
// key, "trait:<name>:<route ID>" a trait's, anything else a route ID. ""
// is the zero Key.
func ParseKey(s string) Key {
	if name, ok := strings.CutPrefix(s, providerPrefix); ok {
		return ProviderKey(name)
	}
	if rest, ok := strings.CutPrefix(s, traitPrefix); ok {
		if trait, id, ok := strings.Cut(rest, ":"); ok && trait != "" && id != "" {
			return TraitKey(trait, id)
		}
	}
	return RouteKey(s)
}

// String returns the key's text form: the route ID, "provider:<name>" or
// "trait:<name>:<route ID>".
func (k Key) String() string {
	switch {
	case k.provider:
		return providerPrefix + k.name
	case k.trait != "":
		return traitPrefix + k.trait + ":" + k.name
	}
	return k.name
}

// IsZero reports whether k names nothing.
func (k Key) IsZero() bool { return k == Key{} }

// Provider returns the provider's name of a provider's key; ok is false
// for any other key.
func (k Key) Provider() (name string, ok bool) { return k.name, k.provider }

// Route returns the route ID of a route's key; ok is false for any other
// key.
func (k Key) Route() (id string, ok bool) { return k.name, !k.provider && k.trait == "" }

// Trait returns the trait and the route ID of a trait's key; ok is false
// for any other key.
func (k Key) Trait() (trait, id string, ok bool) { return k.trait, k.name, k.trait != "" }

// MarshalText writes the key's text form, so that a Key in a JSON reply
// reads as a string.
func (k Key) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a key's text form (see ParseKey).
func (k *Key) UnmarshalText(b []byte) error {
	*k = ParseKey(string(b))
	return nil
}
