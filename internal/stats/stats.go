// Package stats keeps the live figures of the status page: for each route
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
//     answered by failover when the answering attempt was not the request's
//     first: another route had already failed for it, or the answer won a
//     race as a hedge. A chain's failover rate is the share of its answered
//     requests answered by failover; its success rate is answered requests
//     over answered plus unanswered ones (the fallback or an error answered;
//     reported through Request, since attempts alone cannot tell).
//   - Latency percentiles are of answering attempts only (a route's p50 and
//     p95 of its ok attempts; a chain's of its answered requests, timed from
//     the start of the request's first failed attempt when it failed over).
//
// Which classes count for which rate, and the arithmetic of rates and
// percentiles, are package figures', shared with the call log's summary.
// Rates and percentiles are over the last Window attempts of a route, or
// requests of a chain; totals run since the start. Figures live in memory
// and are per instance.
package stats

import (
	"slices"
	"sync"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/figures"
	"github.com/tollfree/tollfree/route"
)

// Window is how many recent attempts (per route) or requests (per chain)
// the rates and percentiles are worked out over.
const Window = 256

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
	// open holds the requests with a failed attempt that have not been
	// answered yet: request id to the failed attempt's start. Written only
	// on failure, so a healthy request path never allocates here.
	open map[string]time.Time
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
	if rs := s.routes[a.Route]; rs != nil {
		rs.mu.Lock()
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
		rs.mu.Unlock()
	}
	cs := s.chains[a.Chain]
	if cs == nil {
		return
	}
	switch {
	case a.Class == failure.OK && a.Part == 0:
		cs.mu.Lock()
		first, failedOver := cs.open[a.RequestID]
		if failedOver {
			delete(cs.open, a.RequestID)
		}
		lat := a.Latency
		if failedOver {
			lat = a.Start.Add(a.Latency).Sub(first)
		}
		fo := failedOver || a.Hedge
		cs.add(reqSample{ms: millis(lat), answered: true, failover: fo})
		cs.answered++
		if fo {
			cs.failovers++
		}
		cs.mu.Unlock()
	case figures.HandsOn(a.Class) && a.RequestID != "":
		cs.mu.Lock()
		if _, ok := cs.open[a.RequestID]; !ok {
			if cs.open == nil || len(cs.open) >= maxOpen {
				cs.open = make(map[string]time.Time)
			}
			cs.open[a.RequestID] = a.Start
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
	// ones).
	Attempts uint64
	OK       uint64
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
}

// Chain is one chain's figures.
type Chain struct {
	// Answered, Unanswered, Failovers and Cached count since the start.
	Answered   uint64
	Unanswered uint64
	Failovers  uint64
	Cached     uint64
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
	copy(buf[:], rs.ring[:])
	out := Route{Attempts: rs.attempts, OK: rs.ok, SilentLosses: rs.silent, SchemaFailures: rs.invalid, LastError: rs.lastClass, LastErrorAt: rs.lastAt, LastOK: rs.lastOK, Recent: n}
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
	out := Chain{Answered: cs.answered, Unanswered: cs.unanswered, Failovers: cs.failovers, Cached: cs.cached, Recent: n}
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
