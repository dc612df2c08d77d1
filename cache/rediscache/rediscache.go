// Package rediscache is the Redis (or Valkey) Backend of the response
// cache, so that every instance of the gateway serves the answers any one
// of them paid for. It is the cache's only importer of the Redis client,
// which package cache must not pull into the library (docs/STYLE.md: a
// heavy dependency gets its own package).
package rediscache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollfree/tollfree/cache"
)

// Backend stores entries as Redis strings, one key per entry, expiring by
// SET PX. It is safe for concurrent use.
type Backend struct {
	client redis.UniversalClient
	prefix string
}

var (
	_ cache.Backend   = (*Backend)(nil)
	_ cache.TTLGetter = (*Backend)(nil)
)

// New returns a Backend on client whose keys are namespace, a colon, and
// the cache key in hex ("tollfree:cache:9f86d0..."); with an empty
// namespace, the hex alone.
func New(client redis.UniversalClient, namespace string) *Backend {
	prefix := namespace
	if prefix != "" {
		prefix += ":"
	}
	return &Backend{client: client, prefix: prefix}
}

// Key returns the Redis key that holds k.
func (b *Backend) Key(k cache.Key) string { return b.prefix + k.String() }

// Get returns the value of k; a missing key is a miss, not an error.
func (b *Backend) Get(ctx context.Context, k cache.Key) ([]byte, bool, error) {
	v, err := b.client.Get(ctx, b.Key(k)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("rediscache: get: %w", err)
	}
	return v, true, nil
}

// GetTTL is Get that also returns how long the value has left (0: never
// expires), read with PTTL in the same round trip.
func (b *Backend) GetTTL(ctx context.Context, k cache.Key) ([]byte, time.Duration, bool, error) {
	key := b.Key(k)
	pipe := b.client.Pipeline()
	get := pipe.Get(ctx, key)
	pttl := pipe.PTTL(ctx, key)
	_, err := pipe.Exec(ctx)
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, 0, false, fmt.Errorf("rediscache: get: %w", err)
	}
	v, err := get.Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("rediscache: get: %w", err)
	}
	left := pttl.Val()
	if left < 0 { // -1: no expiry; -2: gone since GET
		left = 0
	}
	return v, left, true, nil
}

// Set stores v under k with SET PX ttl (rounded up to a millisecond), or a
// plain SET when ttl <= 0.
func (b *Backend) Set(ctx context.Context, k cache.Key, v []byte, ttl time.Duration) error {
	var err error
	if ttl <= 0 {
		err = b.client.Do(ctx, "set", b.Key(k), v).Err()
	} else {
		ms := (ttl + time.Millisecond - 1) / time.Millisecond
		err = b.client.Do(ctx, "set", b.Key(k), v, "px", int64(ms)).Err()
	}
	if err != nil {
		return fmt.Errorf("rediscache: set: %w", err)
	}
	return nil
}
