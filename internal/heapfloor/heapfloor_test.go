package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/tollfree/tollfree/internal/testenv"
)

const mb = 1 << 20

func TestGOGCForMakesTheGoalTheFloorOrTwiceTheLiveHeap(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 200},          // nothing known: the floor, as Go's minimum at GOGC=200
		{mb, 200},         // capped: Go's minimum, 4 MB·GOGC/100, must not pass the floor
		{8 * mb / 3, 200}, // 3·live is the floor
		{3 * mb, 166},
		{4 * mb, 100}, // 2·live is the floor
		{10 * mb, 100},
		{1 << 40, 100},
	} {
		p := gogcFor(8*mb, tc.live)
		if p != tc.want {
			t.Errorf("gogcFor(8 MB, %d) = %d, want %d", tc.live, p, tc.want)
		}
		// The goal Go makes of it: the larger of its minimum and
		// live·(1+GOGC/100).
		goal := max(uint64(goMinimum)*uint64(p)/100, tc.live*uint64(100+p)/100)
		want := max(8*mb, 2*tc.live)
		if tc.live > 0 && (goal > want || want-goal > want/100) {
			t.Errorf("live %d: GOGC %d makes a goal of %d, want %d", tc.live, p, goal, want)
		}
	}
}

func TestTuneSkipsSmallMovesButAlwaysGoesBackTo100(t *testing.T) {
	var set []int
	tu := newTuner(8*mb, func(p int) { set = append(set, p) })
	tu.tune(3 * mb)           // 166
	tu.tune(3*mb + mb/20)     // 162: less than 5 away, kept
	tu.tune(3*mb + mb/2)      // 128
	tu.tune(3*mb + 55*mb/100) // 125: less than 5 away, kept
	tu.tune(4 * mb)           // 100: always
	tu.tune(5 * mb)           // 100 still: nothing to do
	tu.stop()                 // 100 already
	want := []int{200, 166, 128, 100}
	if len(set) != len(want) {
		t.Fatalf("GOGC set to %v, want %v", set, want)
	}
	for i := range want {
		if set[i] != want[i] {
			t.Fatalf("GOGC set to %v, want %v", set, want)
		}
	}
}

// goal reads the runtime's heap goal.
func goal() uint64 { return read("/gc/heap/goal:bytes") }

// gogc reads GOGC without changing it.
func gogc() int { return int(read("/gc/gogc:percent")) }

func read(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestStartKeepsTheGoalAtTheFloor runs the floor on this process's own
// collector: a small live heap gets a goal of the floor, not Go's 4 MB; a
// live heap above half the floor gets twice itself, as without the floor;
// stop puts GOGC back.
func TestStartKeepsTheGoalAtTheFloor(t *testing.T) {
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	if g := goal(); g > 6*mb {
		t.Fatalf("this test process's heap goal is %d MB before the floor: too large to tell the floor's effect apart", g/mb)
	}
	stop := Start(Default)
	defer stop()
	runtime.GC() // the cleanup runs after it, and sets the goal
	testenv.WaitFor(t, "the goal at the floor", func() bool {
		g := goal()
		return g >= Default-Default/50 && g <= Default+Default/50
	})

	ballast := make([]byte, 7*mb) // live: 2·live is above the floor
	runtime.GC()
	runtime.GC()
	testenv.WaitFor(t, "GOGC back at 100 with 7 MB live", func() bool {
		return gogc() == 100 && goal() >= 14*mb
	})
	runtime.KeepAlive(ballast)

	ballast = nil
	runtime.GC()
	runtime.GC()
	testenv.WaitFor(t, "the goal at the floor again", func() bool {
		g := goal()
		return gogc() > 100 && g >= Default-Default/50 && g <= Default+Default/50
	})
	stop()
	if p := gogc(); p != 100 {
		t.Errorf("after stop, GOGC = %d, want 100", p)
	}
}

func TestStartLeavesAGOGCTheEnvironmentSets(t *testing.T) {
	t.Setenv("GOGC", "100")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	stop := Start(Default)
	defer stop()
	runtime.GC()
	runtime.GC()
	if p := gogc(); p != 100 {
		t.Errorf("with GOGC=100 in the environment, GOGC became %d", p)
	}
}
