// Package status owns the answer to "what is every chain, route and
// provider doing right now": a Snapshot, worked out on demand from the plan,
// the rests and pauses in the state store, the quota book's windows and the
// live figures of package live. The status page, /status.json, the admin
// API's replies and the metrics' gauges are all read from it, so they never
// disagree.
//
// A route is in exactly one state, the first that applies:
//
//	disabled   the route or its provider cannot be called (no key)
//	paused     a hand paused the route or its provider; until lifted, or
//	           until the time the pause was given
//	exhausted  today's quota is spent: a rate_day rest, or a daily window
//	           (requests or tokens per day, the route's or its provider's)
//	           counted full; until the reset
//	resting    an automatic rest of the route or its provider; until when
//	           and why (the failure class)
//	failing    nothing rests it, but most of its latest attempts failed:
//	           at least 2 of its last live.Lately judged ones, and more
//	           than half (Latest says how many, and how many of those lost
//	           a hedge race in silence). A route that hangs on every call
//	           but always loses the race to another is failing, not ready,
//	           in the moments its timeout rest has ended
//	ready      none of the above
//
// A provider's state is its own rest's when it has one (a dead key, a
// pause by hand). Otherwise it follows its enabled routes: ready when all
// are, partly (Partly) when some are not, and, when none is, the most
// urgent of theirs (see below): a provider whose only route rests is
// resting.
//
// The page leads the eye: RoutesByUrgency, ChainsByUrgency and
// ProvidersByUrgency list what needs a look first (failing, then resting
// and exhausted, then paused, then ready, disabled last; a chain down, then
// degraded), each group in the plan's order. The Snapshot's own lists, and
// so /status.json, keep the plan's order.
//
// A Snapshot holds no key, prompt or answer text: only names from the plan,
// failure classes, counts, times, and the redacted short reasons the router
// stored with each rest.
package status

import (
	"context"
	"fmt"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/pace"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/state"
	figs "github.com/tollfree/tollfree/status/figures"
	"github.com/tollfree/tollfree/status/live"
)

// The route and provider states: rest.State's labels (package rest decides
// them; a daily budget window counted full is added here).
const (
	Ready     = string(rest.Ready)
	Resting   = string(rest.Resting)
	Paused    = string(rest.Paused)
	Exhausted = string(rest.Exhausted)
	Disabled  = string(rest.Disabled)
	// Failing: nothing rests the route, but most of its latest attempts
	// failed (see the package doc).
	Failing = "failing"
	// Partly is a provider some of whose enabled routes are not ready.
	Partly = "partly"
)

// failingAt is how many of its latest judged attempts a route must have
// failed, at least, before it can be failing: one failure is a blip.
const failingAt = 2

// The chain states.
const (
	ChainReady    = "ready"    // its first enabled route is ready
	ChainDegraded = "degraded" // a later route is ready
	ChainDown     = "down"     // no route is ready (each rests or is failing)
)

// ClassPaused is the Class of a rest set by hand (rest.Rest.Label).
const ClassPaused = "paused"

// Budget is what the status needs of the quota book; *quota.Book
// implements it.
type Budget interface {
	Left(ctx context.Context, r *config.Route) (quota.Left, error)
}

// Pacer is what the status needs of the pacer; *pace.Pacer implements it.
type Pacer interface {
	Snapshot(chain string) *pace.Snapshot
}

// Options configure a Source. Plan and Store are required.
type Options struct {
	Plan  *config.Plan
	Store state.Store
	// Budget may be nil: no windows are shown.
	Budget Budget
	// Stats may be nil: no rates or latencies are shown.
	Stats *live.Stats
	// Pacer may be nil: no pace is shown.
	Pacer Pacer
	// Clock defaults to the wall clock.
	Clock clock.Clock
}

// Source works out Snapshots. It is safe for concurrent use and does
// nothing until asked.
type Source struct {
	o Options
}

