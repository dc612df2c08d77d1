package live

import (
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/route"
)

func testPlan() *config.Plan {
	a := &config.Route{ID: "p/a"}
	b := &config.Route{ID: "p/b"}
	return &config.Plan{
		Routes: map[string]*config.Route{"p/a": a, "p/b": b},
		Chains: map[string]*config.Chain{"c": {Name: "c", Routes: []*config.Route{a, b}}},
	}
}

var t0 = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

func TestFailoverAndRates(t *testing.T) {
	s := New(testPlan())
	at := func(id, rt string, c failure.Class, start, lat time.Duration, hedge bool) {
		s.RecordAttempt(&route.Attempt{RequestID: id, Chain: "c", Route: rt, Class: c, Start: t0.Add(start), Latency: lat, Hedge: hedge})
	}
	at("r1", "p/a", failure.OK, 0, 100*time.Millisecond, false)                   // first attempt answers
	at("r2", "p/a", failure.Overloaded, 0, 50*time.Millisecond, false)            // fails over...
	at("r2", "p/b", failure.OK, 50*time.Millisecond, 200*time.Millisecond, false) // ...to b: 250 ms in all
	at("r3", "p/b", failure.OK, 0, 300*time.Millisecond, true)                    // a hedge wins
	at("r3", "p/a", failure.Cancelled, 0, 3*time.Second, false)                   // the loser: no figure
	at("r4", "p/a", failure.BadRequest, 0, 10*time.Millisecond, false)            // the caller's fault
	s.Unanswered("c", time.Second)

	a, _ := s.Route("p/a")
	if a.Attempts != 4 || a.OK != 1 || a.Recent != 3 {
		t.Errorf("route a: attempts %d ok %d recent %d, want 4 1 3", a.Attempts, a.OK, a.Recent)
	}
	if a.SuccessRate != 0.5 { // ok / (ok + overloaded); bad_request not judged
		t.Errorf("route a success = %v, want 0.5", a.SuccessRate)
	}
	if got, want := a.FailoverRate, 1.0/3; got != want {
		t.Errorf("route a failover = %v, want %v", got, want)
	}
	if a.LastError != failure.BadRequest || !a.LastErrorAt.Equal(t0.Add(10*time.Millisecond)) {
		t.Errorf("route a last error %v at %v, want bad_request at +10ms", a.LastError, a.LastErrorAt)
	}
	c, _ := s.Chain("c")
	if c.Answered != 3 || c.Failovers != 2 || c.Unanswered != 1 {
		t.Errorf("chain: answered %d failovers %d unanswered %d, want 3 2 1", c.Answered, c.Failovers, c.Unanswered)
	}
	if c.SuccessRate != 0.75 || c.FailoverRate != 2.0/3 {
		t.Errorf("chain: success %v failover %v, want 0.75 and 2/3", c.SuccessRate, c.FailoverRate)
	}
	if c.Latency.P50 != 250*time.Millisecond || c.Latency.P95 != 300*time.Millisecond || c.Latency.Samples != 3 {
		t.Errorf("chain latency %+v, want p50 250ms p95 300ms over 3", c.Latency)
	}
	if _, ok := s.Route("nope"); ok {
		t.Errorf("Route of a route outside the plan: ok")
	}
}

// TestSilentLoserIsAFailure: a hedge race lost in silence counts against
// the route's success rate and shows as its last error, but hands nothing
// on (another route had answered), and leaves the chain's figures alone.
func TestSilentLoserIsAFailure(t *testing.T) {
	s := New(testPlan())
	at := func(id, rt string, c failure.Class, start, lat time.Duration, hedge bool) {
		s.RecordAttempt(&route.Attempt{RequestID: id, Chain: "c", Route: rt, Class: c, Start: t0.Add(start), Latency: lat, Hedge: hedge})
	}
	at("r1", "p/a", failure.OK, 0, 100*time.Millisecond, false)
	at("r2", "p/b", failure.OK, 3*time.Second, 300*time.Millisecond, true)
	at("r2", "p/a", failure.SilentLoser, 0, 3300*time.Millisecond, false)
	a, _ := s.Route("p/a")
	if a.Attempts != 2 || a.OK != 1 || a.SilentLosses != 1 || a.SuccessRate != 0.5 || a.FailoverRate != 0 {
		t.Errorf("route a: %+v, want 2 attempts, 1 ok, 1 silent loss, success 0.5, failover 0", a)
	}
	if a.LastError != failure.SilentLoser || !a.LastErrorAt.Equal(t0.Add(3300*time.Millisecond)) {
		t.Errorf("route a last error %v at %v, want silent_loser at +3.3s", a.LastError, a.LastErrorAt)
	}
	if c, _ := s.Chain("c"); c.Answered != 2 || c.Failovers != 1 || c.SuccessRate != 1 {
		t.Errorf("chain: %+v, want 2 answered, 1 by failover (the hedge), success 1", c)
	}
}

