package rediscache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollfree/tollfree/cache"
	"github.com/tollfree/tollfree/cache/cachetest"
)

const addr = "127.0.0.1:6379"

// newClient returns a client of the local Redis, skipping the test when it
// does not answer, unless CI is set, where a missing Redis is a failure.
func newClient(t *testing.T) *redis.Client {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		if os.Getenv("CI") != "" {
			t.Fatalf("Redis at %s does not answer (CI is set, so this fails): %v", addr, err)
		}
		t.Skipf("Redis at %s does not answer; skipping (set CI to make this a failure): %v", addr, err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// newBackend returns a Backend in a random namespace, whose keys are
// deleted when the test ends.
func newBackend(t *testing.T) (*Backend, *redis.Client) {
	t.Helper()
	client := newClient(t)
	ns := "tollfree-test:" + rand.Text()
	t.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, ns+":*", 100).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
	})
	return New(client, ns), client
}

func key(s string) cache.Key {
	var k cache.Key
	copy(k[:], s)
	return k
}

func TestConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) cache.Backend {
		b, _ := newBackend(t)
		return b
	})
}

func TestSetUsesPX(t *testing.T) {
	b, client := newBackend(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		ttl      time.Duration
		min, max time.Duration // bounds on the PTTL read back; -1: no expiry
		// (go-redis reports PTTL's -1 and -2 replies as -1ns and -2ns)
	}{
		{"hour", time.Hour, time.Hour - time.Minute, time.Hour},
		{"sub-second", 1500 * time.Millisecond, time.Second, 1500 * time.Millisecond},
		{"sub-millisecond rounds up", 10 * time.Microsecond, 0, time.Millisecond},
		{"no ttl", 0, -1, -1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := key("px-" + string(rune('a'+i)))
			if err := b.Set(ctx, k, []byte("v"), tt.ttl); err != nil {
				t.Fatalf("Set: %v", err)
			}
			got, err := client.PTTL(ctx, b.Key(k)).Result()
			if err != nil {
				t.Fatalf("PTTL: %v", err)
			}
			if tt.min == -1 {
				if got != -1 {
					t.Errorf("PTTL = %v, want -1 (no expiry)", got)
				}
				return
			}
			if got == -2 && tt.min == 0 {
				return // a 1 ms entry may be gone already
			}
			if got < tt.min || got > tt.max {
				t.Errorf("PTTL = %v, want within [%v, %v]", got, tt.min, tt.max)
			}
		})
	}
}

func TestGetTTL(t *testing.T) {
	b, _ := newBackend(t)
	ctx := context.Background()
	if err := b.Set(ctx, key("a"), []byte("v"), time.Hour); err != nil {
		t.Fatalf("Set: %v", err)
	}
	v, left, ok, err := b.GetTTL(ctx, key("a"))
	if err != nil || !ok || string(v) != "v" {
		t.Fatalf("GetTTL = %q, %v, %v; want %q, true, nil", v, ok, err, "v")
	}
	if left <= time.Hour-time.Minute || left > time.Hour {
		t.Errorf("GetTTL left = %v, want just under 1h", left)
	}
	if _, _, ok, err := b.GetTTL(ctx, key("missing")); ok || err != nil {
		t.Errorf("GetTTL of a missing key = found %v, err %v; want a miss", ok, err)
	}
}

func TestKeyLayout(t *testing.T) {
	k := key("k")
	tests := []struct {
		namespace, want string
	}{
		{"tollfree:cache", "tollfree:cache:" + hex.EncodeToString(k[:])},
		{"", hex.EncodeToString(k[:])},
	}
	for _, tt := range tests {
		if got := New(nil, tt.namespace).Key(k); got != tt.want {
			t.Errorf("Key with namespace %q = %q, want %q", tt.namespace, got, tt.want)
		}
	}
}

func TestCacheOverRedis(t *testing.T) {
	b, _ := newBackend(t)
	c := cache.New(cache.Options{Backend: b})
	defer c.Close()
	ctx := context.Background()
	k := key("answer")
	fn := func(context.Context) (*cache.Entry, bool, error) {
		return &cache.Entry{Route: "cerebras/gpt-oss-120b", Content: "ok", UsageKnown: true}, true, nil
	}
	if _, hit, _, err := c.Do(ctx, k, time.Hour, fn); err != nil || hit {
		t.Fatalf("first Do: hit %v, err %v; want a miss", hit, err)
	}
	e, hit, _, err := c.Do(ctx, k, time.Hour, fn)
	if err != nil || !hit || e.Route != "cerebras/gpt-oss-120b" {
		t.Errorf("second Do = %+v, hit %v, err %v; want a hit", e, hit, err)
	}
}
