package calllog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzReader reads a fuzzed log with a record the Writer wrote after it,
// on a line of its own. The reader must not fail or loop on any input, must
// count no more lines than the input has, must return only records with a
// time and a route, and must read the written record back unchanged as the
// last one: garbage before a newline never swallows the next record.
func FuzzReader(f *testing.F) {
	var seed bytes.Buffer
	w := New(&seed)
	w.Write(&Record{Time: time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC), RequestID: "r1", Chain: "answer",
		Route: "groq/llama-3.3-70b-versatile", Provider: "groq", Model: "llama-3.3-70b-versatile", Status: 200, Outcome: "ok", LatencyMS: 412.5, TokensIn: 12, TokensOut: 40})
	w.Write(&Record{Time: time.Date(2026, 6, 15, 10, 0, 1, 0, time.UTC), RequestID: "r2", Chain: "answer",
		Route: "gemini/gemini-2.5-flash", Status: 429, Outcome: "rate_day", Error: "rate_day: quota exceeded",
		RestKey: "gemini/gemini-2.5-flash", RestUntil: time.Date(2026, 6, 16, 7, 0, 0, 0, time.UTC), Hedge: true, Stream: true, Part: 1, Cut: "stall"})
	good := seed.Bytes()
	f.Add(good, "r3", "cerebras/gpt-oss-120b", int64(0))
	f.Add(good[:40], "r4", "x", int64(-1))
	f.Add([]byte("\n\n  \r\n{]\n"+`{"time":"2026-06-15T10:00:00Z"}`), "", "a/b", int64(1e18))
	f.Add([]byte(`{"time":"2026-06-15T10:00:00Z","route":"x","error":"`+strings.Repeat("a", 70<<10)), "\xff", "y", int64(7))
	f.Add([]byte(`{"time":"0001-01-01T00:00:00Z","route":"x"}`+"\n"+`{"time":"2026-06-15T10:00:00+02:00","route":"\u2028"}`), "é", "\u2028", int64(1))
	f.Fuzz(func(t *testing.T, garbage []byte, id, routeID string, nanos int64) {
		if routeID == "" {
			routeID = "r"
		}
		want := Record{Time: time.Unix(0, nanos).UTC(), RequestID: id, Route: routeID, Outcome: "ok", Status: 200}
		if want.Time.IsZero() {
			return // not a record: the reader rightly skips it
		}
		var last bytes.Buffer
		New(&last).Write(&want)
		in := append(append(append([]byte(nil), garbage...), '\n'), last.Bytes()...)

		r := NewReader(bytes.NewReader(in))
		var got []Record
		for len(got) <= len(in) {
			var rec Record
			err := r.Next(&rec)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if rec.Time.IsZero() || rec.Route == "" {
				t.Fatalf("record without time or route: %+v", rec)
			}
			got = append(got, rec)
		}
		if lines := bytes.Count(in, []byte("\n")); r.Lines() > lines {
			t.Fatalf("read %d lines of an input with %d", r.Lines(), lines)
		}
		bad, first := r.Bad()
		if bad < 0 || bad > r.Lines() || (bad > 0) != (first > 0) || first > r.Lines() {
			t.Fatalf("Bad() = %d, %d after %d lines", bad, first, r.Lines())
		}
		if len(got) == 0 {
			t.Fatalf("the written record was not read back from %q", in)
		}
		if g := got[len(got)-1]; !sameRecord(g, want) {
			t.Fatalf("last record %+v, want %+v", g, want)
		}
	})
}

// sameRecord compares records as their JSON, which is what the log keeps
// (invalid UTF-8 in a string is written as U+FFFD).
func sameRecord(a, b Record) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var x, y Record
	json.Unmarshal(ja, &x)
	json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y) && x.Time.Equal(b.Time)
}
