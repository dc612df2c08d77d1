package testenv

import "runtime"

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
