package redisstore

import (
	"context"
	"errors"
	goflag "flag"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/quota"
)

// TestCallerKeysExpire: every key a caller's requests leave in Redis
// expires on its own, no later than its window and one slot (issue 18: a
// million visitors a day must not stay in Redis for good). The caller asks
// as the gateway asks for it, through quota.Book, under every kind of
// caller limit (its own, its chain's, its key's, and the site's day), runs
// into its burst to be muted, and leaves with its usage known.
func TestCallerKeysExpire(t *testing.T) {
	u := redisURL(t)
	ns := newNamespace(t, u)
	s := openStore(t, Options{URL: u, Namespace: ns})
	if !s.Health().Connected {
		t.Fatalf("store not connected to Redis: %s", s.Health().LastError)
	}
	book := quota.New(quota.Options{Store: s})
	defer book.Close()
	ctx := context.Background()
	const lease = 2 * time.Minute
	burst := config.Burst{Count: 3, Within: 10 * time.Second, Mute: time.Minute}
	ask := quota.Ask{
		Caller:      "visitor:42",
		Limits:      config.CallerLimits{PerHour: 15, PerDay: 40, TokensDay: 50000, Concurrent: 2, Burst: burst},
		Chain:       "answer",
		ChainLimits: config.CallerLimits{PerHour: 10, PerDay: 20},
		Key:         "team",
		KeyLimits:   config.CallerLimits{PerHour: 100, PerDay: 400, TokensDay: 500000, Concurrent: 10},
		SiteDay:     3000,
		Tokens:      900,
		Lease:       lease,
	}
	muted := false
	for i := range 5 {
		p, err := book.Enter(ctx, ask)
		var lim *quota.LimitError
		if errors.As(err, &lim) && lim.Kind == quota.KindBurst {
			muted = true
			continue
		}
		if err != nil {
			t.Fatalf("request %d: Enter: %v", i, err)
		}
		if err := book.Leave(ctx, p, 700, true); err != nil {
			t.Fatalf("request %d: Leave: %v", i, err)
		}
	}
	if !muted {
		t.Fatal("five requests within the burst's 10 s were never refused: the mute's keys were not made")
	}

	// The longest a key may live: its window and one slot, as quota
	// builds the windows (quota/window.go, quota/ask.go).
	bound := map[string]time.Duration{
		"|hour":   70 * time.Minute, // six 10-minute slots, and one
		"|day":    25 * time.Hour,   // 24 hourly slots, and one
		"|tokens": 25 * time.Hour,
		"|conc":   3 * lease,        // two slots of a lease, and one
		"|burst":  12 * time.Second, // 10 s in 1 s slots, one more for the current, and one
		"|mute":   72 * time.Second, // 60 s in 6 s slots, likewise
	}
	c := redis.NewClient(mustParse(t, u))
	defer c.Close()
	seen := map[string]bool{}
	var noTTL []string
	iter := c.Scan(ctx, 0, "{"+ns+"}*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		ttl, err := c.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatalf("PTTL %s: %v", key, err)
		}
		counter, ok := strings.CutPrefix(key, "{"+ns+"}:c:")
		if !ok {
			// The store's own keys (heartbeats, epoch): one each per
			// namespace, not per caller.
			if ttl < 0 {
				noTTL = append(noTTL, key)
			}
			continue
		}
		counter = counter[:strings.LastIndexByte(counter, ':')] // less the slot
		var max time.Duration
		for suffix, d := range bound {
			if strings.HasSuffix(counter, suffix) {
				max = d
				seen[suffix] = true
			}
		}
		switch {
		case max == 0:
			t.Errorf("key %s: not a counter a caller makes", key)
		case ttl < 0:
			t.Errorf("key %s never expires (PTTL %v), want at most %v", key, ttl, max)
		case ttl > max:
			t.Errorf("key %s expires in %v, want at most %v (its window and one slot)", key, ttl, max)
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	for suffix := range bound {
		if !seen[suffix] {
			t.Errorf("no %s key in Redis after the requests: the test did not make every kind", suffix)
		}
	}
	if len(noTTL) > 0 {
		t.Logf("store keys without an expiry (one per namespace, not per caller): %v", noTTL)
	}
}

func mustParse(t *testing.T, u string) *redis.Options {
	t.Helper()
	o, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// callersHeapProfile names a file for a heap profile taken at the end of
// BenchmarkCallersHeap, store still open (-memprofile is taken after it
// closed, and shows none of it):
//
//	go test -run '^$' -bench CallersHeap -benchtime 100000x -o redisstore.test ./state/redisstore/ -args -callersheapprofile heap.out
//	go tool pprof -sample_index=inuse_space -top redisstore.test heap.out
var callersHeapProfile = goflag.String("callersheapprofile", "", "write a heap profile at the end of BenchmarkCallersHeap to this file")

// BenchmarkCallersHeap drives distinct visitors through quota.Book on a
// Redis store, each asking once under seed 000's per-visitor limits, and
// reports the heap the instance keeps for them afterwards: the view of the
// shared counters (view.go) and the local store that mirrors them, per
// million visitors (issue 18). Each op is one visitor.
//
//	go test -run '^$' -bench CallersHeap -benchtime 100000x ./state/redisstore/
func BenchmarkCallersHeap(b *testing.B) {
	// A Redis of its own: a million visitors leave millions of keys,
	// which would slow every other test's clean-up of the shared one.
	rs := testenv.StartRedis(b)
	s := openStore(b, Options{URL: rs.URL(), Namespace: "callers"})
	if !s.Health().Connected {
		b.Fatalf("store not connected to Redis: %s", s.Health().LastError)
	}
	book := quota.New(quota.Options{Store: s})
	defer book.Close()
	ctx := context.Background()
	limits := config.CallerLimits{PerHour: 15, PerDay: 40, TokensDay: 50000, Concurrent: 2}
	before := testenv.LiveHeap()
	i := 0
	for b.Loop() {
		p, err := book.Enter(ctx, quota.Ask{Caller: "visitor:" + strconv.Itoa(i), Limits: limits, SiteDay: 1 << 30, Tokens: 900})
		if err != nil {
			b.Fatal(err)
		}
		if err := book.Leave(ctx, p, 700, true); err != nil {
			b.Fatal(err)
		}
		i++
	}
	mb := float64(int64(testenv.LiveHeap())-int64(before)) / 1e6
	if *callersHeapProfile != "" {
		testenv.WriteHeapProfile(b, *callersHeapProfile)
	}
	s.mu.Lock()
	slots := len(s.view)
	s.mu.Unlock()
	b.ReportMetric(mb*1e6/float64(i), "MB/1M-callers")
	b.ReportMetric(float64(slots)/float64(i), "view-slots/caller")
}
