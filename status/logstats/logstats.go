// Package logstats sums up a call log (calllog's JSONL records) per route
// and per day, for `tollfree log stats`: calls, answers, failovers, schema
// failures, cache hits, latency percentiles, tokens against the route's
// daily limits, and rescued streams. Its words and rates are package
// figures', so a number here means what the same word means on the status
// page and in the metrics.
package logstats

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollfree/tollfree/calllog"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/status/figures"
)

// Stats aggregates call-log records per route and per day (`tollfree log
// stats`, issue 6 part 5). Its memory grows with routes times days, never
// with the number of records: latencies go into a fixed-ratio histogram
// (figures.Histogram).
// It is not safe for concurrent use.
type Stats struct {
	loc  *time.Location
	rows map[rowKey]*acc
	// Records counts the records added.
	Records int
}

type rowKey struct {
	day   string
	route string
}

// acc is one row being accumulated.
type acc struct {
	Row
	lat figures.Histogram
}

// Row is one route on one day.
type Row struct {
	// Day is the date, 2006-01-02, in the Stats' location.
	Day      string `json:"day"`
	Route    string `json:"route"`
	Provider string `json:"provider"`
	// Calls counts the attempts that reached the provider: every record but
	// cached answers. Failed and cancelled attempts count: providers count
	// them against their limits too.
	Calls int `json:"calls"`
	OK    int `json:"ok"`
	// Failovers counts the attempts that sent their request on to the next
	// route (figures.HandsOn): every failure except cancelled (a lost hedge
	// or a caller gone), silent_loser (a hedge lost in silence: another
	// route had answered), bad_request and refused (those answer the caller
	// with the provider's reason; refused fails over only in a chain that
	// allows it, which the log does not say). An outcome this build does
	// not know counts as one.
	Failovers int `json:"failovers"`
	// FailoverRate is Failovers over the calls that were not cancelled,
	// package figures' definition, which the status page uses too.
	FailoverRate float64 `json:"failover_rate"`
	// SchemaFailures counts the answers that broke what their request
	// asked (outcome invalid: not JSON, or against the response_format
	// schema or a tool's parameters; issue 15). Each was repaired on the
	// same route or handed to the next: a route that keeps breaking schemas
	// shows here.
	SchemaFailures int `json:"schema_failures"`
	// Cached counts answers served from the cache for this route: no call.
	Cached int `json:"cached"`
	// Outcomes counts Calls by outcome ("ok", "rate_minute"...).
	Outcomes map[string]int `json:"outcomes"`
	// LatencyP50 and LatencyP95 are the latency quantiles of the ok
	// attempts, in milliseconds to 0.1 (at most 1% high: see
	// figures.Histogram); 0 when there is no ok attempt.
	LatencyP50 float64 `json:"latency_p50_ms"`
	LatencyP95 float64 `json:"latency_p95_ms"`
	TokensIn   int     `json:"tokens_in"`
	TokensOut  int     `json:"tokens_out"`
	// RPDLimit and TPDLimit are the route's own daily limits from the plan
	// (0: none, or a route the plan does not know). Calls and
	// TokensIn+TokensOut are what was used against them.
	RPDLimit int `json:"rpd_limit"`
	TPDLimit int `json:"tpd_limit"`
	Rescues
}

// Rescues counts what the figures package calls rescues and polite retries
// (issue 13). Absent from the JSON when zero.
type Rescues struct {
	// StreamsRescued counts the broken streams finished: ok calls of a
	// streamed request on a part after the first (figures.Rescued); the
	// stream had broken after its first token. RescuedBy counts the same
	// by how they were continued: "prefix", "instruct", "afresh" (nothing
	// had been streamed yet: no continuation on the line), or "other" (a
	// method this build does not know).
	StreamsRescued int            `json:"streams_rescued,omitempty"`
	RescuedBy      map[string]int `json:"rescued_by,omitempty"`
	// PoliteRetries counts the calls that were the polite retry of a blip
	// (the same route called once more after the wait it asked for), and
	// PoliteRetriesAnswered those that ended ok.
	PoliteRetries         int `json:"polite_retries,omitempty"`
	PoliteRetriesAnswered int `json:"polite_retries_answered,omitempty"`
}

// add counts one call record.
func (x *Rescues) add(r *calllog.Record) {
	if r.Retry {
		x.PoliteRetries++
		if r.Outcome == "ok" {
			x.PoliteRetriesAnswered++
		}
	}
	if figures.Rescued(classOf(r.Outcome), r.Stream, r.Part) {
		x.StreamsRescued++
		if x.RescuedBy == nil {
			x.RescuedBy = map[string]int{}
		}
		x.RescuedBy[figures.Methods[figures.Method(r.Continuation)]]++
	}
}

