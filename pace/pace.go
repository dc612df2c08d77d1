package pace

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/state"
)

const (
	// refreshEvery is how often a chain's forecast is worked out again,
	// off the request path.
	refreshEvery = 15 * time.Second
	// flushEvery is how often the demand counted in memory is written to
	// the Store.
	flushEvery = 10 * time.Second
	// historyDays is how many past days the profile averages.
	historyDays = 7
	// storeWait bounds a refresh's or a flush's Store calls.
	storeWait = 2 * time.Second
	// minElapsed is the shortest time a fresh install's rate is taken over.
	minElapsed = 15 * time.Minute
	// defaultTokens is a request's tokens before any was counted.
	defaultTokens = 1000
	// minDemand is the fewest requests counted before a forecast holds
	// anything back: a rate from two requests is noise.
	minDemand = 10
)

// Lefter tells what a route has left in each window; *quota.Book
// implements it.
type Lefter interface {
	Left(ctx context.Context, r *config.Route) (quota.Left, error)
}

// Options configure a Pacer.
type Options struct {
	// Store keeps the demand profile. Required.
	Store state.Store
	// Budget tells what each route has left. Required.
	Budget Lefter
	// Clock tells the time. Default clock.Real.
	Clock clock.Clock
}

// Pacer keeps each chain's demand profile and forecast, and holds back the
// day-capped routes that are ahead of their pace. It is safe for
// concurrent use; Close waits for its writes.
type Pacer struct {
	store  state.Store
	later  state.Deferrer
	budget Lefter
	clock  clock.Clock

	mu        sync.Mutex
	pending   map[pendKey]*counts // demand not yet written
	lastFlush time.Time
	// input is, by chain, the weighted mean share of a request's tokens
	// that is its prompt (see routeTokens).
	input  map[string]float64
	chains sync.Map // chain name -> *chainState, read without a lock

	wg sync.WaitGroup
}

type pendKey struct {
	chain string
	hour  int64
}

type counts struct{ req, tok, ok int64 }

type chainState struct {
	refreshing  atomic.Bool
	lastRefresh atomic.Int64 // unix nanoseconds
	snap        atomic.Pointer[Snapshot]
}

// New returns a Pacer.
func New(o Options) *Pacer {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	p := &Pacer{store: o.Store, budget: o.Budget, clock: o.Clock, pending: map[pendKey]*counts{}, input: map[string]float64{}}
	p.later, _ = state.Find[state.Deferrer](o.Store)
	p.lastFlush = o.Clock.Now()
	return p
}

// Close writes the demand counted since the last write and waits for the
// writes and forecasts under way.
func (p *Pacer) Close() {
	p.wg.Wait()
	p.flush()
}

func (p *Pacer) state(chain string) *chainState {
	if v, ok := p.chains.Load(chain); ok {
		return v.(*chainState)
	}
	v, _ := p.chains.LoadOrStore(chain, &chainState{})
	return v.(*chainState)
}

// Arrived counts one request asking chain ch, of about tokens (its input,
// prompt of them, and the answer it may produce), in the chain's demand
// profile. It costs a lock held for an add: the counts are written to the
// Store in batches, off the request path, and the chain's forecast is
// worked out again on a goroutine when it is older than refreshEvery.
func (p *Pacer) Arrived(ch *config.Chain, prompt, tokens int) {
	if ch == nil || !ch.Pace {
		return
	}
	now := p.clock.Now()
	hour := now.Unix() / 3600
	p.mu.Lock()
	c := p.pendingLocked(ch.Name, hour)
	c.req++
	c.tok += int64(max(tokens, 0))
	if tokens > 0 {
		x := min(float64(max(prompt, 0))/float64(tokens), 1)
		if m, ok := p.input[ch.Name]; ok {
			x = m + inputWeight*(x-m)
		}
		p.input[ch.Name] = x
	}
	flush := now.Sub(p.lastFlush) >= flushEvery
	if flush {
		p.lastFlush = now
	}
	p.mu.Unlock()
	cs := p.state(ch.Name)
	last := cs.lastRefresh.Load()
	due := cs.snap.Load() == nil || now.UnixNano()-last >= int64(refreshEvery)
	if due && cs.refreshing.CompareAndSwap(false, true) {
		cs.lastRefresh.Store(now.UnixNano())
		p.wg.Go(func() {
			defer cs.refreshing.Store(false)
			p.flush()
			p.refresh(ch, cs)
		})
	} else if flush {
		p.wg.Go(p.flush)
	}
}

