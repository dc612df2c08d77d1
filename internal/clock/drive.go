package clock

import "time"

// Next returns the deadline of the earliest pending timer, and false when
// none is pending. A driver of virtual time (the day simulator) advances a
// Fake to it once everything it drives is waiting.
func (f *Fake) Next() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var at time.Time
	for i, t := range f.timers {
		if i == 0 || t.at.Before(at) {
			at = t.at
		}
	}
	return at, len(f.timers) > 0
}
