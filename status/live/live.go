// Package live keeps the live figures of the status page: for each route
// and each chain, the outcomes and latencies of the most recent attempts and
// requests, in fixed-size rings, so that recording costs a map lookup, a
// lock and a few stores, never an allocation, and the percentiles are only
// worked out when someone looks.
//
// The words, precisely:
//
//   - A route's success rate is its answers over its judged attempts: those
//     that ended ok or with a failure the route caused (a class that rests:
//     empty, rate_minute, rate_day, auth, gone, bad_config, overloaded,
//     timeout), as a silent loser (a hedge race lost having sent
//     nothing: a route that hangs and always loses must not look healthy),
//     or invalid (an answer that broke its request's schema; issue 15).
//     A cancelled attempt, a bad request, a refusal, a parameter the route
//     does not take (unsupported) and a prompt too large for the route say
//     nothing about its health and are left out.
//   - A route's failover rate is the share of its attempts (cancelled ones
//     left out) that failed and handed their request on to the next route:
//     every class but ok, cancelled, silent_loser (another route had
//     already answered), bad_request and refused.
//   - A chain's request is answered when one of its attempts ends ok. It was
//     answered by failover when another route had failed for it first (a
//     polite retry that answered on the route that had failed is no
//     failover), when the answer won a race as a hedge, or when it finished
//     a stream that had broken (a rescue, below). A chain's failover rate is
//     the share of its answered requests answered by failover; its success
//     rate is answered requests over answered plus unanswered ones (the
//     fallback or an error answered; reported through Request, since
//     attempts alone cannot tell).
//   - A route rescued a stream when it answered a streamed request on a
//     part after the first: the stream had broken after its first token and
//     the route continued it, by prefix or instruct, or took it up afresh
//     when nothing had been streamed yet (issue 13). A chain counts the
//     streams it rescued; a route, those it rescued, by method.
//   - A polite retry is an attempt that called the same route once more
//     after a blip (a bare 500, a short 429); a route counts the ones made
//     on it and those that answered.
//   - A route's latest attempts are its last Lately judged ones (counted
//     as for the success rate): how many, how many failed, and how many of
//     those were silent losses. They tell a route that fails now from one
//     that failed this morning, which the rates over Window cannot.
//   - Latency percentiles are of answering attempts only (a route's p50 and
//     p95 of its ok attempts; a chain's of its answered requests, timed from
//     the start of the request's first failed attempt when it failed over).
//
// Which classes count for which rate, and the arithmetic of rates and
// percentiles, are package figures', shared with the call log's summary.
// Rates and percentiles are over the last Window attempts of a route, or
// requests of a chain; totals run since the start. Figures live in memory
// and are per instance.
package live

import (
	"slices"
	"sync"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/status/figures"
)

// Window is how many recent attempts (per route) or requests (per chain)
// the rates and percentiles are worked out over.
const Window = 256

// Lately is how many of a route's latest judged attempts Route.Latest
// counts.
const Lately = 10

// maxOpen bounds the requests remembered between a failed attempt and their
// answer; past it the memory is dropped (those requests then count as
// answered without failover).
const maxOpen = 1024

// Stats records attempts and requests. Build it with New; it is safe for
// concurrent use. It implements route.Recorder.
type Stats struct {
	// Both maps are built by New and only read afterwards: each entry has
	// its own lock, so routes never contend with each other.
	routes map[string]*routeStats
	chains map[string]*chainStats
}

var _ route.Recorder = (*Stats)(nil)

type sample struct {
	ms    uint32
	class failure.Class
}

type routeStats struct {
	mu        sync.Mutex // guards the fields below
	ring      [Window]sample
	n         uint64 // samples ever written; ring index n % Window
	attempts  uint64 // every attempt, cancelled included
	ok        uint64
	silent    uint64        // silent losers
	invalid   uint64        // answers that broke their request's schema
	lastClass failure.Class // of the last failure (not ok, not cancelled)
	lastAt    time.Time
	lastOK    time.Time
	retries   uint64                     // polite retries
	retriesOK uint64                     // polite retries that answered
	rescues   [figures.NumMethods]uint64 // streams rescued, by figures.Method
	cached    uint64                     // answers served from the cache: no call
}

type reqSample struct {
	ms       uint32
	answered bool
	failover bool
}

type chainStats struct {
	mu         sync.Mutex // guards the fields below
	ring       [Window]reqSample
	n          uint64
	answered   uint64
	unanswered uint64
	failovers  uint64
	cached     uint64
	rescued    uint64 // streams answered on a part after the first
	// open holds the requests with a failed attempt that have not been
	// answered yet: request id to the first failed attempt. Written only
	// on failure, so a healthy request path never allocates here.
	open map[string]failed
}

// failed is a request's first failed attempt: when it started, and on
// which route (a route of the plan: the string is the plan's).
type failed struct {
	start time.Time
	route string
}