// Answered counts an answer by a model on ch, for the status page's
// "answered today"; written with the demand.
func (p *Pacer) Answered(ch *config.Chain) {
	if ch == nil || !ch.Pace {
		return
	}
	hour := p.clock.Now().Unix() / 3600
	p.mu.Lock()
	p.pendingLocked(ch.Name, hour).ok++
	p.mu.Unlock()
}

// pendingLocked returns the counts of chain's hour not yet written. p.mu
// must be held.
func (p *Pacer) pendingLocked(chain string, hour int64) *counts {
	k := pendKey{chain, hour}
	c := p.pending[k]
	if c == nil {
		c = &counts{}
		p.pending[k] = c
	}
	return c
}

// Refresh works out ch's forecast now, on the caller's goroutine: for
// tests and the status page's first look.
func (p *Pacer) Refresh(ch *config.Chain) {
	if ch == nil || !ch.Pace {
		return
	}
	cs := p.state(ch.Name)
	p.flush()
	p.refresh(ch, cs)
}

// Snapshot returns chain's latest forecast, nil when none was made yet.
func (p *Pacer) Snapshot(chain string) *Snapshot {
	v, ok := p.chains.Load(chain)
	if !ok {
		return nil
	}
	return v.(*chainState).snap.Load()
}

// Order returns order (the chain's routes in the order the walk would try
// them) with the day-capped routes that are ahead of their pace moved
// after the others, each group in its own order: a route within pace is
// never put behind another. It returns order itself when nothing is held
// (the forecast says the caps will not bind, or no forecast was made yet).
func (p *Pacer) Order(ch *config.Chain, order []*config.Route, tokens int) []*config.Route {
	if ch == nil || !ch.Pace {
		return order
	}
	s := p.Snapshot(ch.Name)
	if s == nil || !s.Binding {
		return order
	}
	var held [64]bool // a chain of more routes paces its first 64
	n := 0
	for i, rt := range order[:min(len(order), len(held))] {
		if s.held(rt.ID, tokens) {
			held[i] = true
			n++
		}
	}
	if n == 0 {
		return order
	}
	out := make([]*config.Route, 0, len(order))
	for i, rt := range order {
		if i >= len(held) || !held[i] {
			out = append(out, rt)
		}
	}
	from := len(out)
	for i, rt := range order[:min(len(order), len(held))] {
		if held[i] {
			out = append(out, rt)
		}
	}
	s.byCost(out[from:], tokens)
	return out
}

// byCost orders held routes (all ahead of their pace) by what the request
// costs each of what it has left: one request of a request cap, its
// tokens of a token cap. A long question then goes to a cap counted in
// requests, where it costs what a short one does, and a short one to a cap
// counted in tokens, which answers more of them: the optimum of tools/sim
// spends Groq's daily tokens on the shortest questions. Ties keep the
// chain's order.
func (s *Snapshot) byCost(held []*config.Route, tokens int) {
	if len(held) < 2 || len(held) > 64 {
		return
	}
	type costed struct {
		rt   *config.Route
		cost float64
	}
	var buf [64]costed // a request's held routes, each cost worked out once
	cs := buf[:len(held)]
	for i, rt := range held {
		cs[i] = costed{rt, s.cost(rt, tokens)}
	}
	slices.SortStableFunc(cs, func(a, b costed) int { return cmp.Compare(a.cost, b.cost) })
	for i := range cs {
		held[i] = cs[i].rt
	}
}

// cost is what a request of tokens costs route rt of what it has left
// (see byCost); +Inf when it has nothing left or is not paced.
func (s *Snapshot) cost(rt *config.Route, tokens int) float64 {
	rp := s.route(rt.ID)
	if rp == nil {
		return math.Inf(1)
	}
	left := rp.Cap - rp.Used - float64(rp.picked.Load())
	if left <= 0 {
		return math.Inf(1)
	}
	return s.size(rp, tokens) / left
}