// sum adds y to x.
func (x *Rescues) sum(y Rescues) {
	x.StreamsRescued += y.StreamsRescued
	x.PoliteRetries += y.PoliteRetries
	x.PoliteRetriesAnswered += y.PoliteRetriesAnswered
	for m, n := range y.RescuedBy {
		if x.RescuedBy == nil {
			x.RescuedBy = map[string]int{}
		}
		x.RescuedBy[m] += n
	}
}

// any reports whether there is anything to show.
func (x Rescues) any() bool { return x.StreamsRescued > 0 || x.PoliteRetries > 0 }

// classOf is the class an outcome names; an outcome this build does not
// know is no answer.
func classOf(outcome string) failure.Class {
	if c, ok := failure.ParseClass(outcome); ok {
		return c
	}
	return failure.NumClasses
}

// NewStats returns empty Stats that bucket days in loc (nil means UTC).
func NewStats(loc *time.Location) *Stats {
	if loc == nil {
		loc = time.UTC
	}
	return &Stats{loc: loc, rows: map[rowKey]*acc{}}
}

// Add counts one record.
func (s *Stats) Add(r *calllog.Record) {
	s.Records++
	k := rowKey{day: r.Time.In(s.loc).Format(time.DateOnly), route: r.Route}
	a := s.rows[k]
	if a == nil {
		a = &acc{Row: Row{Day: k.day, Route: r.Route, Provider: r.Provider, Outcomes: map[string]int{}}}
		s.rows[k] = a
	}
	if r.Cached {
		a.Cached++
		return
	}
	a.Calls++
	a.Outcomes[r.Outcome]++
	a.TokensIn += r.TokensIn
	a.TokensOut += r.TokensOut
	switch r.Outcome {
	case "ok":
		a.OK++
		a.lat.Add(r.LatencyMS)
	case failure.Invalid.String():
		a.SchemaFailures++
	}
	if handsOn(r.Outcome) {
		a.Failovers++
	}
	a.Rescues.add(r)
}

// handsOn reports whether a record's outcome passed its request on to the
// next route (figures.HandsOn). An outcome this build does not know (a
// newer gateway's) is a failure, and counts as one that did.
func handsOn(outcome string) bool {
	c, known := failure.ParseClass(outcome)
	return !known || figures.HandsOn(c)
}

// Rows returns one row per route and day, by day, then in the plan's
// route order (routes the plan does not know last, by name), with the
// plan's daily limits. plan may be nil.
func (s *Stats) Rows(plan *config.Plan) []Row {
	order := map[string]int{}
	if plan != nil {
		for i, id := range plan.RouteOrder {
			order[id] = i + 1
		}
	}
	rows := make([]Row, 0, len(s.rows))
	for _, a := range s.rows {
		r := a.Row
		r.Outcomes = maps.Clone(a.Outcomes)
		r.RescuedBy = maps.Clone(a.RescuedBy)
		r.FailoverRate, _ = figures.Rate(r.Failovers, r.Calls-r.Outcomes["cancelled"])
		r.LatencyP50, r.LatencyP95 = round1(a.lat.Percentile(50)), round1(a.lat.Percentile(95))
		if plan != nil {
			if rt := plan.Routes[r.Route]; rt != nil {
				r.RPDLimit, r.TPDLimit = rt.Limits.RPD, rt.Limits.TPD
			}
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b Row) int {
		if c := cmp.Compare(a.Day, b.Day); c != 0 {
			return c
		}
		oa, ob := order[a.Route], order[b.Route]
		switch {
		case oa != 0 && ob != 0:
			return cmp.Compare(oa, ob)
		case oa != 0:
			return -1
		case ob != 0:
			return 1
		}
		return cmp.Compare(a.Route, b.Route)
	})
	return rows
}

func round1(ms float64) float64 { return math.Round(ms*10) / 10 }

// Summary is what `tollfree log stats -json` prints.
type Summary struct {
	// File is the log read.
	File string `json:"file"`
	// TZ is the zone days are counted in.
	TZ string `json:"tz"`
	// Records counts the records read; BadLines the lines skipped, the
	// first of them at FirstBadLine.
	Records      int   `json:"records"`
	BadLines     int   `json:"bad_lines"`
	FirstBadLine int   `json:"first_bad_line,omitempty"`
	Rows         []Row `json:"rows"`
	// Rescues are the rows' rescues and polite retries in total.
	Rescues
}

// Summarize reads the call log r (named file, for the summary) to its end,
// one line at a time, and aggregates it per route and day in loc (nil
// means UTC), with the plan's daily limits (plan may be nil).
func Summarize(r io.Reader, file string, loc *time.Location, plan *config.Plan) (*Summary, error) {
	if loc == nil {
		loc = time.UTC
	}
	rd := calllog.NewReader(r)
	st := NewStats(loc)
	var rec calllog.Record
	for {
		err := rd.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		st.Add(&rec)
	}
	bad, first := rd.Bad()
	sum := &Summary{File: file, TZ: loc.String(), Records: st.Records, BadLines: bad, FirstBadLine: first, Rows: st.Rows(plan)}
	for _, r := range sum.Rows {
		sum.Rescues.sum(r.Rescues)
	}
	return sum, nil
}

