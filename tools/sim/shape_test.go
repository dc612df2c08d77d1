package sim

import (
	"reflect"
	"testing"
	"time"
)

// TestShapesAreReproducible: each shape is the same for the same seed,
// differs for another, and has the size and span it says.
func TestShapesAreReproducible(t *testing.T) {
	for _, name := range Shapes() {
		t.Run(name, func(t *testing.T) {
			a, err := MakeShape(name, 0, 1, 4)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := MakeShape(name, 0, 1, 4)
			c, _ := MakeShape(name, 0, 1, 5)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("seed 4 gave two different shapes")
			}
			if reflect.DeepEqual(a.Trace, c.Trace) {
				t.Errorf("seeds 4 and 5 gave the same trace")
			}
			days := 1
			if name == ShapeWeek {
				days = 7
			}
			if want := DefaultRequests(name) * days; len(a.Trace) != want {
				t.Errorf("%d arrivals, want %d", len(a.Trace), want)
			}
			for i, x := range a.Trace {
				if x.At < 0 || x.At >= time.Duration(days)*24*time.Hour || x.Prompt < 1 || (i > 0 && x.At < a.Trace[i-1].At) {
					t.Fatalf("arrival %d out of range or order: %+v", i, x)
				}
			}
			if _, err := tiers(a.Chain, a.Scale); err != nil {
				t.Errorf("chain: %v", err)
			}
		})
	}
	if _, err := MakeShape("month", 0, 1, 0); err == nil {
		t.Errorf("an unknown shape gave no error")
	}
}

// TestShapeTraits: what each shape is for shows in its trace.
func TestShapeTraits(t *testing.T) {
	chat := GenerateChat(1, 4000, 1)
	long := 0
	for _, a := range chat {
		if a.Answer >= 1500 {
			long++
		}
	}
	if long < 4000/12 || long > 4000/6 {
		t.Errorf("chat: %d long reasoning answers of 4000, want about one in eight", long)
	}
	// Bursts: some 8-minute span holds at least 3% of the day.
	if peak := busiest(chat, 8*time.Minute); peak < 120 {
		t.Errorf("chat: the busiest 8 minutes hold %d questions, want a burst of at least 120", peak)
	}
	batch := GenerateBatch(600, 1)
	for i := 1; i < len(batch); i++ {
		if gap := batch[i].At - batch[i-1].At; gap < 800*time.Millisecond || gap > 1200*time.Millisecond {
			t.Fatalf("batch: call %d comes %v after the one before, want back to back (0.8 to 1.2 s)", i, gap)
		}
	}
	// The week repeats: each day's hourly demand is close to the first's.
	week, _ := MakeShape(ShapeWeek, 3000, 1, 1)
	hours := make([]int, 7*24)
	for _, a := range week.Trace {
		hours[a.At/time.Hour]++
	}
	for d := 1; d < 7; d++ {
		diff := 0
		for h := range 24 {
			if h >= 13 && h < 18 {
				continue // the burst moves
			}
			x := hours[d*24+h] - hours[h]
			diff += max(x, -x)
		}
		if diff > 3000/4 {
			t.Errorf("week: day %d's hours differ from the first's by %d questions, want a repeating profile", d, diff)
		}
	}
	scale := WrongScale(CappedChain(), 1)
	seen := map[float64]bool{}
	for _, f := range scale {
		seen[f] = true
		if f != 0.5 && f != 1.5 {
			t.Errorf("wrong limits: factor %g, want 0.5 or 1.5", f)
		}
	}
	if !seen[0.5] || !seen[1.5] {
		t.Errorf("wrong limits: factors %v, want some above and some below", scale)
	}
}

func busiest(tr []Arrival, span time.Duration) int {
	best, j := 0, 0
	for i := range tr {
		for tr[i].At-tr[j].At > span {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}