// New returns a Source.
func New(o Options) *Source {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	return &Source{o: o}
}

// Plan returns the plan the source describes.
func (s *Source) Plan() *config.Plan { return s.o.Plan }

// Snapshot is everything the status page shows. Its JSON form is
// /status.json.
type Snapshot struct {
	Now time.Time `json:"now"`
	// Admin reports whether the admin actions are on (an admin token is
	// configured).
	Admin     bool       `json:"admin"`
	Chains    []Chain    `json:"chains"`
	Routes    []Route    `json:"routes"`
	Providers []Provider `json:"providers"`
	// Problems lists what could not be read (the state store down): the
	// snapshot is then partial.
	Problems []string `json:"problems,omitempty"`
}

// Chain is one chain.
type Chain struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Routes are the chain's route IDs, in order.
	Routes []string `json:"routes"`
	// Ready is how many of its routes are ready.
	Ready    int    `json:"ready"`
	Fallback string `json:"fallback"`
	Figures
	Answered   uint64 `json:"answered"`
	Unanswered uint64 `json:"unanswered"`
	Failovers  uint64 `json:"failovers"`
	Cached     uint64 `json:"cached"`
	// StreamsRescued counts the streams that broke after their first token
	// and that a later route finished (issue 13); each is also answered.
	StreamsRescued uint64 `json:"streams_rescued"`
	// Pace is the chain's pacing of its day caps (issue 31); absent with
	// pace: off.
	Pace *ChainPace `json:"pace,omitempty"`
}

// ChainPace is a chain's pacing of its day-capped routes (package pace).
type ChainPace struct {
	// Forecast reports that a forecast was made; until then (the chain's
	// first requests) nothing is held and the figures below are absent.
	Forecast bool `json:"forecast"`
	// At is when the forecast was made.
	At *time.Time `json:"at,omitempty"`
	// Binding reports that the forecast says the day caps will run out
	// before their resets: routes ahead of their pace are held back.
	Binding bool `json:"binding"`
	// Learned reports a forecast from past days; false: from the day's
	// own rate so far.
	Learned bool `json:"learned"`
	// AnsweredToday is the chain's answers by a model since 00:00 UTC.
	AnsweredToday int64 `json:"answered_today"`
	// Expected is the demand forecast for the rest of the UTC day, in
	// requests.
	Expected float64 `json:"expected_today"`
	// CapsLeft is what the day-capped routes have left, in requests (a
	// token cap divided by a request's tokens).
	CapsLeft float64 `json:"day_caps_left"`
	// CapsLast is when the day caps run out at the rate they were spent;
	// absent when they last until their resets.
	CapsLast *time.Time `json:"day_caps_last_until,omitempty"`
	// Held lists the routes ahead of their pace now.
	Held []string `json:"held,omitempty"`
}

// RoutePace is a day-capped route's spend against its pace line in one
// chain.
type RoutePace struct {
	Chain string `json:"chain"`
	// Cap, Used and Line are in requests: the cap, what was spent of it,
	// and what the pace allows spent by now.
	Cap     float64 `json:"cap"`
	Used    float64 `json:"used"`
	Line    float64 `json:"line"`
	Binding bool    `json:"binding"`
	Held    bool    `json:"held"`
	// Resets is when the cap's window ends.
	Resets *time.Time `json:"resets,omitempty"`
}

// Figures are the rates and latencies over recent traffic (see package
// stats for what each means). Absent rates mean no traffic yet.
type Figures struct {
	Recent       int      `json:"recent"`
	SuccessRate  *float64 `json:"success_rate,omitempty"`
	FailoverRate *float64 `json:"failover_rate,omitempty"`
	P50MS        int64    `json:"p50_ms"`
	P95MS        int64    `json:"p95_ms"`
	Samples      int      `json:"latency_samples"`
}

