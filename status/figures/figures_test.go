package figures

import (
	"testing"

	"github.com/tollfree/tollfree/failure"
)

// TestClassSets pins, class by class, which attempts hand their request on
// and which are judged: the status page and `tollfree log stats` both read
// their rates from these two sets.
func TestClassSets(t *testing.T) {
	tests := []struct {
		c              failure.Class
		handsOn, judge bool
	}{
		{failure.OK, false, true},
		{failure.Empty, true, true},
		{failure.RateMinute, true, true},
		{failure.RateDay, true, true},
		{failure.Auth, true, true},
		{failure.Gone, true, true},
		{failure.BadConfig, true, true},
		{failure.BadRequest, false, false},
		{failure.Unsupported, true, false},
		{failure.Refused, false, false},
		{failure.TooLarge, true, false},
		{failure.Overloaded, true, true},
		{failure.Timeout, true, true},
		{failure.Cancelled, false, false},
		{failure.SilentLoser, false, true},
		{failure.Invalid, true, true},
	}
	if len(tests) != int(failure.NumClasses) {
		t.Fatalf("%d classes listed, want all %d", len(tests), failure.NumClasses)
	}
	for _, tt := range tests {
		t.Run(tt.c.String(), func(t *testing.T) {
			if got := HandsOn(tt.c); got != tt.handsOn {
				t.Errorf("HandsOn = %v, want %v", got, tt.handsOn)
			}
			if got := Judged(tt.c); got != tt.judge {
				t.Errorf("Judged = %v, want %v", got, tt.judge)
			}
		})
	}
}

func TestRate(t *testing.T) {
	tests := []struct {
		part, whole int
		want        float64
		has         bool
	}{
		{0, 0, 0, false},
		{3, 0, 0, false},
		{0, 4, 0, true},
		{2, 19, 2.0 / 19, true},
		{5, 5, 1, true},
	}
	for _, tt := range tests {
		if got, has := Rate(tt.part, tt.whole); got != tt.want || has != tt.has {
			t.Errorf("Rate(%d, %d) = %v, %v; want %v, %v", tt.part, tt.whole, got, has, tt.want, tt.has)
		}
	}
}

func TestPercentile(t *testing.T) {
	hundred := make([]uint32, 100)
	for i := range hundred {
		hundred[i] = uint32(i + 1)
	}
	tests := []struct {
		name   string
		sorted []uint32
		pct    int
		want   uint32
	}{
		{"empty", nil, 50, 0},
		{"one", []uint32{7}, 95, 7},
		{"1 to 100 p50", hundred, 50, 50},
		{"1 to 100 p95", hundred, 95, 95},
		{"two p50: the lower (rank 1)", []uint32{10, 20}, 50, 10},
		{"two p95: the higher (rank 2)", []uint32{10, 20}, 95, 20},
		{"twenty p95: rank 19", hundred[:20], 95, 19},
		{"twenty-one p95: rank 20", hundred[:21], 95, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.pct); got != tt.want {
				t.Errorf("Percentile(p%d) = %d, want %d", tt.pct, got, tt.want)
			}
		})
	}
}

// TestHistogramPercentiles: a percentile from the histogram is within 1%
// above the exact one (moved from calllog with the histogram).
func TestHistogramPercentiles(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		pct    int
		lo, hi float64
	}{
		{name: "uniform p50", values: series(1, 1000), pct: 50, lo: 500, hi: 505},
		{name: "uniform p95", values: series(1, 1000), pct: 95, lo: 950, hi: 959.5},
		{name: "one value", values: []float64{412.3}, pct: 95, lo: 412.3, hi: 412.3},
		{name: "sub-floor", values: []float64{0, 0.05, 0.01}, pct: 50, lo: 0, hi: latFloor},
		{name: "minutes", values: series(60000, 60100), pct: 50, lo: 60050, hi: 60050 * latRatio},
		{name: "empty", values: nil, pct: 50, lo: 0, hi: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			for _, v := range tt.values {
				h.Add(v)
			}
			if got := h.Percentile(tt.pct); got < tt.lo || got > tt.hi {
				t.Errorf("Percentile(%d) = %g, want in [%g, %g]", tt.pct, got, tt.lo, tt.hi)
			}
		})
	}
}

func series(from, to int) []float64 {
	var s []float64
	for i := from; i <= to; i++ {
		s = append(s, float64(i))
	}
	return s
}

// TestRescues pins which attempts rescued a stream, and how each
// continuation the router or a call log names is counted.
func TestRescues(t *testing.T) {
	rescued := []struct {
		name   string
		c      failure.Class
		stream bool
		part   int
		want   bool
	}{
		{"a stream finished on its second part", failure.OK, true, 1, true},
		{"on its third", failure.OK, true, 2, true},
		{"a stream answered by its first part", failure.OK, true, 0, false},
		{"a continuation that failed", failure.Overloaded, true, 1, false},
		{"an answer that is not a stream", failure.OK, false, 1, false},
	}
	for _, tt := range rescued {
		if got := Rescued(tt.c, tt.stream, tt.part); got != tt.want {
			t.Errorf("%s: Rescued = %v, want %v", tt.name, got, tt.want)
		}
	}
	for m, want := range map[string]string{"prefix": "prefix", "instruct": "instruct", "": "afresh", "afresh": "afresh", "telepathy": "other"} {
		if got := Methods[Method(m)]; got != want {
			t.Errorf("Method(%q) is %s, want %s", m, got, want)
		}
	}
}
