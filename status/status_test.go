package status

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

var t0 = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// statusConfig is three providers, Mistral without a key (its route is
// disabled), and a Groq model with a daily budget of two requests. The
// snapshot reads the plan, the store and the budgets: nothing is called.
const statusConfig = `
admin_token: ${TOLLFREE_ADMIN_TOKEN:-}
providers:
  groq:     {preset: groq, api_key: ${GROQ_API_KEY}, models: {"llama-3.1-8b-instant": {rpd: 2}}}
  gemini:   {preset: gemini, api_key: ${GEMINI_API_KEY}}
  cerebras: {preset: cerebras, api_key: ${CEREBRAS_API_KEY}}
  mistral:  {preset: mistral, api_key: ${MISTRAL_API_KEY}}
chains:
  answer:
    routes: [groq/llama-3.3-70b-versatile, gemini/gemini-2.5-flash-lite, cerebras/gpt-oss-120b, mistral/mistral-small-latest]
    attempt_timeout: 8s
    deadline: 25s
  small:
    routes: [groq/llama-3.1-8b-instant, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
  gem:
    routes: [gemini/gemini-2.5-flash]
`

// fixture is a Source over a memstore and a quota book on a fake clock.
type fixture struct {
	t     *testing.T
	clk   *clock.Fake
	plan  *config.Plan
	store state.Store
	book  *quota.Book
	src   *Source
}