// Rest is why a route or provider is not ready, and until when.
type Rest struct {
	// Key is the rest's key: the route ID, "provider:<name>", or the
	// budget window ("rpd", "provider:tpd") that is spent.
	Key   string `json:"key"`
	Class string `json:"class"`
	// Until is when it ends; absent: until a hand lifts it.
	Until *time.Time `json:"until,omitempty"`
	Since *time.Time `json:"since,omitempty"`
	// Reason is the short, redacted reason stored with the rest.
	Reason string `json:"reason,omitempty"`
}

// Window is one budget window: Limit 0 means none is known.
type Window struct {
	Used    int64      `json:"used"`
	Limit   int64      `json:"limit"`
	Resets  *time.Time `json:"resets,omitempty"`
	Learned bool       `json:"learned,omitempty"`
}

// Full reports whether the window has a limit and has reached it.
func (w Window) Full() bool { return w.Limit > 0 && w.Used >= w.Limit }

// Fraction is Used over Limit, between 0 and 1; 0 without a limit.
func (w Window) Fraction() float64 {
	if w.Limit <= 0 {
		return 0
	}
	return min(float64(w.Used)/float64(w.Limit), 1)
}

// Windows are the windows of a route or provider: the minute and the day
// always, the hour and the calendar month only where a limit is set.
type Windows struct {
	RPM  Window `json:"rpm"`
	RPD  Window `json:"rpd"`
	TPM  Window `json:"tpm"`
	TPD  Window `json:"tpd"`
	RPH  Window `json:"rph,omitzero"`
	TPH  Window `json:"tph,omitzero"`
	TPMo Window `json:"tpmo,omitzero"`
	RPMo Window `json:"rpmo,omitzero"`
}

// Any reports whether any window has a limit or a count.
func (w Windows) Any() bool {
	for _, x := range [...]Window{w.RPM, w.RPD, w.TPM, w.TPD, w.RPH, w.TPH, w.TPMo, w.RPMo} {
		if x.Limit > 0 || x.Used > 0 {
			return true
		}
	}
	return false
}

// Route is one route.
type Route struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	State    string `json:"state"`
	// Rest says why the route is not ready (nil when ready); Disabled
	// routes carry their reason here with class "disabled".
	Rest *Rest `json:"rest,omitempty"`
	// Budget is the route's own windows; ProviderBudget its provider's
	// account-wide ones.
	Budget         Windows `json:"budget"`
	ProviderBudget Windows `json:"provider_budget"`
	Figures
	Attempts uint64 `json:"attempts"`
	OK       uint64 `json:"ok"`
	// Cached counts the route's answers served again from the cache, at
	// no call (not attempts).
	Cached uint64 `json:"cached,omitempty"`
	// Latest counts its last live.Lately judged attempts (absent before
	// the first): how many failed, and how many of those lost a hedge race
	// in silence.
	Latest *Latest `json:"latest,omitempty"`
	// SilentLosses counts the hedge races the route lost having sent
	// nothing: failures, each a strike toward a timeout rest.
	SilentLosses uint64 `json:"silent_losses"`
	// SchemaFailures counts the answers that broke what their request
	// asked (outcome invalid: not JSON, or against its response_format
	// schema or a tool's parameters), each repaired or handed on.
	SchemaFailures uint64 `json:"schema_failures"`
	// LastError is the class of the route's last failed attempt, and when.
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
	Chains      []string   `json:"chains"`
	// PoliteRetries counts the polite retries of a blip made on the route
	// (the same route called once more after the wait it asked for), and
	// PoliteRetriesAnswered those that answered.
	PoliteRetries         uint64 `json:"polite_retries"`
	PoliteRetriesAnswered uint64 `json:"polite_retries_answered"`
	// StreamsRescued counts the broken streams the route finished (it
	// answered a part after the first), and RescuedBy the same by how it
	// continued them: "prefix", "instruct", "afresh" (nothing had been
	// streamed yet); RescuedBy is absent when there are none.
	StreamsRescued uint64            `json:"streams_rescued"`
	RescuedBy      map[string]uint64 `json:"rescued_by,omitempty"`
	// Pace is the route's spend against its pace line, in each chain that
	// paces it (a day-capped route); absent otherwise.
	Pace []RoutePace `json:"pace,omitempty"`
}

