package testenv

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

// LiveHeap returns the bytes of heap still reachable, after two
// collections (the second frees what the first's finalizers let go): what
// a benchmark's state holds, not its garbage.
func LiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// WriteHeapProfile writes a heap profile to path: for a benchmark that
// profiles what its state holds while that state is still open (the test
// binary's -memprofile is written after the benchmark has closed it).
func WriteHeapProfile(tb testing.TB, path string) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		tb.Fatal(err)
	}
}