// size is what a request of tokens counts of rp's cap, in requests: one
// on a cap counted in requests, its tokens in average requests on a cap
// counted in tokens.
func (s *Snapshot) size(rp *RoutePace, tokens int) float64 {
	if rp.TokenCap && s.Tokens > 0 && tokens > 0 {
		return float64(tokens) / s.Tokens
	}
	return 1
}

// Picked notes that route rt of chain ch was reserved for a request: the
// forecast's count of it grows until the next forecast reads the Store's.
func (p *Pacer) Picked(ch *config.Chain, rt *config.Route) {
	if ch == nil || !ch.Pace {
		return
	}
	if s := p.Snapshot(ch.Name); s != nil {
		if rp := s.route(rt.ID); rp != nil {
			rp.picked.Add(1)
		}
	}
}

// Demand counters: one per chain and kind, a slot per hour (unix hours),
// kept historyDays+1 days.
func demandKey(chain, what string) string { return "pace|" + chain + "|" + what }

func demandSpend(key string, hour, amount int64) state.Spend {
	return state.Spend{Key: key, Slot: hour, Slots: 1, Amount: amount, TTL: (historyDays + 1) * 24 * time.Hour, KeyHash: state.HashKey(key)}
}

// flush writes the demand counted in memory, queued on a Store that
// batches its adds.
func (p *Pacer) flush() {
	p.mu.Lock()
	if len(p.pending) == 0 {
		p.mu.Unlock()
		return
	}
	pend := p.pending
	p.pending = map[pendKey]*counts{}
	p.mu.Unlock()
	spends := make([]state.Spend, 0, 2*len(pend))
	for k, c := range pend {
		spends = append(spends, demandSpend(demandKey(k.chain, "req"), k.hour, c.req), demandSpend(demandKey(k.chain, "tok"), k.hour, c.tok),
			demandSpend(demandKey(k.chain, "ok"), k.hour, c.ok))
	}
	if p.later != nil {
		p.later.AddLater(spends)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	_ = p.store.Add(ctx, spends) // a lost hour of demand only blurs the profile
}

var errShortSums = errors.New("pace: the store answered fewer sums than asked")

// profile is a chain's demand by hour: requests expected in each UTC hour
// of the day, and the tokens of a request.
type profile struct {
	perHour [24]float64
	tokens  float64
	// today is the requests counted since the start of the UTC day;
	// learned is false for a fresh install's flat rate.
	learned bool
	total   float64 // requests counted in the history read
	// answered is the answers by a model counted since the UTC day began.
	answered int64
}

// at returns the requests expected per hour at t.
func (pr *profile) at(t time.Time) float64 { return pr.perHour[t.UTC().Hour()] }

// between returns the requests expected in [from, to).
func (pr *profile) between(from, to time.Time) float64 {
	return integrate(from, to, pr.at)
}

// integrate sums f (per hour, constant within each UTC hour) over [from,
// to).
func integrate(from, to time.Time, f func(time.Time) float64) float64 {
	sum := 0.0
	for t := from; t.Before(to); {
		next := t.Truncate(time.Hour).Add(time.Hour)
		if next.After(to) {
			next = to
		}
		sum += f(t) * next.Sub(t).Hours()
		t = next
	}
	return sum
}

// readProfile reads chain's demand of the last historyDays days: each hour
// of the day is the mean of the days that have it; with less than a day of
// counts (a fresh install), every hour is the day's rate so far.
func (p *Pacer) readProfile(ctx context.Context, chain string, now time.Time) (*profile, error) {
	hour := now.Unix() / 3600
	n := historyDays*24 + 1
	q := make([]state.Spend, 0, 2*n)
	rk, tk, ok := demandKey(chain, "req"), demandKey(chain, "tok"), demandKey(chain, "ok")
	for i := range n {
		q = append(q, demandSpend(rk, hour-int64(i), 0))
	}
	for i := range n {
		q = append(q, demandSpend(tk, hour-int64(i), 0))
	}
	today := int(hour % 24) // hours of the UTC day before the current one
	for i := range today + 1 {
		q = append(q, demandSpend(ok, hour-int64(i), 0))
	}
	sums, err := p.store.Sums(ctx, q)
	if err != nil {
		return nil, err
	}
	if len(sums) < 2*n+today+1 {
		return nil, errShortSums
	}
	req, tok := sums[:n], sums[n:2*n]
	var answered int64
	for _, v := range sums[2*n:] {
		answered += v
	}
	first := -1 // the oldest hour (i hours ago) with demand
	var totalReq, totalTok float64
	for i := range n {
		if req[i] > 0 {
			first = i
		}
		totalReq += float64(req[i])
		totalTok += float64(tok[i])
	}
	pr := &profile{tokens: defaultTokens, total: totalReq, answered: answered}
	if totalReq > 0 && totalTok > 0 {
		pr.tokens = totalTok / totalReq
	}
	if first < 0 {
		return pr, nil
	}
	if first < 24 {
		// A fresh install: the rate since the first hour counted.
		start := time.Unix((hour-int64(first))*3600, 0)
		elapsed := max(now.Sub(start), minElapsed).Hours()
		for h := range pr.perHour {
			pr.perHour[h] = totalReq / elapsed
		}
		return pr, nil
	}
	pr.learned = true
	var sum, days [24]float64
	for i := 1; i <= first; i++ { // the hours before the current one
		h := time.Unix((hour-int64(i))*3600, 0).UTC().Hour()
		sum[h] += float64(req[i])
		days[h]++
	}
	for h := range pr.perHour {
		if days[h] > 0 {
			pr.perHour[h] = sum[h] / days[h]
		}
	}
	return pr, nil
}

// Snapshot is a chain's forecast at one moment: whether its day caps bind,
// and each route's pace.
type Snapshot struct {
	// At is when it was made.
	At time.Time
	// Binding reports that the forecast says the chain's day caps will
	// run out before their resets if spent in the chain's order: the
	// routes ahead of their pace are held back. False: the chain's order
	// is kept exactly.
	Binding bool
	// Learned reports that the forecast comes from a profile of past
	// days; false: from the day's own rate so far (a fresh install).
	Learned bool
	// PerHour is the requests expected in each UTC hour of the day.
	PerHour [24]float64
	// Tokens is a request's tokens, on average.
	Tokens float64
	// Renewable is what the routes without a binding day cap carry in an
	// hour, in requests (+Inf: a route without limits): see carries.
	Renewable float64
	// CapsLast is when the day caps left run out if the forecast demand
	// beyond the renewable routes spends them from now (the zero time:
	// they last until their resets).
	CapsLast time.Time
	// Routes is each route's pace, in the chain's order.
	Routes []*RoutePace
	// AnsweredToday is the chain's answers by a model since the UTC day
	// began (as of the last write of the counts).
	AnsweredToday int64
	// Expected is the demand forecast from At to the end of the UTC day.
	Expected float64
	// CapsLeft is what the day-capped routes have left, in requests.
	CapsLeft float64

	index map[string]int // Routes by route ID
}

// RoutePace is one route's pace in a Snapshot.
type RoutePace struct {
	Route string
	// DayCapped reports a limit of a day or longer (requests or tokens,
	// of the route or its provider) that resets at a set time.
	DayCapped bool
	// Binding reports that the cap runs out before its reset at the
	// forecast demand, spent in chain order: the route is paced.
	Binding bool
	// Cap and Used are the cap and what was spent of it, in requests (a
	// token cap divided by a request's tokens).
	Cap, Used float64
	// TokenCap reports that the cap counts tokens, not requests.
	TokenCap bool
	// Line is what the pace allows spent by now, in requests.
	Line float64
	// Start and Reset bound the cap's window.
	Start, Reset time.Time
	// PerHour is what the route carries in an hour under its minute and
	// hour limits, in requests (+Inf: none).
	PerHour float64

	picked atomic.Int64 // reservations since the snapshot was made
}

// Held reports that the route is ahead of its pace: a request goes to it
// only when no route within pace can take it.
func (rp *RoutePace) Held() bool { return rp.heldFor(1) }

// heldFor reports that the route is ahead of its pace for a request that
// counts as n requests of its cap: past its line by a request or more once
// the request's size beyond one is counted (n is 1 on a request cap).
func (rp *RoutePace) heldFor(n float64) bool {
	return rp.Binding && rp.Used+float64(rp.picked.Load())+n-1 >= rp.Line+1
}

func (s *Snapshot) route(id string) *RoutePace {
	if i, ok := s.index[id]; ok {
		return s.Routes[i]
	}
	return nil
}

// held reports that route id is ahead of its pace for a request of
// tokens: on a cap counted in tokens, a request counts as its tokens in
// average requests, so that a long question finds the route held sooner
// than a short one (see byCost).
func (s *Snapshot) held(id string, tokens int) bool {
	rp := s.route(id)
	if rp == nil {
		return false
	}
	return rp.heldFor(s.size(rp, tokens))
}

// refresh works out ch's forecast and keeps it.
func (p *Pacer) refresh(ch *config.Chain, cs *chainState) {
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	now := p.clock.Now()
	pr, err := p.readProfile(ctx, ch.Name, now)
	if err != nil {
		return // the last forecast stands
	}
	s := &Snapshot{At: now, Learned: pr.learned, PerHour: pr.perHour, Tokens: pr.tokens}
	p.mu.Lock()
	share, ok := p.input[ch.Name]
	p.mu.Unlock()
	if !ok {
		share = 1
	}
	for _, rt := range ch.Routes {
		if rt.Disabled {
			continue
		}
		left, err := p.budget.Left(ctx, rt)
		if err != nil {
			return
		}
		s.Routes = append(s.Routes, routePace(rt, left, routeTokens(rt, pr.tokens, share), now))
	}
	s.index = make(map[string]int, len(s.Routes))
	for i, rp := range s.Routes {
		s.index[rp.Route] = i
	}
	forecast(s, pr, now)
	s.AnsweredToday = pr.answered
	s.Expected = pr.between(now, now.UTC().Truncate(24*time.Hour).Add(24*time.Hour))
	for _, rp := range s.Routes {
		if rp.DayCapped {
			s.CapsLeft += max(rp.Cap-rp.Used, 0)
		}
	}
	cs.snap.Store(s)
}

// inputWeight is the weight of a request in the mean share of its tokens
// that is its prompt: about the last 64 requests count.
const inputWeight = 1.0 / 64

// routeTokens is what a request of the chain's mean tokens, input of them
// its prompt's share, counts against route rt's token limits: all of
// them, or on a provider whose limits count input alone (Gemini) the
// prompt's share (quota.Reserved). Gemma's 15,000 tokens a minute carry a
// request's prompt, not its answer: counted with the answers, the forecast
// would find it carrying fewer requests an hour than it does, by the
// answers' share of the tokens, and give the day caps hours Gemma could
// carry.
func routeTokens(rt *config.Route, tokens, input float64) float64 {
	prompt := int(math.Round(tokens * input))
	out := int(math.Round(tokens)) - prompt
	return max(float64(quota.Reserved(rt, prompt, out)), 1)
}

// routePace reads a route's windows: its tightest cap of a day or longer
// that resets at a set time, and what it carries in an hour otherwise.
func routePace(rt *config.Route, left quota.Left, tokens float64, now time.Time) *RoutePace {
	rp := &RoutePace{Route: rt.ID, PerHour: math.Inf(1)}
	scopes := []struct {
		b     quota.Budget
		reset config.Reset
	}{{left.Route, rt.Reset}}
	if rt.Provider != nil {
		scopes = append(scopes, struct {
			b     quota.Budget
			reset config.Reset
		}{left.Provider, rt.Provider.Reset})
	}
	bestLeft := math.Inf(1)
	for _, sc := range scopes {
		b := sc.b
		for _, m := range [...]struct {
			w   quota.Window
			per float64 // hours of the window, for a rate
			tok bool
		}{{b.RPM, 1.0 / 60, false}, {b.TPM, 1.0 / 60, true}, {b.RPH, 1, false}, {b.TPH, 1, true}} {
			if m.w.Limit > 0 {
				n := float64(m.w.Limit)
				if m.tok {
					n /= tokens
				}
				rp.PerHour = min(rp.PerHour, n/m.per)
			}
		}
		for _, m := range [...]struct {
			w     quota.Window
			tok   bool
			month bool
		}{{b.RPD, false, false}, {b.TPD, true, false}, {b.RPMo, false, true}, {b.TPMo, true, true}} {
			if m.w.Limit <= 0 {
				continue
			}
			capN, used := float64(m.w.Limit), float64(m.w.Used)
			if m.tok {
				capN, used = capN/tokens, used/tokens
			}
			if l := capN - used; l < bestLeft {
				bestLeft = l
				rp.DayCapped = true
				rp.Cap, rp.Used, rp.TokenCap = capN, used, m.tok
				rp.Reset = m.w.Resets
				switch {
				case m.month:
					loc := sc.reset.Location
					if loc == nil {
						loc = time.UTC
					}
					y, mo, _ := now.In(loc).Date()
					rp.Start = clock.DayStart(y, mo, 1, loc)
				case sc.reset.Kind == config.ResetRolling:
					// A rolling day has no reset: what it spent in the
					// last 24 hours comes back over the next 24. It is
					// paced over both: its count may hold the past day's
					// share of the two days' weight.
					rp.Start, rp.Reset = now.Add(-24*time.Hour), now.Add(24*time.Hour)
				default:
					rp.Start = rp.Reset.Add(-24 * time.Hour)
				}
			}
		}
	}
	if rp.Reset.IsZero() || !rp.Reset.After(now) {
		rp.DayCapped = false
	}
	return rp
}

// forecast decides which day-capped routes bind and draws their pace
// lines (docs/PACING.md):
//
//   - the demand that reaches a day-capped route spent in chain order is
//     what the chain expects before its reset; the route binds when that
//     is more than it and the day-capped routes before it have left;
//   - the routes that do not bind, and those without a day cap, are the
//     renewable routes: together they carry R requests an hour;
//   - each hour weighs its excess demand, max(0, d(h) − R): what the
//     renewable routes cannot carry;
//   - a binding route's line at now is its cap times the weight of its
//     window before now over its window's whole weight; 0 when no hour
//     has an excess: the cap then answers only what the renewable routes
//     cannot, until the demand left before its reset is less than the caps
//     left and it stops binding, when the chain's order spends what is
//     left.
func forecast(s *Snapshot, pr *profile, now time.Time) {
	cum := 0.0
	for _, rp := range s.Routes {
		if !rp.DayCapped || pr.total < minDemand {
			continue
		}
		cum += max(rp.Cap-rp.Used, 0)
		if pr.between(now, rp.Reset) > cum {
			rp.Binding = true
			s.Binding = true
		}
	}
	s.CapsLast = capsLast(s.Routes, now)
	for _, rp := range s.Routes {
		if !rp.Binding {
			s.Renewable += rp.carries(now)
		}
	}
	if !s.Binding {
		return
	}
	// An hour weighs the demand the renewable routes cannot carry.
	excess := func(t time.Time) float64 { return max(pr.at(t)-s.Renewable, 0) }
	weight := excess
	for _, rp := range s.Routes {
		if !rp.Binding {
			continue
		}
		whole := integrate(rp.Start, rp.Reset, weight)
		if whole <= 0 {
			// The renewable routes carry every hour forecast: the cap
			// answers only what they cannot, until it stops binding.
			continue
		}
		rp.Line = rp.Cap * integrate(rp.Start, now, weight) / whole
	}
}

// capsLast is when the day caps left run out at the rate they were spent
// since their windows began; the zero time when they last until their
// resets, or nothing was spent.
func capsLast(routes []*RoutePace, now time.Time) time.Time {
	var left, rate float64
	var reset time.Time
	for _, rp := range routes {
		if !rp.DayCapped {
			continue
		}
		left += max(rp.Cap-rp.Used, 0)
		if h := now.Sub(rp.Start).Hours(); h > 0 {
			rate += rp.Used / h
		}
		if reset.IsZero() || rp.Reset.After(reset) {
			reset = rp.Reset
		}
	}
	if rate <= 0 {
		return time.Time{}
	}
	end := now.Add(time.Duration(left / rate * float64(time.Hour)))
	if end.After(reset) {
		return time.Time{}
	}
	return end
}

// carries is what a route that does not bind carries in an hour from now
// on: its minute and hour limits' rate, and on a day cap no more than
// what the cap has left spread over the hours to its reset. A cap of 50
// a day behind a 20-a-minute limit is not 1,200 requests an hour of room:
// counted so, it once held every binding route of the evaluation batch
// (tools/sim) back behind it, and the batch lost answers to the naive
// loop.
func (rp *RoutePace) carries(now time.Time) float64 {
	r := rp.PerHour
	if !rp.DayCapped {
		return r
	}
	if h := rp.Reset.Sub(now).Hours(); h > 0 {
		r = min(r, max(rp.Cap-rp.Used, 0)/h)
	}
	return r
}
