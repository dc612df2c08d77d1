package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollfree/tollfree/state"
)

// Notes are plain keys {ns}:note:<key> with an expiry, written with SET,
// and listed in the sorted set {ns}:notes scored by their expiry (unix
// milliseconds), so that reading them is one ZRANGEBYSCORE and one MGET
// whatever else Redis holds, not a SCAN of every key. Both are written in
// one MULTI; entries past their expiry are trimmed from the set as notes
// are written. A few dozen notes, read at start and every refresh, never on
// a request's path. While Redis is away they go to, and come from, Local.

func (s *Store) noteKey(key string) string { return s.tag + ":note:" + key }

func (s *Store) noteIndex() string { return s.tag + ":notes" }

// SetNote keeps value under key in Redis for ttl; while Redis is away, in
// Local.
func (s *Store) SetNote(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if key == "" || ttl <= 0 {
		return fmt.Errorf("redisstore: set note %q: want a key and a positive ttl, got ttl %s", key, ttl)
	}
	if s.up.Load() {
		err := s.redisSetNote(ctx, key, value, ttl)
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

func (s *Store) redisSetNote(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	octx, cancel := s.opContext(ctx)
	defer cancel()
	now := s.clock.Now()
	_, err := s.client.TxPipelined(octx, func(p redis.Pipeliner) error {
		p.Set(octx, s.noteKey(key), value, ttl)
		// The set lives as long as its longest note.
		p.ZAdd(octx, s.noteIndex(), redis.Z{Score: float64(now.Add(ttl).UnixMilli()), Member: key})
		p.ZRemRangeByScore(octx, s.noteIndex(), "-inf", strconv.FormatInt(now.UnixMilli(), 10))
		return nil
	})
	return err
}

func (s *Store) redisNotes(ctx context.Context, prefix string) (map[string][]byte, error) {
	octx, cancel := s.opContext(ctx)
	defer cancel()
	members, err := s.client.ZRangeByScore(octx, s.noteIndex(), &redis.ZRangeBy{
		Min: "(" + strconv.FormatInt(s.clock.Now().UnixMilli(), 10), Max: "+inf"}).Result()
	if err != nil {
		return nil, err
	}
	base := s.noteKey("")
	var keys []string
	for _, m := range members {
		if strings.HasPrefix(m, prefix) {
			keys = append(keys, base+m)
		}
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
		if str, ok := v.(string); ok { // nil: expired (by Redis's clock)
			out[strings.TrimPrefix(keys[i], base)] = []byte(str)
		}
	}
	return out, nil
}