// New returns Stats for the routes and chains of plan. Attempts of routes
// or chains outside the plan (a probe's "probe" chain) count for their
// route only.
func New(plan *config.Plan) *Stats {
	s := &Stats{routes: make(map[string]*routeStats, len(plan.Routes)), chains: make(map[string]*chainStats, len(plan.Chains))}
	for id := range plan.Routes {
		s.routes[id] = &routeStats{}
	}
	for name := range plan.Chains {
		s.chains[name] = &chainStats{}
	}
	return s
}

func millis(d time.Duration) uint32 {
	ms := d.Milliseconds()
	switch {
	case ms < 0:
		return 0
	case ms > 1<<32-1:
		return 1<<32 - 1
	}
	return uint32(ms)
}

// RecordAttempt implements route.Recorder.
func (s *Stats) RecordAttempt(a *route.Attempt) {
	if a.Cached {
		// A cache hit called no route: it is no attempt, and no latency
		// of the route's (issue 34: a card read "3 attempts", "P95 253
		// ms" for one real call); the chain counts it through Cached.
		if rs := s.routes[a.Route]; rs != nil {
			rs.mu.Lock()
			rs.cached++
			rs.mu.Unlock()
		}
		return
	}
	if rs := s.routes[a.Route]; rs != nil {
		rs.record(a)
	}
	if cs := s.chains[a.Chain]; cs != nil {
		cs.record(a)
	}
}

func (rs *routeStats) record(a *route.Attempt) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.attempts++
	if a.Class != failure.Cancelled {
		rs.ring[rs.n%Window] = sample{ms: millis(a.Latency), class: a.Class}
		rs.n++
	}
	switch a.Class {
	case failure.OK:
		rs.ok++
		rs.lastOK = a.Start.Add(a.Latency)
	case failure.Cancelled:
	default:
		switch a.Class {
		case failure.SilentLoser:
			rs.silent++
		case failure.Invalid:
			rs.invalid++
		}
		rs.lastClass, rs.lastAt = a.Class, a.Start.Add(a.Latency)
	}
	if a.Retry {
		rs.retries++
		if a.Class == failure.OK {
			rs.retriesOK++
		}
	}
	if figures.Rescued(a.Class, a.Stream, a.Part) {
		rs.rescues[figures.Method(a.Method)]++
	}
}

// record counts an answer as a request answered, and remembers a failure
// that handed its request on until the answer comes. A stream rescued on a
// later part was answered by failover: its first part broke.
func (cs *chainStats) record(a *route.Attempt) {
	switch {
	case a.Class == failure.OK:
		rescued := figures.Rescued(a.Class, a.Stream, a.Part)
		cs.mu.Lock()
		first, failedBefore := cs.open[a.RequestID]
		lat := a.Latency
		if failedBefore {
			delete(cs.open, a.RequestID)
			lat = a.Start.Add(a.Latency).Sub(first.start)
		}
		// A polite retry that answered on the route that failed first is
		// no failover: the same route answered.
		fo := failedBefore && first.route != a.Route || a.Hedge || rescued
		cs.add(reqSample{ms: millis(lat), answered: true, failover: fo})
		cs.answered++
		if fo {
			cs.failovers++
		}
		if rescued {
			cs.rescued++
		}
		cs.mu.Unlock()
	case figures.HandsOn(a.Class) && a.RequestID != "":
		cs.mu.Lock()
		if _, ok := cs.open[a.RequestID]; !ok {
			if cs.open == nil || len(cs.open) >= maxOpen {
				cs.open = make(map[string]failed)
			}
			cs.open[a.RequestID] = failed{start: a.Start, route: a.Route}
		}
		cs.mu.Unlock()
	}
}

func (cs *chainStats) add(r reqSample) {
	cs.ring[cs.n%Window] = r
	cs.n++
}

// Unanswered records a request of chain that no route answered (the
// fallback or an error answered it). Unknown chains are ignored.
func (s *Stats) Unanswered(chain string, d time.Duration) {
	if cs := s.chains[chain]; cs != nil {
		cs.mu.Lock()
		cs.add(reqSample{ms: millis(d)})
		cs.unanswered++
		cs.mu.Unlock()
	}
}

// Cached records a request of chain answered from the cache.
func (s *Stats) Cached(chain string) {
	if cs := s.chains[chain]; cs != nil {
		cs.mu.Lock()
		cs.cached++
		cs.mu.Unlock()
	}
}

// Latency is a pair of percentiles over recent answers. Samples is how many
// answers they were worked out from; with none, both are zero.
type Latency struct {
	P50     time.Duration
	P95     time.Duration
	Samples int
}

