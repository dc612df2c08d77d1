package caller

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// Fake keys, none of which may appear in an ID.
const (
	teamKey  = "FAKE_team_key_0123456789"
	botKey   = "FAKE_bot_key_0123456789"
	ownerKey = "FAKE_owner_key_0123456789"
	adminTok = "FAKE_admin_token_0123456789"
	vSecret  = "FAKE_visitor_secret_0123456789abcdef"
)

var testEnv = map[string]string{
	"TEAM_KEY": teamKey, "BOT_KEY": botKey, "OWNER_KEY": ownerKey,
	"ADMIN": adminTok, "VISITOR_SECRET": vSecret,
}

const chains = `
providers: {groq: {}}
chains:
  answer: {routes: [groq/llama-3.1-8b-instant], callers: {per_hour: 10}, deadline: 30m, attempt_timeout: 20s}
  review: {routes: [groq/llama-3.1-8b-instant]}
`

// plan compiles src (with chains) as tollfree would.
func plan(t *testing.T, src string) *config.Plan {
	t.Helper()
	p, err := config.Parse("t.yaml", []byte(src+chains), func(k string) string { return testEnv[k] })
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const keysConfig = `
admin_token: ${ADMIN}
gateway_keys:
  - {name: team, key: ${TEAM_KEY}, chains: [review], limits: {per_day: 500, concurrent: 4}}
  - {name: bot, key: ${BOT_KEY}, narrow: true, limits: {per_day: 2000}, user_limits: {per_hour: 15}}
  - {name: me, key: ${OWNER_KEY}, owner: true}
callers: {per_hour: 15, per_day: 40, site_day: 3000, reserve: 100}
`

// request returns a chat request from remote bearing auth (none if "").
func request(remote, auth string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	r.RemoteAddr = remote
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return r
}

// TestIdentifyKeys: a request is the key it bears, with that key's name,
// chains and limits; the admin token is the owner even where keys are
// required; a request with no key or a wrong one is refused.
func TestIdentifyKeys(t *testing.T) {
	r := New(plan(t, keysConfig), clock.NewFake(t0))
	for _, tc := range []struct {
		name, auth string
		want       Identity
		err        error
	}{
		{"team", "Bearer " + teamKey, Identity{Key: "team", ID: "key:team", Source: FromKey, Chains: []string{"review"}, Limits: config.CallerLimits{PerDay: 500, Concurrent: 4}}, nil},
		{"scheme in any case", "bearer  " + teamKey, Identity{Key: "team", ID: "key:team", Source: FromKey, Chains: []string{"review"}, Limits: config.CallerLimits{PerDay: 500, Concurrent: 4}}, nil},
		{"owner key", "Bearer " + ownerKey, Identity{Key: "me", ID: "key:me", Owner: true, Source: FromKey}, nil},
		{"admin token with keys set", "Bearer " + adminTok, Identity{Key: AdminKey, ID: "owner:admin token", Owner: true, Source: FromAdminToken}, nil},
		{"no key", "", Identity{}, ErrNoKey},
		{"not bearer", "Basic " + teamKey, Identity{}, ErrNoKey},
		{"unknown key", "Bearer " + teamKey + "x", Identity{}, ErrUnknownKey},
		{"key's prefix", "Bearer " + teamKey[:10], Identity{}, ErrUnknownKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Identify(request("203.0.113.7:1234", tc.auth))
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if tc.err != nil {
				if strings.Contains(err.Error(), teamKey[:10]) {
					t.Errorf("the error quotes the key")
				}
				return
			}
			if !sameIdentity(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func sameIdentity(a, b Identity) bool {
	return a.Key == b.Key && a.ID == b.ID && a.Owner == b.Owner && a.Source == b.Source &&
		strings.Join(a.Chains, ",") == strings.Join(b.Chains, ",") && (a.Chains == nil) == (b.Chains == nil) &&
		a.Limits == b.Limits && a.KeyLimits == b.KeyLimits
}

// TestNarrow: only a key that narrows may name end users by the user
// field, each counted apart under the user limits, all together under the
// key's; for any other caller a changed user field changes nothing.
func TestNarrow(t *testing.T) {
	r := New(plan(t, keysConfig), clock.NewFake(t0))
	bot, err := r.Identify(request("203.0.113.7:1", "Bearer "+botKey))
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := bot.Narrow("alice"), bot.Narrow("bob")
	if alice.ID == bob.ID || alice.ID == bot.ID {
		t.Errorf("users not counted apart: %q, %q, %q", alice.ID, bob.ID, bot.ID)
	}
	if alice.Limits != (config.CallerLimits{PerHour: 15}) || alice.KeyLimits != (config.CallerLimits{PerDay: 2000}) {
		t.Errorf("alice's limits = %+v, key's %+v", alice.Limits, alice.KeyLimits)
	}
	if again := alice.Narrow("mallory"); again.ID != alice.ID {
		t.Errorf("a narrowed identity narrowed again: %q", again.ID)
	}
	if long := bot.Narrow(strings.Repeat("u", 10000)); len(long.ID) > 100 {
		t.Errorf("a long user makes an ID of %d bytes", len(long.ID))
	}
	if bot.Narrow("").ID != bot.ID {
		t.Errorf("an empty user narrowed")
	}
	a1, a2 := r.Ask(alice, nil, 0), r.Ask(bob, nil, 0)
	if a1.Key != "bot" || a1.Key != a2.Key || a1.KeyLimits != alice.KeyLimits {
		t.Errorf("the key's users are not counted together: %q %q", a1.Key, a2.Key)
	}
	team, _ := r.Identify(request("203.0.113.7:1", "Bearer "+teamKey))
	if !sameIdentity(team.Narrow("alice"), team) || team.Narrow("bob").ID != "key:team" {
		t.Errorf("a key that does not narrow was narrowed")
	}
	open := New(plan(t, "callers: {per_hour: 15}\n"), clock.NewFake(t0))
	v, _ := open.Identify(request("203.0.113.7:1", ""))
	if !sameIdentity(v.Narrow("someone-else"), v) {
		t.Errorf("a visitor was narrowed by the user field")
	}
}

// TestIdentifyOpen: without keys every caller is a visitor with the
// callers: limits, whatever bearer token its SDK sends; the admin token is
// still the owner.
func TestIdentifyOpen(t *testing.T) {
	r := New(plan(t, "admin_token: ${ADMIN}\ncallers: {per_hour: 15, per_day: 40}\n"), clock.NewFake(t0))
	for _, auth := range []string{"", "Bearer sk-anything", "Bearer " + teamKey} {
		v, err := r.Identify(request("203.0.113.7:1234", auth))
		if err != nil || v.Source != FromAddress || v.ID != "ip:203.0.113.7" || v.Owner || v.Limits != (config.CallerLimits{PerHour: 15, PerDay: 40}) {
			t.Errorf("auth %q: got %+v, %v; want the visitor at 203.0.113.7", auth, v, err)
		}
	}
	o, err := r.Identify(request("203.0.113.7:1234", "Bearer "+adminTok))
	if err != nil || !o.Owner || o.Source != FromAdminToken {
		t.Errorf("admin token: got %+v, %v; want the owner", o, err)
	}
}

func TestAllows(t *testing.T) {
	r := New(plan(t, keysConfig), clock.NewFake(t0))
	team, _ := r.Identify(request("203.0.113.7:1", "Bearer "+teamKey))
	me, _ := r.Identify(request("203.0.113.7:1", "Bearer "+ownerKey))
	if team.Allows("answer") || !team.Allows("review") || !me.Allows("answer") {
		t.Errorf("team allows answer %v, review %v; owner allows answer %v", team.Allows("answer"), team.Allows("review"), me.Allows("answer"))
	}
}

// TestAsk: an identity and a chain make the quota.Ask: the caller's, the
// chain's and the site's limits, and a lease past the longest deadline.
func TestAsk(t *testing.T) {
	p := plan(t, keysConfig)
	r := New(p, clock.NewFake(t0))
	team, _ := r.Identify(request("203.0.113.7:1", "Bearer "+teamKey))
	a := r.Ask(team, p.Chains["answer"], 1200)
	if a.Caller != "key:team" || a.Limits != team.Limits || a.Chain != "answer" || a.ChainLimits != (config.CallerLimits{PerHour: 10}) ||
		a.SiteDay != 3000 || a.Reserve != 100 || a.Tokens != 1200 || a.Key != "" || a.Lease != time.Hour {
		t.Errorf("Ask = %+v", a)
	}
}

// TestIdentifyKeyAllocations: finding a key is one hash and one map
// lookup, with no more than the one allocation of hashing the token.
func TestIdentifyKeyAllocations(t *testing.T) {
	r := New(plan(t, keysConfig), clock.NewFake(t0))
	req := request("203.0.113.7:1", "Bearer "+teamKey)
	n := testing.AllocsPerRun(100, func() {
		if _, err := r.Identify(req); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Errorf("Identify of a key allocates %v times, want at most 1", n)
	}
}

// TestIDsHoldNoKey: no key appears in an ID or a Key name.
func TestIDsHoldNoKey(t *testing.T) {
	r := New(plan(t, keysConfig), clock.NewFake(t0))
	for _, k := range []string{teamKey, botKey, ownerKey, adminTok} {
		id, err := r.Identify(request("203.0.113.7:1", "Bearer "+k))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(id.ID+id.Key, k) {
			t.Errorf("an identity holds its key")
		}
	}
}

func BenchmarkIdentifyKey(b *testing.B) {
	p, err := config.Parse("t.yaml", []byte(keysConfig+chains), func(k string) string { return testEnv[k] })
	if err != nil {
		b.Fatal(err)
	}
	r := New(p, nil)
	req := request("203.0.113.7:1", "Bearer "+teamKey)
	for b.Loop() {
		if _, err := r.Identify(req); err != nil {
			b.Fatal(err)
		}
	}
}
