package rest

import (
	"encoding/json"
	"testing"

	"github.com/tollfree/tollfree/config"
)

func TestKey(t *testing.T) {
	for _, tc := range []struct {
		key      Key
		text     string
		provider string // "" for a route's key
	}{
		{RouteKey("groq/llama-3.3-70b-versatile"), "groq/llama-3.3-70b-versatile", ""},
		{RouteKey("openrouter/meta-llama/llama-3.3-70b-instruct:free"), "openrouter/meta-llama/llama-3.3-70b-instruct:free", ""},
		{ProviderKey("groq"), "provider:groq", "groq"},
		{Key{}, "", ""},
	} {
		if got := tc.key.String(); got != tc.text {
			t.Errorf("%#v: String() = %q, want %q", tc.key, got, tc.text)
		}
		if got := ParseKey(tc.text); got != tc.key {
			t.Errorf("ParseKey(%q) = %#v, want %#v", tc.text, got, tc.key)
		}
		name, isProvider := tc.key.Provider()
		id, isRoute := tc.key.Route()
		if isProvider != (tc.provider != "") || isProvider && name != tc.provider || isRoute == isProvider || isRoute && id != tc.text {
			t.Errorf("%q: Provider() = %q %v, Route() = %q %v", tc.text, name, isProvider, id, isRoute)
		}
		b, err := json.Marshal(struct{ K Key }{tc.key})
		if want := `{"K":"` + tc.text + `"}`; err != nil || string(b) != want {
			t.Errorf("%q: JSON %s (%v), want %s", tc.text, b, err, want)
		}
		var back struct{ K Key }
		if err := json.Unmarshal(b, &back); err != nil || back.K != tc.key {
			t.Errorf("%q: JSON back %#v (%v)", tc.text, back.K, err)
		}
	}
	if !(Key{}).IsZero() || RouteKey("a/b").IsZero() {
		t.Error("IsZero: only the zero Key is zero")
	}
	rt := &config.Route{ID: "groq/m", Provider: &config.Provider{Name: "groq"}}
	if got := KeysOf(rt); got != [2]Key{RouteKey("groq/m"), ProviderKey("groq")} {
		t.Errorf("KeysOf = %v", got)
	}
}
