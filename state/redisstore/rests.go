package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollfree/tollfree/state"
)

// event is a message on the events channel.
type event struct {
	Op   string      `json:"op"` // "set" or "clear"
	Rest *state.Rest `json:"rest,omitempty"`
	Key  string      `json:"key,omitempty"`
	// From is the instance that published it. An instance applies its own
	// changes to its copy when Redis takes them, so it skips its own
	// events: one arriving late would undo a later change (a rest set,
	// then cleared, came back with the set's event).
	From string `json:"from,omitempty"`
}

// clearOp is a ClearRest made locally during an outage, replayed on Redis
// when it returns.
type clearOp struct {
	key    string
	manual bool
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// SetRest records r in Redis and tells every instance, unless a Manual rest
// of the same key holds and r is not Manual. While Redis is away it records r
// in Local, to be pushed when Redis returns.
func (s *Store) SetRest(ctx context.Context, r state.Rest) error {
	if r.Key == "" {
		return errors.New("redisstore: set rest: empty key")
	}
	if s.up.Load() {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("redisstore: set rest %s: %w", r.Key, err)
		}
		err := s.redisSetRest(ctx, r)
		if err == nil {
			return nil
		}
		if callerGone(ctx) {
			return fmt.Errorf("redisstore: set rest %s: %w", r.Key, ctx.Err())
		}
		s.failed(err)
	}
	if err := s.local.SetRest(ctx, r); err != nil {
		return fmt.Errorf("redisstore: set rest %s: %w: %w", r.Key, state.ErrUnavailable, err)
	}
	return nil
}

// redisSetRest runs setRestScript and, when it recorded r, updates the cache
// at once rather than waiting for the event to come back.
func (s *Store) redisSetRest(ctx context.Context, r state.Rest) error {
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode rest: %w", err)
	}
	ev, err := json.Marshal(event{Op: "set", Rest: &r, From: s.id})
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	var ttl int64
	if !r.Until.IsZero() {
		ttl = max(r.Until.Sub(s.clock.Now()).Milliseconds(), 1)
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	done, err := setRestScript.Run(octx, s.client,
		[]string{s.restKey(r.Key), s.restIndex()},
		r.Key, body, flag(r.Manual), ttl, s.events, ev).Int64()
	if err != nil {
		return err
	}
	if done == 1 {
		s.mu.Lock()
		s.cache[r.Key] = r
		s.gen++
		s.mu.Unlock()
	}
	return nil
}

// ClearRest removes the rest of key in Redis and tells every instance; with
// manual false only an automatic rest. While Redis is away it clears the rest
// locally and replays the clearing when Redis returns.
func (s *Store) ClearRest(ctx context.Context, key string, manual bool) error {
	if s.up.Load() {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("redisstore: clear rest %s: %w", key, err)
		}
		err := s.redisClearRest(ctx, key, manual)
		if err == nil {
			return nil
		}
		if callerGone(ctx) {
			return fmt.Errorf("redisstore: clear rest %s: %w", key, ctx.Err())
		}
		s.failed(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.local.ClearRest(ctx, key, manual); err != nil {
		return fmt.Errorf("redisstore: clear rest %s: %w: %w", key, state.ErrUnavailable, err)
	}
	if r, ok := s.cache[key]; ok && (manual || !r.Manual) {
		delete(s.cache, key)
		s.gen++
	}
	s.clears = append(s.clears, clearOp{key: key, manual: manual})
	return nil
}

func (s *Store) redisClearRest(ctx context.Context, key string, manual bool) error {
	ev, err := json.Marshal(event{Op: "clear", Key: key, From: s.id})
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	done, err := clearRestScript.Run(octx, s.client,
		[]string{s.restKey(key), s.restIndex()},
		key, flag(manual), s.events, ev).Int64()
	if err != nil {
		return err
	}
	if done == 1 {
		s.mu.Lock()
		delete(s.cache, key)
		s.gen++
		s.mu.Unlock()
	}
	return nil
}

// Rests returns every rest active at now, sorted by key, from the local copy
// of Redis's rests: no round trip. While Redis is away, the rests set
// locally are added; where both hold a key, a Manual one wins, else the
// local one.
func (s *Store) Rests(ctx context.Context, now time.Time) ([]state.Rest, error) {
	s.mu.Lock()
	merged := make(map[string]state.Rest, len(s.cache))
	for k, r := range s.cache {
		merged[k] = r
	}
	up := s.health.Connected
	s.mu.Unlock()
	if !up {
		local, err := s.local.Rests(ctx, now)
		if err != nil {
			return nil, fmt.Errorf("redisstore: rests: %w: %w", state.ErrUnavailable, err)
		}
		for _, r := range local {
			if old, ok := merged[r.Key]; ok && old.Manual && !r.Manual {
				continue
			}
			merged[r.Key] = r
		}
	}
	out := make([]state.Rest, 0, len(merged))
	for _, r := range merged {
		if r.Active(now) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b state.Rest) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// refreshRests replaces the cache with Redis's rests. If the cache changed
// while the read was under way, the read may be older than that change and
// is dropped; the next refresh comes within a second.
func (s *Store) refreshRests(ctx context.Context) {
	s.mu.Lock()
	gen := s.gen
	s.mu.Unlock()
	octx, cancel := s.opContext(ctx)
	vals, err := restsScript.Run(octx, s.client, []string{s.restIndex()}, s.restKey("")).StringSlice()
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			s.failed(err)
		}
		return
	}
	fresh := make(map[string]state.Rest, len(vals))
	for _, v := range vals {
		var r state.Rest
		if json.Unmarshal([]byte(v), &r) == nil && r.Key != "" {
			fresh[r.Key] = r
		}
	}
	s.mu.Lock()
	applied := s.gen == gen
	if applied {
		s.cache = fresh
		s.gen++
	}
	s.mu.Unlock()
	if applied && s.hook != nil {
		s.hook("refreshed")
	}
}

