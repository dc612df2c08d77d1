// Package heapfloor gives Go's garbage collector a larger minimum heap
// goal than its built-in 4 MB, without raising the goal of a heap that is
// already large.
//
// The idea: Go collects whenever the heap reaches its goal, the larger of
// twice the heap that survived the last collection (GOGC=100) and a
// minimum of 4 MB. A gateway's live heap is small (1 to 2 MB: the plan, a
// few pools, the compiled JSON Schema drafts), while each request
// allocates 17 to 19 KB that dies with it. So under load the 4 MB minimum
// is what decides, and the collector ran about 75 times a second at 16
// connections, each cycle marking the whole live heap again: 20 µs of CPU
// a streamed request of the gateway's 135 (issue 18 item 3; with the
// collector off, 114). At 64 connections the live heap is 3 to 4 MB, and
// twice that decides instead.
//
// Start keeps the goal at max(floor, twice the live heap): the minimum
// moves from 4 MB to floor, and a heap whose double is above floor gets
// Go's own goal, unchanged. serve's floor is 6 MB: with a live heap of
// 1.5 MB that is 4.5 MB of room between collections rather than 2.5, so
// the collector runs about half as often under light load; at 64
// connections, where twice the live heap is already 6 to 8 MB, the
// goal, and the memory, stay what they were. (A floor of 8 MB measured
// about as fast at 16 connections and added 1 MB to the resident set at
// 64, which issue 18 caps at 30 MB.)
//
// Go has no setting for the minimum (it is 4 MB times GOGC/100), so the
// floor is made with GOGC: after each collection (a cleanup on an object
// made for it, run once the collector found it unreachable) the live heap
// L is read from runtime/metrics, and GOGC set to 100·(floor/L − 1), kept
// between 100 and 100·floor/4 MB. Then the goal, max(4 MB·GOGC/100,
// L·(1+GOGC/100)), is floor while 2L is below it, and 2L after. Changing
// GOGC takes the heap lock, not the world, and is done only when the
// value moves by 5 or more. A tuner like it is small enough that a
// dependency for it (github.com/cch123/gogctuner does the same with a
// memory limit as its target) would add more than it saves.
//
// A process started with GOGC set keeps it: Start does nothing then.
package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Default is the floor serve uses (see the package doc).
const Default = 6 << 20

// goMinimum is the runtime's minimum heap goal at GOGC=100.
const goMinimum = 4 << 20

// liveMetric is the heap the last collection found live.
const liveMetric = "/gc/heap/live:bytes"

// tuner holds one floor's state.
type tuner struct {
	floor  uint64
	adjust func(percent int) // debug.SetGCPercent; a test's recorder

	mu      sync.Mutex // guards the rest: a cleanup and stop may overlap
	sample  [1]metrics.Sample
	percent int
	stopped bool
}

// sentinel is what the collector frees each cycle: a pointer field keeps
// it out of the tiny allocator, whose blocks outlive their objects.
type sentinel struct{ _ *int }

// Start keeps the heap goal at max(floor, twice the live heap) until stop
// is called, which puts GOGC back as it was. It does nothing (stop does
// nothing either) when the environment sets GOGC: the operator's choice
// wins, and GOGC=100 turns the floor off.
func Start(floor uint64) (stop func()) {
	if _, set := os.LookupEnv("GOGC"); set || floor <= goMinimum {
		return func() {}
	}
	t := newTuner(floor, func(p int) { debug.SetGCPercent(p) })
	t.arm()
	return t.stop
}

func newTuner(floor uint64, adjust func(int)) *tuner {
	t := &tuner{floor: floor, adjust: adjust, percent: 100}
	t.sample[0].Name = liveMetric
	t.tune(0)
	return t
}

// stop puts GOGC back at 100, for good.
func (t *tuner) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.stopped {
		t.stopped = true
		t.set(100)
	}
}

// arm asks to hear of the next collection.
func (t *tuner) arm() {
	runtime.AddCleanup(&sentinel{}, func(t *tuner) { t.collected() }, t)
}

// collected runs after a collection: the goal for the next, then the
// question again.
func (t *tuner) collected() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	metrics.Read(t.sample[:])
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		t.tuneLocked(t.sample[0].Value.Uint64())
	}
	t.arm()
}

// tune sets GOGC for a live heap of live bytes (0: none known yet).
func (t *tuner) tune(live uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tuneLocked(live)
}

func (t *tuner) tuneLocked(live uint64) {
	p := gogcFor(t.floor, live)
	// A move of less than 5 is not worth the heap lock, but the way
	// back to 100 is always taken: above the floor, Go's own goal.
	if d := p - t.percent; d > -5 && d < 5 && p != 100 {
		return
	}
	t.set(p)
}

func (t *tuner) set(p int) {
	if p != t.percent {
		t.percent = p
		t.adjust(p)
	}
}

// gogcFor is the GOGC that makes the goal of a heap with live bytes live
// max(floor, 2·live): 100·(floor/live − 1), between 100 and
// 100·floor/4 MB (above which Go's own minimum, 4 MB·GOGC/100, would
// pass floor).
func gogcFor(floor, live uint64) int {
	most := int(100 * floor / goMinimum)
	if live == 0 {
		return most
	}
	ratio := int(100 * floor / live) // 100·floor/live: at least 200 below the floor
	if ratio < 200 {
		return 100
	}
	return min(ratio-100, most)
}
