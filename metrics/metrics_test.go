package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/route"
)

func testPlan() *config.Plan {
	pr := &config.Provider{Name: "p"}
	a := &config.Route{ID: "p/a", Provider: pr}
	return &config.Plan{
		Routes: map[string]*config.Route{"p/a": a}, RouteOrder: []string{"p/a"},
		Chains: map[string]*config.Chain{"c": {Name: "c", Routes: []*config.Route{a}}}, ChainOrder: []string{"c"},
	}
}

// TestHooks checks the hooks the HTTP API calls, and that values outside
// the vocabulary become "other" instead of new labels.
func TestHooks(t *testing.T) {
	m := New(Options{Plan: testPlan()})
	m.Request("c", OutcomeAnswered, time.Second)
	m.Request("c", "something new", time.Second)
	m.Request("a model the caller made up", OutcomeFailed, time.Second)
	m.CacheHit("c")
	m.FallbackServed("c", FallbackMessage)
	m.FallbackServed("c", "made-up")
	m.RecordAttempt(&route.Attempt{Route: "p/a", Class: failure.RateDay, RestKey: rest.RouteKey("p/a")})
	m.RecordAttempt(&route.Attempt{Route: "not/in-plan", Class: failure.OK})
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"answered", value(t, m.chains["c"].requests[OutcomeAnswered]), 1},
		{"unknown outcome", value(t, m.chains["c"].requests[Other]), 1},
		{"unknown chain", value(t, m.other.requests[OutcomeFailed]), 1},
		{"cache hit", value(t, m.chains["c"].cacheHits), 1},
		{"fallback", value(t, m.chains["c"].fallbacks[FallbackMessage]), 1},
		{"unknown fallback kind", value(t, m.chains["c"].fallbacks[Other]), 1},
		{"attempt", value(t, m.routes["p/a"].attempts[failure.RateDay]), 1},
		{"rest", value(t, m.rests[rest.RouteKey("p/a")][failure.RateDay]), 1},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if strings.Contains(l.GetValue(), "made") || strings.Contains(l.GetValue(), "new") {
					t.Errorf("%s: %s=%q is outside the vocabulary", f.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}

func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestRecordDoesNotAllocate keeps the request path lean.
func TestRecordDoesNotAllocate(t *testing.T) {
	m := New(Options{Plan: testPlan()})
	ok := &route.Attempt{Route: "p/a", Class: failure.OK, Latency: time.Second, TokensIn: 10, TokensOut: 5}
	fail := &route.Attempt{Route: "p/a", Class: failure.Overloaded, RestKey: rest.RouteKey("p/a")}
	if n := testing.AllocsPerRun(1000, func() {
		m.RecordAttempt(ok)
		m.RecordAttempt(fail)
		m.Request("c", OutcomeAnswered, time.Second)
	}); n != 0 {
		t.Errorf("recording: %v allocations, want 0", n)
	}
}