func newFixture(t *testing.T, admin bool) *fixture {
	t.Helper()
	env := map[string]string{"GROQ_API_KEY": "gsk_test_groq_key_0001", "GEMINI_API_KEY": "AIzaTestGeminiKey0001", "CEREBRAS_API_KEY": "csk-test-cerebras-0001"}
	if admin {
		env["TOLLFREE_ADMIN_TOKEN"] = "adm_status_test_token_7f3a"
	}
	plan, err := config.Parse("status.yaml", []byte(statusConfig), func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	clk := clock.NewFake(t0)
	st, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	book := quota.New(quota.Options{Store: st, Clock: clk})
	return &fixture{t: t, clk: clk, plan: plan, store: st, book: book,
		src: New(Options{Plan: plan, Store: st, Budget: book, Clock: clk})}
}

// rest stores an automatic rest as the router does after a failure of
// class, for d from now.
func (f *fixture) rest(key, class string, d time.Duration) {
	f.t.Helper()
	now := f.clk.Now()
	if err := f.store.SetRest(context.Background(), state.Rest{Key: key, Class: class, Until: now.Add(d), Since: now, Reason: class}); err != nil {
		f.t.Fatal(err)
	}
}

// pause pauses key by hand, as the admin API does, for d (0: until lifted).
func (f *fixture) pause(key rest.Key, d time.Duration) {
	f.t.Helper()
	var until time.Time
	if d > 0 {
		until = f.clk.Now().Add(d)
	}
	if _, err := rest.Pause(context.Background(), f.store, key, f.clk.Now(), until, ""); err != nil {
		f.t.Fatal(err)
	}
}

// spend counts n requests against a route, as the router does for each
// attempt.
func (f *fixture) spend(routeID string, n int) {
	f.t.Helper()
	for range n {
		res, err := f.book.Reserve(context.Background(), f.plan.Routes[routeID], 10, 0)
		if err != nil {
			f.t.Fatalf("Reserve(%s): %v", routeID, err)
		}
		if err := f.book.Settle(context.Background(), res, 10, true); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) snapshot() *Snapshot {
	f.t.Helper()
	s, err := f.src.Snapshot(context.Background())
	if err != nil {
		f.t.Fatalf("Snapshot: %v", err)
	}
	return s
}

func routeOf(t *testing.T, s *Snapshot, id string) Route {
	t.Helper()
	for _, r := range s.Routes {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("route %s is not in the snapshot", id)
	return Route{}
}

// TestSnapshotStates: from the rests, pauses and budgets in the store, the
// snapshot tells each route's state, why, and until when, and each chain's
// state. (The same driven by real failures through the gateway, and the
// page showing what the JSON says: the end-to-end TestStatusStates.)
func TestSnapshotStates(t *testing.T) {
	const (
		big   = "groq/llama-3.3-70b-versatile"
		small = "groq/llama-3.1-8b-instant"
	)
	tests := []struct {
		name      string
		setup     func(f *fixture)
		route     string
		wantState string
		wantClass string
		wantKey   string        // the rest's key
		wantUntil time.Duration // from t0; 0: no until (a pause) or unchecked
		chain     string        // a chain whose state is checked
		wantChain string
	}{
		{name: "ready", setup: func(f *fixture) {},
			route: big, wantState: Ready, chain: "answer", wantChain: ChainReady},
		{name: "resting after a 503, for 30s", setup: func(f *fixture) { f.rest(big, "overloaded", 30*time.Second) },
			route: big, wantState: Resting, wantClass: "overloaded", wantKey: big, wantUntil: 30 * time.Second,
			chain: "answer", wantChain: ChainDegraded},
		{name: "resting for a setting of its own the model refuses", setup: func(f *fixture) { f.rest(big, "bad_config", 6*time.Hour) },
			route: big, wantState: Resting, wantClass: "bad_config", wantKey: big, wantUntil: 6 * time.Hour},
		{name: "a dead key rests the whole provider", setup: func(f *fixture) { f.rest("provider:groq", "auth", time.Hour) },
			route: small, wantState: Resting, wantClass: "auth", wantKey: "provider:groq", wantUntil: time.Hour,
			chain: "small", wantChain: ChainDegraded},
		{name: "out of today's quota after a daily 429", setup: func(f *fixture) { f.rest(big, "rate_day", 3*time.Hour) },
			route: big, wantState: Exhausted, wantClass: "rate_day", wantKey: big, wantUntil: 3 * time.Hour},
		{name: "out of today's quota by the day's budget", setup: func(f *fixture) { f.spend(small, 2) },
			route: small, wantState: Exhausted, wantClass: "budget", wantKey: "rpd"},
		{name: "paused by hand", setup: func(f *fixture) { f.pause(rest.RouteKey(big), 0) },
			route: big, wantState: Paused, wantClass: "paused", wantKey: big,
			chain: "answer", wantChain: ChainDegraded},
		{name: "paused by hand for a while", setup: func(f *fixture) { f.pause(rest.RouteKey(big), 2*time.Hour) },
			route: big, wantState: Paused, wantClass: "paused", wantKey: big, wantUntil: 2 * time.Hour},
		{name: "a paused provider pauses its routes", setup: func(f *fixture) { f.pause(rest.ProviderKey("groq"), 0) },
			route: small, wantState: Paused, wantClass: "paused", wantKey: "provider:groq"},
		{name: "disabled without a key", setup: func(f *fixture) {},
			route: "mistral/mistral-small-latest", wantState: Disabled, wantClass: "disabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, true)
			tt.setup(f)
			s := f.snapshot()
			r := routeOf(t, s, tt.route)
			if r.State != tt.wantState {
				t.Fatalf("%s: state = %q, want %q (rest %+v)", tt.route, r.State, tt.wantState, r.Rest)
			}
			if tt.wantState == Ready {
				if r.Rest != nil {
					t.Errorf("ready route has a rest: %+v", r.Rest)
				}
			} else {
				if r.Rest == nil {
					t.Fatalf("%s: no rest in the snapshot", tt.route)
				}
				if r.Rest.Class != tt.wantClass {
					t.Errorf("rest class = %q, want %q", r.Rest.Class, tt.wantClass)
				}
				if tt.wantKey != "" && r.Rest.Key != tt.wantKey {
					t.Errorf("rest key = %q, want %q", r.Rest.Key, tt.wantKey)
				}
				switch {
				case tt.wantUntil != 0:
					if r.Rest.Until == nil || !r.Rest.Until.Equal(t0.Add(tt.wantUntil)) {
						t.Errorf("until = %v, want %v", r.Rest.Until, t0.Add(tt.wantUntil))
					}
				case tt.wantState == Paused:
					if r.Rest.Until != nil {
						t.Errorf("a pause set by hand ends %v, want until lifted", r.Rest.Until)
					}
				case tt.wantState == Exhausted:
					if r.Rest.Until == nil || !r.Rest.Until.After(t0) {
						t.Errorf("exhausted until %v, want a reset after %v", r.Rest.Until, t0)
					}
				}
			}
			if tt.chain != "" {
				for _, c := range s.Chains {
					if c.Name == tt.chain && c.State != tt.wantChain {
						t.Errorf("chain %s: state %q, want %q", c.Name, c.State, tt.wantChain)
					}
				}
			}
		})
	}
}

// TestSnapshotBudgets: the snapshot shows each route's windows as the
// quota book counts them, with the limit of its preset or its own: a
// Gemini route's preset 20 requests a day, a Groq model's own rpd of 2,
// and a per-minute count.
func TestSnapshotBudgets(t *testing.T) {
	f := newFixture(t, false)
	f.spend("gemini/gemini-2.5-flash", 1)
	f.spend("groq/llama-3.1-8b-instant", 1)
	s := f.snapshot()
	if s.Admin {
		t.Errorf("admin = true without an admin token")
	}
	if rpd := routeOf(t, s, "gemini/gemini-2.5-flash").Budget.RPD; rpd.Limit != 20 || rpd.Used != 1 {
		t.Errorf("gemini/gemini-2.5-flash rpd = %d of %d, want 1 of the preset's 20", rpd.Used, rpd.Limit)
	}
	sm := routeOf(t, s, "groq/llama-3.1-8b-instant")
	if sm.Budget.RPD.Used != 1 || sm.Budget.RPD.Limit != 2 {
		t.Errorf("groq 8b requests today: %d of %d, want 1 of 2", sm.Budget.RPD.Used, sm.Budget.RPD.Limit)
	}
	if sm.Budget.RPM.Used != 1 || sm.Budget.RPM.Limit == 0 {
		t.Errorf("groq 8b requests this minute: %d of %d, want 1 of a known limit", sm.Budget.RPM.Used, sm.Budget.RPM.Limit)
	}
	if sm.State != Ready {
		t.Errorf("groq 8b is %s with one of its 2 requests left, want ready", sm.State)
	}
}