func TestPercentiles(t *testing.T) {
	tests := []struct {
		name     string
		ms       []uint32
		p50, p95 time.Duration
	}{
		{"none", nil, 0, 0},
		{"one", []uint32{7}, 7 * time.Millisecond, 7 * time.Millisecond},
		{"1 to 100", func() []uint32 {
			var out []uint32
			for i := 100; i >= 1; i-- {
				out = append(out, uint32(i))
			}
			return out
		}(), 50 * time.Millisecond, 95 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := percentiles(tt.ms)
			if got.P50 != tt.p50 || got.P95 != tt.p95 {
				t.Errorf("p50 %v p95 %v, want %v %v", got.P50, got.P95, tt.p50, tt.p95)
			}
		})
	}
}

// TestWindowKeepsRecent checks that rates forget what fell out of the ring.
func TestWindowKeepsRecent(t *testing.T) {
	s := New(testPlan())
	for range Window {
		s.RecordAttempt(&route.Attempt{Route: "p/a", Class: failure.Timeout})
	}
	for range Window {
		s.RecordAttempt(&route.Attempt{Route: "p/a", Class: failure.OK, Latency: time.Millisecond})
	}
	a, _ := s.Route("p/a")
	if a.SuccessRate != 1 || a.Recent != Window || a.Attempts != 2*Window {
		t.Errorf("success %v recent %d attempts %d, want 1, %d, %d", a.SuccessRate, a.Recent, a.Attempts, Window, 2*Window)
	}
}

// TestRecordDoesNotAllocate keeps the request path lean.
func TestRecordDoesNotAllocate(t *testing.T) {
	s := New(testPlan())
	ok := &route.Attempt{RequestID: "r", Chain: "c", Route: "p/a", Class: failure.OK, Latency: time.Millisecond}
	rescue := &route.Attempt{RequestID: "r", Chain: "c", Route: "p/b", Class: failure.OK, Stream: true, Part: 1, Method: "instruct", Retry: true}
	if n := testing.AllocsPerRun(1000, func() { s.RecordAttempt(ok); s.RecordAttempt(rescue) }); n != 0 {
		t.Errorf("RecordAttempt of an answer: %v allocations, want 0", n)
	}
}