// pushRests replays the clearings made during an outage, then records in
// Redis every rest Local holds, and clears them from Local: from now on
// Redis has them. It returns how many rests were pushed. On error, the
// clearings not yet replayed go back to be replayed next time.
func (s *Store) pushRests(ctx context.Context, clears []clearOp) (int, error) {
	for i, c := range clears {
		if err := s.redisClearRest(ctx, c.key, c.manual); err != nil {
			s.mu.Lock()
			s.clears = append(slices.Clone(clears[i:]), s.clears...)
			s.mu.Unlock()
			return 0, fmt.Errorf("push local rests: %w", err)
		}
	}
	local, err := s.local.Rests(ctx, s.clock.Now())
	if err != nil {
		return 0, fmt.Errorf("push local rests: read local: %w", err)
	}
	for _, r := range local {
		if err := s.redisSetRest(ctx, r); err != nil {
			return 0, fmt.Errorf("push local rests: %w", err)
		}
		// A rest set locally again meanwhile is pushed by the next round.
		_ = s.local.ClearRest(ctx, r.Key, true)
	}
	return len(clears) + len(local), nil
}

// subscribeLoop keeps the cache current from the events channel. Each
// (re)subscription asks for a full refresh, since events may have been
// missed while the subscription was down. A quiet connection is pinged; one
// that stays silent is replaced.
func (s *Store) subscribeLoop(ctx context.Context) {
	ps := s.subscribe(ctx)
	if ps == nil {
		return
	}
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, refreshEvery)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			pinged = false
			s.handle(msg)
		case isTimeout(err) && !pinged:
			pinged = true
			_ = ps.Ping(ctx)
		default:
			// A broken or silent connection: start over after a pause, so a
			// Redis that is down is not dialled in a tight loop.
			pinged = false
			_ = ps.Close()
			if s.wait(ctx, refreshEvery) != nil {
				return
			}
			if ps = s.subscribe(ctx); ps == nil {
				return
			}
		}
	}
}

// subscribe opens a subscription to the events channel and makes it the one
// Close closes. It returns nil once ctx is done.
func (s *Store) subscribe(ctx context.Context) *redis.PubSub {
	s.psMu.Lock()
	defer s.psMu.Unlock()
	if ctx.Err() != nil {
		return nil
	}
	s.ps = s.client.Subscribe(ctx, s.events)
	return s.ps
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// wait waits d on the store's clock, or until ctx is done.
func (s *Store) wait(ctx context.Context, d time.Duration) error {
	t := s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// handle applies one pub/sub message to the cache.
func (s *Store) handle(msg any) {
	switch m := msg.(type) {
	case *redis.Subscription:
		if m.Kind == "subscribe" {
			s.requestRefresh()
			if s.hook != nil {
				s.hook("subscribed")
			}
		}
	case *redis.Message:
		var ev event
		if json.Unmarshal([]byte(m.Payload), &ev) != nil || ev.From == s.id {
			return
		}
		s.mu.Lock()
		switch {
		case ev.Op == "set" && ev.Rest != nil && ev.Rest.Key != "":
			s.cache[ev.Rest.Key] = *ev.Rest
		case ev.Op == "clear" && ev.Key != "":
			delete(s.cache, ev.Key)
		}
		s.gen++
		s.mu.Unlock()
		if s.hook != nil {
			s.hook("event")
		}
	}
}
