package caller

import (
	"errors"
	"testing"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
)

// TestOf: the llm.Caller the gateway is handed turns back into the
// Identity the HTTP API worked out, with its key's chains and limits; a
// Go program's caller without a key is a visitor.
func TestOf(t *testing.T) {
	r := New(plan(t, keysConfig), clock.NewFake(t0))
	for _, auth := range []string{teamKey, botKey, ownerKey, adminTok} {
		id, err := r.Identify(request("203.0.113.7:1", "Bearer "+auth))
		if err != nil {
			t.Fatal(err)
		}
		id = id.Narrow("alice")
		got, err := r.Of(id.Caller())
		if err != nil || !sameIdentity(got, id) {
			t.Errorf("%s: Of(Caller()) = %+v, %v; want %+v", id.Key, got, err, id)
		}
	}
	visitorLimits := config.CallerLimits{PerHour: 15, PerDay: 40}
	for _, tc := range []struct {
		name string
		c    llm.Caller
		want Identity
	}{
		{"a program's visitor", llm.Caller{ID: "session-1"}, Identity{ID: "session-1", Limits: visitorLimits}},
		{"no id: the site's cap only", llm.Caller{}, Identity{}},
		{"a program's owner", llm.Caller{Owner: true}, Identity{Owner: true}},
		{"a key by name", llm.Caller{Key: "team"}, Identity{Key: "team", ID: "key:team", Source: FromKey, Chains: []string{"review"}, Limits: config.CallerLimits{PerDay: 500, Concurrent: 4}}},
		{"the admin token by name", llm.Caller{Key: AdminKey}, Identity{Key: AdminKey, ID: "owner:admin token", Owner: true, Source: FromAdminToken}},
	} {
		got, err := r.Of(tc.c)
		if err != nil || !sameIdentity(got, tc.want) {
			t.Errorf("%s: Of = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if _, err := r.Of(llm.Caller{Key: "nobody"}); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("an unknown key name: %v, want ErrUnknownKey", err)
	}
}