// TestRescuesAndPoliteRetries feeds the attempts the router makes when it
// rescues a broken stream or retries a blip politely (issue 13): the route
// that finished a stream counts it by method, the chain counts it rescued
// and answered by failover; the route retried counts its polite retries
// and those that answered, and a retry answered on the same route is no
// failover.
func TestRescuesAndPoliteRetries(t *testing.T) {
	s := New(testPlan())
	at := func(a route.Attempt) {
		a.Chain = "c"
		a.Start = t0
		a.Latency = 100 * time.Millisecond
		s.RecordAttempt(&a)
	}
	// Three streams break on a after their first token; b finishes each,
	// one way each.
	for id, method := range map[string]string{"s1": "prefix", "s2": "instruct", "s3": ""} {
		at(route.Attempt{RequestID: id, Route: "p/a", Class: failure.Overloaded, Stream: true})
		at(route.Attempt{RequestID: id, Route: "p/b", Class: failure.OK, Stream: true, Part: 1, Method: method})
	}
	// One breaks and b cannot continue it: no rescue.
	at(route.Attempt{RequestID: "s4", Route: "p/a", Class: failure.Timeout, Stream: true})
	at(route.Attempt{RequestID: "s4", Route: "p/b", Class: failure.BadRequest, Stream: true, Part: 1, Method: "prefix"})
	// A blip on a, retried on a: answered there.
	at(route.Attempt{RequestID: "r1", Route: "p/a", Class: failure.Overloaded})
	at(route.Attempt{RequestID: "r1", Route: "p/a", Class: failure.OK, Retry: true})
	// A short 429 on a, retried on a, fails again: b answers.
	at(route.Attempt{RequestID: "r2", Route: "p/a", Class: failure.RateMinute})
	at(route.Attempt{RequestID: "r2", Route: "p/a", Class: failure.Overloaded, Retry: true})
	at(route.Attempt{RequestID: "r2", Route: "p/b", Class: failure.OK})

	a, _ := s.Route("p/a")
	if a.PoliteRetries != 2 || a.PoliteRetriesAnswered != 1 || a.Rescues != [4]uint64{} {
		t.Errorf("route a: %d polite retries (%d answered), rescues %v; want 2 (1 answered), none", a.PoliteRetries, a.PoliteRetriesAnswered, a.Rescues)
	}
	b, _ := s.Route("p/b")
	if want := [4]uint64{1, 1, 1, 0}; b.Rescues != want || b.PoliteRetries != 0 {
		t.Errorf("route b: rescues %v (prefix, instruct, afresh, other), %d polite retries; want %v, 0", b.Rescues, b.PoliteRetries, want)
	}
	c, _ := s.Chain("c")
	// Answered: s1, s2, s3, r1, r2. By failover: the three rescues and r2;
	// r1 was answered by the route that had failed.
	if c.Rescued != 3 || c.Answered != 5 || c.Failovers != 4 {
		t.Errorf("chain: %d rescued, %d answered, %d failovers; want 3, 5, 4", c.Rescued, c.Answered, c.Failovers)
	}
}

// TestSchemaFailures: an answer that broke its request's schema (issue 15)
// is counted per route, judged against the route's success rate like a
// failure it caused, and is the route's last error.
func TestSchemaFailures(t *testing.T) {
	s := New(testPlan())
	at := func(id string, c failure.Class, start time.Duration, repair int) {
		s.RecordAttempt(&route.Attempt{RequestID: id, Chain: "c", Route: "p/a", Class: c, Start: t0.Add(start), Latency: 100 * time.Millisecond, Repair: repair})
	}
	at("r1", failure.OK, 0, 0)
	at("r2", failure.Invalid, time.Second, 0)
	at("r2", failure.OK, 2*time.Second, 1) // repaired on the same route
	at("r3", failure.Invalid, 3*time.Second, 0)
	a, _ := s.Route("p/a")
	if a.SchemaFailures != 2 || a.Attempts != 4 || a.OK != 2 {
		t.Errorf("route a: %d schema failures, %d attempts, %d ok; want 2, 4, 2", a.SchemaFailures, a.Attempts, a.OK)
	}
	if a.SuccessRate != 0.5 || a.FailoverRate != 0.5 {
		t.Errorf("route a: success %v, failover %v; want 0.5 and 0.5", a.SuccessRate, a.FailoverRate)
	}
	if a.LastError != failure.Invalid {
		t.Errorf("route a last error %v, want invalid", a.LastError)
	}
}

// TestLatest: a route's latest judged attempts are counted newest first, at
// most Lately of them, unjudged ones left out: a route that answered all
// morning and now loses every race in silence shows its last ones failed.
func TestLatest(t *testing.T) {
	s := New(testPlan())
	at := func(c failure.Class) {
		s.RecordAttempt(&route.Attempt{RequestID: "r", Chain: "c", Route: "p/a", Class: c, Start: t0, Latency: time.Second})
	}
	for range 30 {
		at(failure.OK)
	}
	for range 6 {
		at(failure.SilentLoser)
		at(failure.BadRequest) // not judged: skipped
	}
	at(failure.Overloaded)
	a, _ := s.Route("p/a")
	if want := (Latest{Judged: Lately, Failed: 7, Silent: 6}); a.Latest != want {
		t.Errorf("latest = %+v, want %+v", a.Latest, want)
	}
	b, _ := s.Route("p/b")
	if b.Latest != (Latest{}) {
		t.Errorf("a route never called: latest = %+v, want none", b.Latest)
	}
}
