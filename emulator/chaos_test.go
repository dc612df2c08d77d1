package emulator

import (
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestConnReset: a ConnReset call resets the connection, before any byte
// or, streamed with After, after that many chunks, in both dialects.
func TestConnReset(t *testing.T) {
	for _, flavor := range []string{FlavorGroq, FlavorGemini} {
		t.Run(flavor, func(t *testing.T) {
			v := newEnv(t)
			v.add(flavor, Model{ID: "m", Answer: shortAnswer})
			for _, stream := range []bool{false, true} {
				v.e.Script(flavor, "m", Step{Kind: ConnReset})
				if r := v.call(flavor, "m", stream); !errors.Is(r.err, syscall.ECONNRESET) {
					t.Errorf("stream %v: err %v (status %d), want a connection reset", stream, r.err, r.status)
				}
			}
			v.e.Script(flavor, "m", Step{Kind: ConnReset, After: 2})
			r := v.call(flavor, "m", true)
			if r.status != 200 || !errors.Is(r.err, syscall.ECONNRESET) {
				t.Fatalf("status %d, err %v; want 200 then a reset", r.status, r.err)
			}
			if !strings.Contains(r.body, `"Hi `) || !strings.Contains(r.body, "there, ") || strings.Contains(r.body, "friend") {
				t.Errorf("body %q, want the first two chunks only", r.body)
			}
			if recs := v.e.Records(); recs[len(recs)-1].Behaviour != string(ConnReset) {
				t.Errorf("behaviour %q, want %q", recs[len(recs)-1].Behaviour, ConnReset)
			}
		})
	}
}

// TestGarbage: a Garbage call answers 200 with bytes that are not JSON,
// as events when a stream was asked for, and never a line that parses.
func TestGarbage(t *testing.T) {
	for _, flavor := range []string{FlavorGroq, FlavorGemini} {
		for _, stream := range []bool{false, true} {
			v := newEnv(t)
			v.add(flavor, Model{ID: "m"})
			v.e.Script(flavor, "m", Step{Kind: Garbage})
			r := v.call(flavor, "m", stream)
			want := "application/json"
			if stream {
				want = "text/event-stream"
			}
			if r.err != nil || r.status != 200 || r.header.Get("Content-Type") != want {
				t.Fatalf("%s stream %v: status %d, type %q, err %v", flavor, stream, r.status, r.header.Get("Content-Type"), r.err)
			}
			for _, line := range strings.Split(r.body, "\n") {
				if json.Valid([]byte(strings.TrimPrefix(line, "data: "))) {
					t.Errorf("%s stream %v: a line parses: %q", flavor, stream, line)
				}
			}
		}
	}
}

// TestSetMix: a mix draws its steps in proportion to their weights, the
// same sequence for the same seed, and a queued step still comes first.
func TestSetMix(t *testing.T) {
	kinds := func(seed uint64) string {
		v := newEnv(t)
		v.add(FlavorGroq, Model{ID: "m"})
		v.e.SetMix(FlavorGroq, "m", Mix{Seed: seed, Steps: []Weighted{
			{3, Step{Kind: Answer}}, {1, Step{Kind: HighDemand}}, {0, Step{Kind: Hang}},
		}})
		v.e.Script(FlavorGroq, "m", Step{Kind: Empty})
		var b strings.Builder
		for range 40 {
			v.call(FlavorGroq, "m", false)
		}
		letter := map[string]string{"answer": "a", "high_demand": "d", "hang": "g", "empty": "e"}
		for _, r := range v.e.Records() {
			b.WriteString(letter[r.Behaviour])
		}
		return b.String()
	}
	a, b := kinds(7), kinds(7)
	if a != b {
		t.Fatalf("same seed, different draws:\n%s\n%s", a, b)
	}
	if a[0] != 'e' || strings.Contains(a, "g") || len(a) != 40 {
		t.Errorf("draws %s: want the queued empty first and never a hang", a)
	}
	if n := strings.Count(a[1:], "d"); n < 3 || n > 20 {
		t.Errorf("%d high_demand of 39 draws at weight 1 in 4: %s", n, a)
	}
	if kinds(8) == a {
		t.Errorf("another seed drew the same sequence %s", a)
	}
}
