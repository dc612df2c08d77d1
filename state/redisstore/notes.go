package redisstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tollfree/tollfree/state"
)

// Notes are plain keys {ns}:note:<key> with an expiry, written with SET
// and read by a SCAN of the prefix (a few dozen keys, read at start and
// every refresh, never on a request's path). While Redis is away they go
// to, and come from, Local.

func (s *Store) noteKey(key string) string { return s.tag + ":note:" + key }

// SetNote keeps value under key in Redis for ttl; while Redis is away, in
// Local.
func (s *Store) SetNote(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if key == "" || ttl <= 0 {
		return fmt.Errorf("redisstore: set note %q: want a key and a positive ttl, got ttl %s", key, ttl)
	}
	if s.up.Load() {
		octx, cancel := s.opContext(ctx)
		err := s.client.Set(octx, s.noteKey(key), value, ttl).Err()
		cancel()
		if err == nil {
			return nil
		}
		if callerGone(ctx) {
			return fmt.Errorf("redisstore: set note %s: %w", key, ctx.Err())
		}
		s.failed(err)
	}
	if err := s.local.SetNote(ctx, key, value, ttl); err != nil {
		return fmt.Errorf("redisstore: set note %s: %w: %w", key, state.ErrUnavailable, err)
	}
	return nil
}

// Notes returns every note in Redis whose key starts with prefix; while
// Redis is away, Local's.
func (s *Store) Notes(ctx context.Context, prefix string) (map[string][]byte, error) {
	if s.up.Load() {
		out, err := s.redisNotes(ctx, prefix)
		if err == nil {
			return out, nil
		}
		if callerGone(ctx) {
			return nil, fmt.Errorf("redisstore: notes %s: %w", prefix, ctx.Err())
		}
		s.failed(err)
	}
	out, err := s.local.Notes(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("redisstore: notes %s: %w: %w", prefix, state.ErrUnavailable, err)
	}
	return out, nil
}

func (s *Store) redisNotes(ctx context.Context, prefix string) (map[string][]byte, error) {
	octx, cancel := s.opContext(ctx)
	defer cancel()
	base := s.noteKey("")
	var keys []string
	it := s.client.Scan(octx, 0, globEscape(base+prefix)+"*", 100).Iterator()
	for it.Next(octx) {
		keys = append(keys, it.Val())
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	vals, err := s.client.MGet(octx, keys...).Result()
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		if str, ok := v.(string); ok { // nil: expired since the scan
			out[strings.TrimPrefix(keys[i], base)] = []byte(str)
		}
	}
	return out, nil
}

// globEscape escapes the characters SCAN's MATCH treats as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