// Latest counts a route's latest judged attempts (live.Latest).
type Latest struct {
	Judged int `json:"judged"`
	Failed int `json:"failed"`
	Silent int `json:"silent"`
}

// Provider is one provider account.
type Provider struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Rest is the provider's own rest (a dead key, a pause by hand); nil
	// when its state follows its routes'.
	Rest *Rest `json:"rest,omitempty"`
	// Routes are its route IDs in the plan.
	Routes []string `json:"routes"`
	// Enabled is how many of its routes can be called (not disabled), and
	// Ready how many of those are ready.
	Enabled int `json:"enabled"`
	Ready   int `json:"ready"`
	// NotReady is the state its enabled routes that are not ready share
	// ("resting"), or "not ready" when they differ; absent when all are
	// ready.
	NotReady string `json:"not_ready,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// restOf is the JSON view of a standing: nil when ready.
func restOf(st rest.Standing) *Rest {
	if st.State == rest.Ready {
		return nil
	}
	r := st.Rest
	return &Rest{Key: r.Key.String(), Class: st.Label(), Until: timePtr(r.Until), Since: timePtr(r.Since), Reason: r.Reason}
}

// Snapshot works out the state of everything now. A store that cannot
// answer leaves a partial snapshot with a Problem; the error is returned
// only when ctx ended.
func (s *Source) Snapshot(ctx context.Context) (*Snapshot, error) {
	p := s.o.Plan
	now := s.o.Clock.Now()
	snap := &Snapshot{Now: now, Admin: p.AdminToken != ""}
	rests, err := rest.Load(ctx, s.o.Store, now)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("status: reading rests: %w", ctx.Err())
		}
		snap.Problems = append(snap.Problems, "rests and pauses could not be read from the state store")
	}
	chainsOf := make(map[string][]string, len(p.Routes))
	for _, name := range p.ChainOrder {
		for _, rt := range p.Chains[name].Routes {
			chainsOf[rt.ID] = append(chainsOf[rt.ID], name)
		}
	}
	byID := make(map[string]*Route, len(p.RouteOrder))
	budgetFailed := false
	snap.Routes = make([]Route, 0, len(p.RouteOrder))
	for _, id := range p.RouteOrder {
		rt := p.Routes[id]
		if rt == nil {
			continue
		}
		r := Route{ID: id, Provider: rt.Provider.Name, Model: rt.Model, Chains: chainsOf[id]}
		if s.o.Budget != nil {
			left, err := s.o.Budget.Left(ctx, rt)
			if err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("status: reading budgets: %w", ctx.Err())
				}
				budgetFailed = true
			}
			r.Budget, r.ProviderBudget = windows(left.Route), windows(left.Provider)
		}
		s.figures(&r)
		r.State, r.Rest = routeState(rt, r, rests)
		snap.Routes = append(snap.Routes, r)
	}
	if budgetFailed {
		snap.Problems = append(snap.Problems, "budget counts could not be read from the state store")
	}
	for i := range snap.Routes {
		byID[snap.Routes[i].ID] = &snap.Routes[i]
	}
	for _, name := range p.ProviderOrder {
		pr := p.Providers[name]
		if pr == nil {
			continue
		}
		out := Provider{Name: name}
		for _, id := range p.RouteOrder {
			if p.Routes[id].Provider == pr {
				out.Routes = append(out.Routes, id)
			}
		}
		st := rests.OfProvider(pr)
		out.State, out.Rest = string(st.State), restOf(st)
		fromRoutes(&out, byID)
		snap.Providers = append(snap.Providers, out)
	}
	for _, name := range p.ChainOrder {
		ch := p.Chains[name]
		c := Chain{Name: name, State: ChainDown, Fallback: fallbackName(ch)}
		firstEnabled := true
		for _, rt := range ch.Routes {
			c.Routes = append(c.Routes, rt.ID)
			r := byID[rt.ID]
			if r == nil || r.State == Disabled {
				continue
			}
			if r.State == Ready {
				c.Ready++
				if firstEnabled {
					c.State = ChainReady
				} else if c.State == ChainDown {
					c.State = ChainDegraded
				}
			}
			firstEnabled = false
		}
		if s.o.Stats != nil {
			if st, ok := s.o.Stats.Chain(name); ok {
				c.Figures = figures(st.Recent, st.HasRates, st.SuccessRate, st.FailoverRate, st.Latency)
				c.Answered, c.Unanswered, c.Failovers, c.Cached = st.Answered, st.Unanswered, st.Failovers, st.Cached
				c.StreamsRescued = st.Rescued
			}
		}
		c.Pace = s.pace(ch, byID)
		snap.Chains = append(snap.Chains, c)
	}
	return snap, nil
}

// pace is chain ch's pacing, with each day-capped route's line added to
// its card (byID); nil with pace: off or no pacer.
func (s *Source) pace(ch *config.Chain, byID map[string]*Route) *ChainPace {
	if s.o.Pacer == nil || !ch.Pace {
		return nil
	}
	ps := s.o.Pacer.Snapshot(ch.Name)
	if ps == nil {
		return &ChainPace{}
	}
	out := &ChainPace{Forecast: true, At: timePtr(ps.At), Binding: ps.Binding, Learned: ps.Learned,
		AnsweredToday: ps.AnsweredToday, Expected: ps.Expected, CapsLeft: ps.CapsLeft, CapsLast: timePtr(ps.CapsLast)}
	for _, rp := range ps.Routes {
		held := rp.Held()
		if held {
			out.Held = append(out.Held, rp.Route)
		}
		if r := byID[rp.Route]; r != nil && rp.DayCapped {
			r.Pace = append(r.Pace, RoutePace{Chain: ch.Name, Cap: rp.Cap, Used: rp.Used, Line: rp.Line, Binding: rp.Binding, Held: held, Resets: timePtr(rp.Reset)})
		}
	}
	return out
}

func (s *Source) figures(r *Route) {
	if s.o.Stats == nil {
		return
	}
	st, ok := s.o.Stats.Route(r.ID)
	if !ok {
		return
	}
	r.Figures = figures(st.Recent, st.HasRates, st.SuccessRate, st.FailoverRate, st.Latency)
	r.Attempts, r.OK, r.SilentLosses, r.SchemaFailures = st.Attempts, st.OK, st.SilentLosses, st.SchemaFailures
	r.Cached = st.Cached
	r.PoliteRetries, r.PoliteRetriesAnswered = st.PoliteRetries, st.PoliteRetriesAnswered
	for i, n := range st.Rescues {
		if n > 0 {
			if r.RescuedBy == nil {
				r.RescuedBy = make(map[string]uint64, len(st.Rescues))
			}
			r.RescuedBy[figs.Methods[i]] = n
			r.StreamsRescued += n
		}
	}
	if !st.LastErrorAt.IsZero() {
		r.LastError, r.LastErrorAt = st.LastError.String(), timePtr(st.LastErrorAt)
	}
	if st.Latest.Judged > 0 {
		r.Latest = &Latest{Judged: st.Latest.Judged, Failed: st.Latest.Failed, Silent: st.Latest.Silent}
	}
}

// failingNow reports whether a route's latest attempts make it failing
// (see the package doc).
func failingNow(l *Latest) bool {
	return l != nil && l.Failed >= failingAt && 2*l.Failed > l.Judged
}

// fromRoutes counts a provider's enabled and ready routes and, when the
// provider has no rest of its own, derives its state from theirs.
func fromRoutes(pr *Provider, byID map[string]*Route) {
	shared, worst := "", ""
	for _, id := range pr.Routes {
		r := byID[id]
		if r == nil || r.State == Disabled {
			continue
		}
		pr.Enabled++
		if r.State == Ready {
			pr.Ready++
			continue
		}
		switch {
		case shared == "":
			shared, worst = r.State, r.State
		case shared != r.State:
			shared = "not ready"
		}
		if urgency(r.State) < urgency(worst) {
			worst = r.State
		}
	}
	pr.NotReady = shared
	switch {
	case pr.State != Ready || pr.Ready == pr.Enabled:
	case pr.Ready > 0:
		pr.State = Partly
	default:
		pr.State = worst
	}
}

func figures(recent int, has bool, success, failover float64, lat live.Latency) Figures {
	f := Figures{Recent: recent, P50MS: lat.P50.Milliseconds(), P95MS: lat.P95.Milliseconds(), Samples: lat.Samples}
	if has {
		f.SuccessRate, f.FailoverRate = &success, &failover
	}
	return f
}

// routeState decides a route's state (see the package doc): what package
// rest says, except that a daily budget window counted full exhausts a
// route that rest finds resting or ready, and that a ready route whose
// latest attempts mostly failed is failing. r's figures must be filled.
func routeState(rt *config.Route, r Route, rests rest.Table) (string, *Rest) {
	st := rests.Of(rt)
	if st.State == rest.Ready || st.State == rest.Resting {
		if w := spentWindow(r); w != nil {
			return Exhausted, w
		}
	}
	if st.State == rest.Ready && failingNow(r.Latest) {
		return Failing, nil
	}
	return string(st.State), restOf(st)
}

// spentWindow is the first of a route's daily or monthly windows, its own
// then its provider's, that is counted full; nil when none is.
func spentWindow(r Route) *Rest {
	for _, w := range []struct {
		key, when string
		w         Window
	}{
		{"rpd", "today's", r.Budget.RPD}, {"tpd", "today's", r.Budget.TPD},
		{"provider:rpd", "today's", r.ProviderBudget.RPD}, {"provider:tpd", "today's", r.ProviderBudget.TPD},
		{"tpmo", "this month's", r.Budget.TPMo}, {"provider:tpmo", "this month's", r.ProviderBudget.TPMo},
		{"rpmo", "this month's", r.Budget.RPMo}, {"provider:rpmo", "this month's", r.ProviderBudget.RPMo},
	} {
		if w.w.Full() {
			return &Rest{Key: w.key, Class: "budget", Until: w.w.Resets, Reason: w.when + " " + w.key + " budget is spent"}
		}
	}
	return nil
}

func windows(b quota.Budget) Windows {
	w := func(x quota.Window) Window {
		return Window{Used: x.Used, Limit: x.Limit, Resets: timePtr(x.Resets), Learned: x.Learned}
	}
	out := Windows{RPM: w(b.RPM), RPD: w(b.RPD), TPM: w(b.TPM), TPD: w(b.TPD)}
	// The hour and month appear only where counted, so that a route
	// without them keeps its JSON.
	for _, x := range [...]struct {
		from quota.Window
		to   *Window
	}{{b.RPH, &out.RPH}, {b.TPH, &out.TPH}, {b.TPMo, &out.TPMo}, {b.RPMo, &out.RPMo}} {
		if x.from.Limit > 0 || x.from.Used > 0 {
			*x.to = w(x.from)
		}
	}
	return out
}

// fallbackName is what answers when no route of ch can: a site
// assistant's fallback is always a search of its content, whatever the
// chain's fallback says (issue 34: an assistant chain read "error" while
// it answered mode: search).
func fallbackName(ch *config.Chain) string {
	if ch.Assistant != nil {
		return "search"
	}
	switch ch.Fallback.Kind {
	case config.FallbackMessage:
		return "message"
	case config.FallbackSearch:
		return "search"
	}
	return "error"
}
