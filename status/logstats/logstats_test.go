package logstats

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/calllog"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/route"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const statsPlan = `
providers:
  groq: {preset: groq}
  gemini: {preset: gemini}
chains:
  answer: {routes: [gemini/gemini-2.5-flash, groq/llama-3.3-70b-versatile]}
`

// sampleLog is two days of a small gateway's call log, with two bad lines.
func sampleLog(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	w := calllog.New(&b)
	day1 := time.Date(2026, 6, 15, 9, 0, 0, 0, time.UTC)
	add := func(at time.Time, route, outcome string, latMS float64, in, out int, cached bool) {
		prov := route[:bytes.IndexByte([]byte(route), '/')]
		w.Write(&calllog.Record{Time: at, RequestID: "req", Chain: "answer", Route: route, Provider: prov, Outcome: outcome,
			LatencyMS: latMS, TokensIn: in, TokensOut: out, Cached: cached})
	}
	const groq, gem = "groq/llama-3.3-70b-versatile", "gemini/gemini-2.5-flash"
	for i := range 17 {
		add(day1.Add(time.Duration(i)*time.Minute), groq, "ok", float64(200+10*i), 100, 20, false)
	}
	add(day1.Add(20*time.Minute), groq, "rate_minute", 35, 0, 0, false)
	add(day1.Add(21*time.Minute), groq, "rate_minute", 40, 0, 0, false)
	add(day1.Add(22*time.Minute), groq, "cancelled", 3000, 100, 0, false)
	add(day1.Add(23*time.Minute), groq, "ok", 0, 0, 0, true)
	b.WriteString("{\"time\":\"2026-06-15T09:30:00Z\",\"route\":\n") // cut by a crash
	add(day1.Add(time.Hour), gem, "ok", 1500, 300, 40, false)
	add(day1.Add(time.Hour+time.Minute), gem, "rate_day", 120, 0, 0, false)
	add(day1.Add(time.Hour+2*time.Minute), gem, "bad_request", 90, 0, 0, false)
	b.WriteString("not json\n")
	// 03:00 UTC on the 16th is still the 15th in Los Angeles.
	day2 := time.Date(2026, 6, 16, 3, 0, 0, 0, time.UTC)
	add(day2, groq, "ok", 250, 80, 10, false)
	add(day2.Add(10*time.Hour), groq, "ok", 260, 80, 10, false)
	add(day2.Add(10*time.Hour), "old/retired", "gone", 50, 0, 0, false)
	return b.Bytes()
}