// Route is one route's figures.
type Route struct {
	// Attempts and OK count since the start (Attempts includes cancelled
	// ones); a cache hit is neither.
	Attempts uint64
	OK       uint64
	// Cached counts since the start the answers of this route served
	// again from the cache, at no call.
	Cached uint64
	// SilentLosses counts since the start the hedge races the route lost
	// having sent nothing (failure.SilentLoser).
	SilentLosses uint64
	// SchemaFailures counts since the start the answers that broke what
	// their request asked (failure.Invalid: not JSON, or against its
	// response_format schema or a tool's parameters; issue 15).
	SchemaFailures uint64
	// Recent is how many attempts the rates are over (at most Window).
	Recent int
	// SuccessRate and FailoverRate are fractions in [0, 1]; HasRates is
	// false while no attempt counts for them.
	SuccessRate  float64
	FailoverRate float64
	HasRates     bool
	Latency      Latency
	// LastError is the class of the last failed attempt (not ok, not
	// cancelled) and LastErrorAt when it ended; zero LastErrorAt: none yet.
	LastError   failure.Class
	LastErrorAt time.Time
	// LastOK is when the last answer ended; zero: none yet.
	LastOK time.Time
	// PoliteRetries counts since the start the polite retries of a blip
	// made on the route (route.Attempt.Retry), PoliteRetriesAnswered those
	// that answered.
	PoliteRetries         uint64
	PoliteRetriesAnswered uint64
	// Latest counts the route's last Lately judged attempts.
	Latest Latest
	// Rescues counts since the start the broken streams the route rescued
	// (figures.Rescued), by method, indexed as figures.Methods.
	Rescues [figures.NumMethods]uint64
}

// Latest is a count of a route's latest judged attempts (at most Lately):
// Failed of them did not answer, Silent of those lost a hedge race having
// sent nothing.
type Latest struct {
	Judged int
	Failed int
	Silent int
}

// latest counts the last Lately judged samples of ring, the n most recent
// of which end at index end-1 (mod Window).
func latest(ring *[Window]sample, n int, end uint64) Latest {
	var l Latest
	for i := 1; i <= n && l.Judged < Lately; i++ {
		c := ring[(end-uint64(i))%Window].class
		if !figures.Judged(c) {
			continue
		}
		l.Judged++
		if c != failure.OK {
			l.Failed++
		}
		if c == failure.SilentLoser {
			l.Silent++
		}
	}
	return l
}

// Chain is one chain's figures.
type Chain struct {
	// Answered, Unanswered, Failovers and Cached count since the start.
	Answered   uint64
	Unanswered uint64
	Failovers  uint64
	Cached     uint64
	// Rescued counts since the start the streams that broke after their
	// first token and were finished by a later part (figures.Rescued).
	// Each is also answered, by failover.
	Rescued uint64
	// Recent is how many requests the rates are over (at most Window).
	Recent       int
	SuccessRate  float64
	FailoverRate float64
	HasRates     bool
	Latency      Latency
}

// Route returns the figures of one route; ok is false for a route outside
// the plan.
func (s *Stats) Route(id string) (Route, bool) {
	rs := s.routes[id]
	if rs == nil {
		return Route{}, false
	}
	var buf [Window]sample
	rs.mu.Lock()
	n := int(min(rs.n, Window))
	end := rs.n
	copy(buf[:], rs.ring[:])
	out := Route{Attempts: rs.attempts, OK: rs.ok, SilentLosses: rs.silent, SchemaFailures: rs.invalid, LastError: rs.lastClass, LastErrorAt: rs.lastAt, LastOK: rs.lastOK, Recent: n,
		PoliteRetries: rs.retries, PoliteRetriesAnswered: rs.retriesOK, Rescues: rs.rescues, Cached: rs.cached}
	rs.mu.Unlock()
	var ms [Window]uint32
	var ok, judgedN, handed int
	for _, x := range buf[:n] {
		if x.class == failure.OK {
			ms[ok] = x.ms
			ok++
		}
		if figures.Judged(x.class) {
			judgedN++
		}
		if figures.HandsOn(x.class) {
			handed++
		}
	}
	// Cancelled attempts never enter the ring: n is the failover rate's
	// whole.
	out.FailoverRate, out.HasRates = figures.Rate(handed, n)
	out.SuccessRate, _ = figures.Rate(ok, judgedN)
	out.Latency = percentiles(ms[:ok])
	out.Latest = latest(&buf, n, end)
	return out, true
}

// Chain returns the figures of one chain; ok is false for a chain outside
// the plan.
func (s *Stats) Chain(name string) (Chain, bool) {
	cs := s.chains[name]
	if cs == nil {
		return Chain{}, false
	}
	var buf [Window]reqSample
	cs.mu.Lock()
	n := int(min(cs.n, Window))
	copy(buf[:], cs.ring[:])
	out := Chain{Answered: cs.answered, Unanswered: cs.unanswered, Failovers: cs.failovers, Cached: cs.cached, Rescued: cs.rescued, Recent: n}
	cs.mu.Unlock()
	var ms [Window]uint32
	var ans, fo int
	for _, x := range buf[:n] {
		if x.answered {
			ms[ans] = x.ms
			ans++
			if x.failover {
				fo++
			}
		}
	}
	out.SuccessRate, out.HasRates = figures.Rate(ans, n)
	out.FailoverRate, _ = figures.Rate(fo, ans)
	out.Latency = percentiles(ms[:ans])
	return out, true
}

// percentiles sorts ms in place and returns its nearest-rank p50 and p95.
func percentiles(ms []uint32) Latency {
	if len(ms) == 0 {
		return Latency{}
	}
	slices.Sort(ms)
	at := func(pct int) time.Duration {
		return time.Duration(figures.Percentile(ms, pct)) * time.Millisecond
	}
	return Latency{P50: at(50), P95: at(95), Samples: len(ms)}
}
