package rest

import (
	"strings"

	"github.com/tollfree/tollfree/config"
)

// providerPrefix starts the text of a provider's key. A route ID is
// "provider/model" and never starts with it.
const providerPrefix = "provider:"

// Key names what a rest holds back: one route, or every route of one
// provider (they share the account). It is comparable, so it keys maps,
// and its text form (String, ParseKey) is the one the state store, the
// call log, the metrics and the admin API write: the route ID, or
// "provider:<name>". The zero Key names nothing.
type Key struct {
	name     string
	provider bool
}

// RouteKey is the key that rests the route with ID id.
func RouteKey(id string) Key { return Key{name: id} }

// ProviderKey is the key that rests every route of the provider name.
func ProviderKey(name string) Key { return Key{name: name, provider: true} }

// KeysOf returns the two keys that can hold rt back: its own, then its
// provider's.
func KeysOf(rt *config.Route) [2]Key {
	return [2]Key{RouteKey(rt.ID), ProviderKey(rt.Provider.Name)}
}

// ParseKey reads a key's text form: "provider:<name>" is a provider's
// key, anything else a route ID. "" is the zero Key.
func ParseKey(s string) Key {
	if name, ok := strings.CutPrefix(s, providerPrefix); ok {
		return ProviderKey(name)
	}
	return RouteKey(s)
}

// String returns the key's text form: the route ID, or "provider:<name>".
func (k Key) String() string {
	if k.provider {
		return providerPrefix + k.name
	}
	return k.name
}

// IsZero reports whether k names nothing.
func (k Key) IsZero() bool { return k == Key{} }

// Provider returns the provider's name of a provider's key; ok is false
// for a route's key.
func (k Key) Provider() (name string, ok bool) { return k.name, k.provider }

// Route returns the route ID of a route's key; ok is false for a
// provider's key.
func (k Key) Route() (id string, ok bool) { return k.name, !k.provider }

// MarshalText writes the key's text form, so that a Key in a JSON reply
// reads as a string.
func (k Key) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a key's text form (see ParseKey).
func (k *Key) UnmarshalText(b []byte) error {
	*k = ParseKey(string(b))
	return nil
}
