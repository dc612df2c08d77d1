package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/status/figures"
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
	rescue := &route.Attempt{Chain: "c", Route: "p/a", Class: failure.OK, Stream: true, Part: 1, Method: "prefix", Retry: true}
	if n := testing.AllocsPerRun(1000, func() {
		m.RecordAttempt(ok)
		m.RecordAttempt(fail)
		m.RecordAttempt(rescue)
		m.Request("c", OutcomeAnswered, time.Second)
	}); n != 0 {
		t.Errorf("recording: %v allocations, want 0", n)
	}
}

// TestRescuesAndPoliteRetries feeds the attempts the router makes when it
// rescues a broken stream and when it retries a blip politely (issue 13),
// and reads /metrics as Prometheus does: the route that finished a stream
// counts it by method, a polite retry by outcome, and no attempt outside
// the plan's chains and routes becomes a label.
func TestRescuesAndPoliteRetries(t *testing.T) {
	pr := &config.Provider{Name: "p"}
	a, b := &config.Route{ID: "p/a", Provider: pr}, &config.Route{ID: "p/b", Provider: pr}
	m := New(Options{Plan: &config.Plan{
		Routes: map[string]*config.Route{"p/a": a, "p/b": b}, RouteOrder: []string{"p/a", "p/b"},
		Chains: map[string]*config.Chain{"c": {Name: "c", Routes: []*config.Route{a, b}}}, ChainOrder: []string{"c"},
	}})
	for _, at := range []route.Attempt{
		{Chain: "c", Route: "p/a", Class: failure.Overloaded, Stream: true},                    // a stream breaks...
		{Chain: "c", Route: "p/b", Class: failure.OK, Stream: true, Part: 1, Method: "prefix"}, // ...b finishes it
		{Chain: "c", Route: "p/b", Class: failure.OK, Stream: true, Part: 1, Method: "instruct"},
		{Chain: "c", Route: "p/b", Class: failure.OK, Stream: true, Part: 2, Method: "instruct"},
		{Chain: "c", Route: "p/b", Class: failure.OK, Stream: true, Part: 1},                           // afresh
		{Chain: "c", Route: "p/b", Class: failure.BadRequest, Stream: true, Part: 1, Method: "prefix"}, // refused: no rescue
		{Chain: "c", Route: "p/b", Class: failure.OK, Stream: true, Part: 1, Method: "made-up"},
		{Chain: "c", Route: "p/a", Class: failure.OK, Retry: true},
		{Chain: "c", Route: "p/a", Class: failure.OK, Retry: true},
		{Chain: "c", Route: "p/a", Class: failure.Overloaded, Retry: true},
		{Chain: "c", Route: "p/a", Class: failure.Cancelled, Retry: true},
		{Chain: "probe", Route: "p/a", Class: failure.OK, Retry: true},
		{Chain: "c", Route: "p/b", Class: failure.OK, EdgeProbe: true},
		{Chain: "c", Route: "p/b", Class: failure.RateMinute, EdgeProbe: true},
		{Chain: "c", Route: "p/b", Class: failure.RateMinute, EdgeProbe: true},
		{Chain: "c", Route: "not/in-plan", Class: failure.OK, Stream: true, Part: 1},
	} {
		m.RecordAttempt(&at)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`tollfree_stream_rescues_total{chain="c",method="prefix",route="p/b"} 1`,
		`tollfree_stream_rescues_total{chain="c",method="instruct",route="p/b"} 2`,
		`tollfree_stream_rescues_total{chain="c",method="afresh",route="p/b"} 1`,
		`tollfree_stream_rescues_total{chain="c",method="other",route="p/b"} 1`,
		`tollfree_stream_rescues_total{chain="c",method="prefix",route="p/a"} 0`,
		`tollfree_polite_retries_total{chain="c",outcome="answered",route="p/a"} 2`,
		`tollfree_polite_retries_total{chain="c",outcome="failed",route="p/a"} 1`,
		`tollfree_polite_retries_total{chain="c",outcome="cancelled",route="p/a"} 1`,
		`tollfree_polite_retries_total{chain="c",outcome="answered",route="p/b"} 0`,
		`tollfree_edge_probes_total{chain="c",outcome="answered",route="p/b"} 1`,
		`tollfree_edge_probes_total{chain="c",outcome="failed",route="p/b"} 2`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// A label value, quoted: the metric of probes at the edge has the
	// word in its name.
	for _, never := range []string{`"probe"`, "not/in-plan", "made-up"} {
		if strings.Contains(body, never) {
			t.Errorf("/metrics labels %q, outside the plan and the vocabulary", never)
		}
	}
}

// TestMethodsFollowFigures: the method label is looked up by
// figures.Method, so the two lists must agree.
func TestMethodsFollowFigures(t *testing.T) {
	if len(methods) != len(figures.Methods) {
		t.Fatalf("%d method labels, %d figures.Methods", len(methods), len(figures.Methods))
	}
	for i, m := range methods {
		if m != figures.Methods[i] {
			t.Errorf("method label %d is %q, figures.Methods says %q", i, m, figures.Methods[i])
		}
	}
}