func TestSummarize(t *testing.T) {
	plan, err := config.Parse("stats.yaml", []byte(statsPlan), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	log := sampleLog(t)
	tests := []struct {
		name   string
		loc    *time.Location
		asJSON bool
	}{
		{name: "utc", loc: time.UTC},
		{name: "los_angeles", loc: la},
		{name: "json", loc: time.UTC, asJSON: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum, err := Summarize(bytes.NewReader(log), "calls.jsonl", tt.loc, plan)
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if sum.Records != 27 || sum.BadLines != 2 || sum.FirstBadLine != 22 {
				t.Errorf("records %d, bad %d (first %d); want 27, 2 (first 22)", sum.Records, sum.BadLines, sum.FirstBadLine)
			}
			var out bytes.Buffer
			if tt.asJSON {
				enc := json.NewEncoder(&out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(sum); err != nil {
					t.Fatal(err)
				}
			} else {
				sum.WriteTable(&out)
			}
			golden(t, filepath.Join("testdata", "stats_"+tt.name+".golden"), out.String())
		})
	}
}

func TestStatsRow(t *testing.T) {
	sum, err := Summarize(bytes.NewReader(sampleLog(t)), "calls.jsonl", time.UTC, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := sum.Rows[0]
	if r.Day != "2026-06-15" || r.Route != "gemini/gemini-2.5-flash" {
		// Without a plan, routes sort by name.
		t.Fatalf("first row %s %s, want 2026-06-15 gemini/gemini-2.5-flash", r.Day, r.Route)
	}
	r = sum.Rows[1]
	tests := []struct {
		name      string
		got, want any
	}{
		{"calls (cached excluded)", r.Calls, 20},
		{"ok", r.OK, 17},
		{"cached", r.Cached, 1},
		{"failovers (cancelled excluded)", r.Failovers, 2},
		{"failover rate (cancelled left out)", r.FailoverRate, 2.0 / 19},
		{"tokens in", r.TokensIn, 1800},
		{"tokens out", r.TokensOut, 340},
		// ok latencies 200..360 by 10: nearest rank 9 is 280, rank 17 is 360.
		{"p50 within 1%", math.Abs(r.LatencyP50-280) <= 2.8, true},
		{"p95 within 1%", math.Abs(r.LatencyP95-360) <= 3.6, true},
		{"outcomes", fmt.Sprint(r.Outcomes), "map[cancelled:1 ok:17 rate_minute:2]"},
		{"no limits without a plan", r.RPDLimit, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

// genLog produces n records on the fly, so that reading a large log is
// tested without holding it.
type genLog struct {
	n, i int
	buf  []byte
	rec  calllog.Record
}

func (g *genLog) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.i == g.n {
			return 0, io.EOF
		}
		g.rec = calllog.Record{Time: time.Date(2026, 6, 15, 0, 0, 10*g.i, 0, time.UTC), RequestID: "r", Route: fmt.Sprintf("p/m%d", g.i%7),
			Provider: "p", Outcome: []string{"ok", "ok", "ok", "rate_minute"}[g.i%4], LatencyMS: float64(g.i % 1000), TokensIn: 10, TokensOut: 1}
		line, err := json.Marshal(&g.rec)
		if err != nil {
			return 0, err
		}
		g.buf = append(line, '\n')
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

func TestSummarizeLarge(t *testing.T) {
	const n = 30_000 // 3.5 days of records, one every 10 s
	sum, err := Summarize(&genLog{n: n}, "gen", time.UTC, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != n || sum.BadLines != 0 {
		t.Fatalf("records %d, bad %d; want %d, 0", sum.Records, sum.BadLines, n)
	}
	if got, want := len(sum.Rows), 4*7; got != want {
		t.Errorf("%d rows, want %d (4 days, 7 routes)", got, want)
	}
	calls := 0
	for _, r := range sum.Rows {
		calls += r.Calls
	}
	if calls != n {
		t.Errorf("rows count %d calls, want %d", calls, n)
	}
}

func BenchmarkSummarize(b *testing.B) {
	for b.Loop() {
		if _, err := Summarize(&genLog{n: 100_000}, "gen", time.UTC, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file: %v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// rescueLog is a call log with the lines the router writes when it rescues
// broken streams and retries blips politely (issue 13): each request's
// attempts in order, as route.Attempt values through FromAttempt.
func rescueLog(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	w := calllog.New(&b)
	const groq, gem, other = "groq/llama-3.3-70b-versatile", "gemini/gemini-2.5-flash", "cerebras/gpt-oss-120b"
	at := time.Date(2026, 6, 15, 9, 0, 0, 0, time.UTC)
	add := func(a route.Attempt) {
		a.Chain, a.Provider, a.Start, a.Latency = "answer", a.Route[:strings.IndexByte(a.Route, '/')], at, 300*time.Millisecond
		at = at.Add(time.Minute)
		w.Write(calllog.FromAttempt(&a))
	}
	// Three streams break on groq after their first token; gemini finishes
	// each, one way each.
	for id, method := range []string{"prefix", "instruct", ""} {
		req := fmt.Sprint("s", id)
		add(route.Attempt{RequestID: req, Route: groq, Class: failure.Overloaded, Stream: true})
		add(route.Attempt{RequestID: req, Route: gem, Class: failure.OK, Stream: true, Part: 1, Method: method})
	}
	// One breaks and gemini refuses the prefix: not rescued.
	add(route.Attempt{RequestID: "s3", Route: groq, Class: failure.Timeout, Stream: true})
	add(route.Attempt{RequestID: "s3", Route: gem, Class: failure.BadRequest, Stream: true, Part: 1, Method: "prefix"})
	// A 500 on groq, retried there politely: answered.
	add(route.Attempt{RequestID: "r1", Route: groq, Class: failure.Overloaded})
	add(route.Attempt{RequestID: "r1", Route: groq, Class: failure.OK, Retry: true})
	// A short 429 on groq, retried, refused again: gemini answers.
	add(route.Attempt{RequestID: "r2", Route: groq, Class: failure.RateMinute})
	add(route.Attempt{RequestID: "r2", Route: groq, Class: failure.RateMinute, Retry: true})
	add(route.Attempt{RequestID: "r2", Route: gem, Class: failure.OK})
	// A route with neither: no line of its own below the table.
	add(route.Attempt{RequestID: "q1", Route: other, Class: failure.OK, Stream: true})
	// The next day, a stream gemini finished broke on its way: groq takes
	// its third part by instruction.
	at = at.Add(24 * time.Hour)
	add(route.Attempt{RequestID: "s4", Route: gem, Class: failure.Timeout, Stream: true})
	add(route.Attempt{RequestID: "s4", Route: groq, Class: failure.Overloaded, Stream: true, Part: 1, Method: "instruct"})
	add(route.Attempt{RequestID: "s4", Route: other, Class: failure.OK, Stream: true, Part: 2, Method: "instruct"})
	return b.Bytes()
}

// TestSummarizeRescues: `tollfree log stats` shows, below its table, the
// streams each route rescued by method and the polite retries made on it,
// for the routes and days that have any, and their total; its JSON says
// the same per row and in total.
func TestSummarizeRescues(t *testing.T) {
	plan, err := config.Parse("stats.yaml", []byte(statsPlan), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Summarize(bytes.NewReader(rescueLog(t)), "calls.jsonl", time.UTC, plan)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sum.WriteTable(&out)
	golden(t, filepath.Join("testdata", "stats_rescues.golden"), out.String())

	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sum); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "stats_rescues_json.golden"), js.String())
}

// TestStatsSchemaFailures: answers that broke their request's schema
// (outcome invalid, issue 15) are counted per route, as failures that
// handed their request on (to a repair or the next route), and shown in
// the table's SCHEMA FAIL column.
func TestStatsSchemaFailures(t *testing.T) {
	st := NewStats(time.UTC)
	at := time.Date(2026, 6, 15, 9, 0, 0, 0, time.UTC)
	const cer, groq = "cerebras/gpt-oss-120b", "groq/openai/gpt-oss-120b"
	for _, r := range []calllog.Record{
		{Route: groq, Provider: "groq", Outcome: "rate_minute"},
		{Route: cer, Provider: "cerebras", Outcome: "invalid", TokensIn: 412, TokensOut: 18},
		{Route: cer, Provider: "cerebras", Outcome: "ok", Repair: 1, TokensIn: 440, TokensOut: 18},
		{Route: cer, Provider: "cerebras", Outcome: "invalid"},
		{Route: cer, Provider: "cerebras", Outcome: "invalid", Repair: 1},
	} {
		r.Time = at
		st.Add(&r)
	}
	rows := st.Rows(nil)
	var got *Row
	for i := range rows {
		if rows[i].Route == cer {
			got = &rows[i]
		}
	}
	if got == nil || got.SchemaFailures != 3 || got.Calls != 4 || got.OK != 1 || got.Failovers != 3 {
		t.Fatalf("cerebras row = %+v, want 4 calls, 1 ok, 3 schema failures, 3 failovers", got)
	}
	var out bytes.Buffer
	(&Summary{File: "calls.jsonl", TZ: "UTC", Records: 5, Rows: rows}).WriteTable(&out)
	if !bytes.Contains(out.Bytes(), []byte("SCHEMA FAIL")) || !bytes.Contains(out.Bytes(), []byte("invalid 75%")) {
		t.Errorf("table lacks the schema failures:\n%s", out.String())
	}
}
