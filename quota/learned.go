package quota

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Learned limits are kept in the Store as notes (state.Store.SetNote), so a
// restart, a config reload and every instance sharing a Redis know them:
// one note "limit:<scope>|<window>" per limit, holding the limit and when
// it was last seen, kept for learnTTL after that. Nothing of it is on a
// request's path: a note is written by a goroutine when headers teach a new
// or changed limit (or an hour after the last write, to keep it alive), the
// notes are read by New, and read again every refreshEvery by a goroutine
// that Reserve starts. Close waits for those goroutines.

const (
	notePrefix = "limit:"
	// rewriteEvery is how long a learned limit seen again goes before its
	// note is written again, to keep it from expiring while in use.
	rewriteEvery = time.Hour
	// refreshEvery is how often the notes are read again, for the limits
	// other instances learned.
	refreshEvery = 30 * time.Second
	// noteTimeout bounds each read or write of the notes.
	noteTimeout = 2 * time.Second
)

// limitNote is a note's value.
type limitNote struct {
	Limit int64     `json:"limit"`
	Seen  time.Time `json:"seen"`
	// Since is when the provider first said this limit (issue 35); absent
	// from an older version's note, read as Seen.
	Since time.Time `json:"since,omitzero"`
}

func noteKey(k learnKey) string { return notePrefix + counterKey(k.scope, k.k) }

// parseNoteKey is noteKey's inverse.
func parseNoteKey(key string) (learnKey, bool) {
	rest, ok := strings.CutPrefix(key, notePrefix)
	i := strings.LastIndexByte(rest, '|')
	if !ok || i <= 0 {
		return learnKey{}, false
	}
	for k := kind(0); k < nKinds; k++ {
		if k.String() == rest[i+1:] {
			return learnKey{scope: rest[:i], k: k}, true
		}
	}
	return learnKey{}, false
}

// noteLearned records limit for key at now, and starts the note's write when
// the limit is new or changed, or its note is due to be kept alive. b.mu
// must be held.
func (b *Book) noteLearnedLocked(key learnKey, limit int64, now time.Time) {
	old, ok := b.learned[key]
	l := learnedLimit{limit: limit, seen: now, saved: old.saved, since: now}
	fresh := ok && now.Sub(old.seen) < learnTTL
	if fresh && old.limit == limit && !old.since.IsZero() {
		l.since = old.since
	}
	if !fresh || old.limit != limit || now.Sub(old.saved) >= rewriteEvery {
		l.saved = now
		since := l.since
		b.wg.Go(func() { b.saveLimit(key, limitNote{Limit: limit, Seen: now, Since: since}) })
	}
	b.learned[key] = l
	b.learnedGen.Add(1)
	b.anyLearned.Store(true)
}

// saveLimit writes one learned limit's note. A failure is dropped: the
// limit still holds here, and is relearned from the next answer elsewhere.
func (b *Book) saveLimit(key learnKey, n limitNote) {
	data, err := json.Marshal(n)
	if err != nil {
		return
	}
	ttl := learnTTL - b.clock.Now().Sub(n.Seen)
	if ttl <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), noteTimeout)
	defer cancel()
	_ = b.store.SetNote(ctx, noteKey(key), data, ttl)
}

// loadLearned reads every learned limit's note, keeping for each limit the
// one seen last (here or in the store).
func (b *Book) loadLearned() {
	ctx, cancel := context.WithTimeout(context.Background(), noteTimeout)
	defer cancel()
	notes, err := b.store.Notes(ctx, notePrefix)
	if err != nil {
		return // the limits are relearned from the next answers
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for key, data := range notes {
		k, ok := parseNoteKey(key)
		var n limitNote
		if !ok || json.Unmarshal(data, &n) != nil || n.Limit <= 0 {
			continue
		}
		if old, had := b.learned[k]; !had || n.Seen.After(old.seen) {
			since := n.Since
			if since.IsZero() {
				since = n.Seen
			}
			b.learned[k] = learnedLimit{limit: n.Limit, seen: n.Seen, saved: n.Seen, since: since}
			b.learnedGen.Add(1)
			b.anyLearned.Store(true)
		}
	}
}

// maybeRefresh starts a read of the notes when the last began refreshEvery
// ago or more. It never waits.
func (b *Book) maybeRefresh(now time.Time) {
	last := b.refreshed.Load()
	if now.UnixNano()-last < int64(refreshEvery) || !b.refreshed.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	b.wg.Go(b.loadLearned)
}

// Close waits for the reads and writes of learned limits under way. The
// Book still works afterwards.
func (b *Book) Close() { b.wg.Wait() }
