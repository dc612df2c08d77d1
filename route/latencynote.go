package route

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Latencies are kept in the Store as notes (state.Store.SetNote), one
// "latency:<route>" per route holding its decaying average in
// milliseconds, so that a latency-aware chain keeps its order across a
// restart or a config reload, and instances sharing a Redis share it. None
// of it is on a request's path: New reads the notes; a goroutine writes the
// averages that changed, at most every latencySaveEvery (started by the
// answer that finds the last write that old) and at Close; another reads
// them again every latencyRefreshEvery (started by a latency-aware walk),
// taking the averages of routes with no new answer here since the last write.

const (
	latencyPrefix       = "latency:"
	latencySaveEvery    = 10 * time.Second
	latencyRefreshEvery = 30 * time.Second
	// latencyTTL is how long a route's average is kept after its last write.
	latencyTTL = 24 * time.Hour
	// latencyTimeout bounds each read or write of the notes.
	latencyTimeout = 2 * time.Second
)

// loadLatency reads the averages kept in the store. A failure is dropped:
// the averages are measured again.
func (r *Router) loadLatency() {
	ctx, cancel := context.WithTimeout(context.Background(), latencyTimeout)
	defer cancel()
	notes, err := r.store.Notes(ctx, latencyPrefix)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, data := range notes {
		ms, err := strconv.ParseFloat(string(data), 64)
		if err != nil || !(ms > 0) || ms > float64(latencyTTL/time.Millisecond) {
			continue
		}
		id := strings.TrimPrefix(key, latencyPrefix)
		s := r.stats[id]
		if s == nil {
			s = &routeStats{}
			r.stats[id] = s
		}
		if !s.dirty { // an answer here since the last write wins
			s.ewmaMS = ms
		}
	}
}

// saveLatency writes the averages that changed since the last write.
func (r *Router) saveLatency() {
	r.mu.Lock()
	changed := make(map[string]float64)
	for id, s := range r.stats {
		if s.dirty {
			changed[id] = s.ewmaMS
			s.dirty = false
		}
	}
	r.mu.Unlock()
	if len(changed) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), latencyTimeout)
	defer cancel()
	for id, ms := range changed {
		v := strconv.FormatFloat(ms, 'f', 1, 64)
		_ = r.store.SetNote(ctx, latencyPrefix+id, []byte(v), latencyTTL)
	}
}

// due reports whether the last run of a periodic note task (unix nanos in
// *last) began every ago or more, and claims this run if so. r.mu must be
// held.
func due(last *int64, now time.Time, every time.Duration) bool {
	if now.UnixNano()-*last < int64(every) {
		return false
	}
	*last = now.UnixNano()
	return true
}