// WriteTable writes s as an aligned table, one line per route and day.
func (s *Summary) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DAY (%s)\tROUTE\tCALLS\tOK\tFAILOVER\tSCHEMA FAIL\tP50\tP95\tTOKENS IN\tTOKENS OUT\tRPD USED\tTPD USED\tCACHED\tOUTCOMES\n", s.TZ)
	for _, r := range s.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%d\t%s\t%s\t%d\t%d\t%s\t%s\t%d\t%s\n",
			r.Day, r.Route, r.Calls, r.OK, percent(r.FailoverRate, r.Calls-r.Outcomes["cancelled"]), r.SchemaFailures, ms(r.LatencyP50, r.OK), ms(r.LatencyP95, r.OK),
			r.TokensIn, r.TokensOut, used(r.Calls, r.RPDLimit), used(r.TokensIn+r.TokensOut, r.TPDLimit), r.Cached, mix(r.Outcomes, r.Calls))
	}
	tw.Flush()
	s.writeRescues(w)
	fmt.Fprintf(w, "\n%d records from %s", s.Records, s.File)
	if s.BadLines > 0 {
		fmt.Fprintf(w, "; %d bad lines skipped (the first is line %d)", s.BadLines, s.FirstBadLine)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "failover: share of the calls not cancelled that passed their request to the next route (failures other than bad_request, refused).")
	fmt.Fprintln(w, "schema fail: answers that broke what their request asked (JSON, its response_format schema, a tool's parameters); each was repaired or handed on.")
	fmt.Fprintln(w, "latency: of ok calls. used: calls and tokens against the route's own daily limits, counted per day above.")
	if s.Rescues.any() {
		fmt.Fprintln(w, "streams rescued: streams that broke after their first token and that the route finished, by how (afresh: nothing had been streamed yet).")
		fmt.Fprintln(w, "polite retries: calls of the same route once more after a blip (a bare 500, a short 429), and how many answered.")
	}
}

// writeRescues writes the rescued streams and polite retries of the routes
// and days that have any, and their total; nothing when there are none.
func (s *Summary) writeRescues(w io.Writer) {
	if !s.Rescues.any() {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DAY (%s)\tROUTE\tSTREAMS RESCUED\tPOLITE RETRIES\n", s.TZ)
	for _, r := range s.Rows {
		if r.Rescues.any() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Day, r.Route, rescued(r.Rescues), retries(r.Rescues))
		}
	}
	fmt.Fprintf(tw, "total\t\t%s\t%s\n", rescued(s.Rescues), retries(s.Rescues))
	tw.Flush()
}

// rescued formats the streams rescued: "3 (prefix 2, instruct 1)".
func rescued(x Rescues) string {
	if x.StreamsRescued == 0 {
		return "-"
	}
	var by []string
	for _, m := range figures.Methods {
		if n := x.RescuedBy[m]; n > 0 {
			by = append(by, fmt.Sprintf("%s %d", m, n))
		}
	}
	return fmt.Sprintf("%d (%s)", x.StreamsRescued, strings.Join(by, ", "))
}

// retries formats the polite retries: "2 (1 answered)".
func retries(x Rescues) string {
	if x.PoliteRetries == 0 {
		return "-"
	}
	return fmt.Sprintf("%d (%d answered)", x.PoliteRetries, x.PoliteRetriesAnswered)
}

func percent(f float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", f*100)
}

func ms(v float64, n int) string {
	switch {
	case n == 0:
		return "-"
	case v < 10:
		return fmt.Sprintf("%.1fms", v)
	case v < 1000:
		return fmt.Sprintf("%.0fms", v)
	}
	return fmt.Sprintf("%.2fs", v/1000)
}

func used(n, limit int) string {
	if limit == 0 {
		return fmt.Sprintf("%d/-", n)
	}
	return fmt.Sprintf("%d/%d", n, limit)
}

// mix formats the outcome shares, largest first: "ok 95% rate_minute 3%".
// Ties keep the decision table's order; labels outside it come last.
func mix(m map[string]int, total int) string {
	if total == 0 {
		return "-"
	}
	type oc struct {
		name string
		n    int
		rank int
	}
	var all []oc
	for name, n := range m {
		rank := 1 << 10
		if c, ok := failure.ParseClass(name); ok {
			rank = int(c)
		}
		all = append(all, oc{name, n, rank})
	}
	slices.SortFunc(all, func(a, b oc) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	parts := make([]string, 0, len(all))
	for _, o := range all {
		p := math.Round(float64(o.n) * 100 / float64(total))
		share := fmt.Sprintf("%.0f%%", p)
		if p == 0 {
			share = "<1%"
		}
		name := o.name
		if name == "" {
			name = "unknown"
		}
		parts = append(parts, name+" "+share)
	}
	return strings.Join(parts, " ")
}
