//go:build race

package search

// raceEnabled: under the race detector sync.Pool drops a quarter of what
// is put back, so a pooled query allocates its scratch again now and then.
const raceEnabled = true
