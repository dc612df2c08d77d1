package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
	"github.com/tollfree/tollfree/state/storetest"
)

func TestConformance(t *testing.T) {
	u := redisURL(t)
	storetest.Run(t, func(t *testing.T) state.Store {
		s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u)})
		if !s.Health().Connected {
			t.Fatalf("store not connected to Redis: %s", s.Health().LastError)
		}
		return s
	})
}

func rpm(limit, amount int64) state.Spend {
	return state.Spend{Key: "groq/llama|rpm", Slot: 1000, Slots: 6, Limit: limit, Amount: amount, TTL: 2 * time.Minute}
}

func sumOf(t *testing.T, s *Store, sp state.Spend) int64 {
	t.Helper()
	got, err := s.Sums(context.Background(), []state.Spend{sp})
	if err != nil {
		t.Fatalf("Sums: %v", err)
	}
	return got[0]
}

func mustSpend(t *testing.T, s *Store, sp state.Spend, want int) {
	t.Helper()
	got, err := s.Spend(context.Background(), []state.Spend{sp})
	if err != nil {
		t.Fatalf("Spend: %v", err)
	}
	if got != want {
		t.Fatalf("Spend(amount %d, limit %d) = %d, want %d", sp.Amount, sp.Limit, got, want)
	}
}

func hasRest(t *testing.T, s *Store, want state.Rest) bool {
	t.Helper()
	rests, err := s.Rests(context.Background(), time.Now())
	if err != nil {
		t.Fatalf("Rests: %v", err)
	}
	for _, r := range rests {
		if storetest.SameRest(r, want) {
			return true
		}
	}
	return false
}

func TestTwoInstancesShareRestsAtOnce(t *testing.T) {
	u := redisURL(t)
	ns := newNamespace(t, u)
	a := openStore(t, Options{URL: u, Namespace: ns})
	// b's clock never moves, so b never polls: only the events channel can
	// tell it about a's changes.
	hook, events := hooks()
	b := openStore(t, Options{URL: u, Namespace: ns, Clock: clock.NewFake(time.Now()), hook: hook})
	waitHook(t, events, "subscribed")

	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	pause := state.Rest{Key: "provider:groq", Class: "paused", Reason: "by admin", Manual: true, Since: now}
	if err := a.SetRest(ctx, pause); err != nil {
		t.Fatalf("SetRest: %v", err)
	}
	waitHook(t, events, "event")
	if !hasRest(t, b, pause) {
		t.Fatalf("b does not see a's pause after its event")
	}
	// An automatic rest on b does not replace a's pause, for either.
	if err := b.SetRest(ctx, state.Rest{Key: pause.Key, Until: now.Add(time.Minute), Class: "overloaded", Since: now}); err != nil {
		t.Fatalf("SetRest: %v", err)
	}
	if !hasRest(t, b, pause) || !hasRest(t, a, pause) {
		t.Fatalf("an automatic rest replaced the pause")
	}
	if err := a.ClearRest(ctx, pause.Key, true); err != nil {
		t.Fatalf("ClearRest: %v", err)
	}
	waitHook(t, events, "event")
	if got, _ := b.Rests(ctx, time.Now()); len(got) != 0 {
		t.Errorf("b still has %d rests after a lifted the pause", len(got))
	}
}

func TestTwoInstancesSpendSharedLimitExactly(t *testing.T) {
	u := redisURL(t)
	ns := newNamespace(t, u)
	stores := []*Store{openStore(t, Options{URL: u, Namespace: ns}), openStore(t, Options{URL: u, Namespace: ns})}
	const limit = 100
	if got := spendTogether(t, stores, 32, 400, rpm(limit, 1)); got != limit {
		t.Errorf("passed = %d over two instances, want %d", got, limit)
	}
	for i, s := range stores {
		if !s.Health().Connected {
			t.Errorf("store %d fell back to local during the test: %s", i, s.Health().LastError)
		}
		if got := sumOf(t, s, rpm(0, 0)); got != limit {
			t.Errorf("store %d: sum = %d, want %d", i, got, limit)
		}
	}
}

// spendTogether makes attempts spends of sp from workers goroutines spread
// over stores, and returns how many passed.
func spendTogether(t *testing.T, stores []*Store, workers, attempts int64, sp state.Spend) int64 {
	t.Helper()
	var next, passed atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		s := stores[w%int64(len(stores))]
		wg.Go(func() {
			for next.Add(1) <= attempts {
				failed, err := s.Spend(context.Background(), []state.Spend{sp})
				if err != nil {
					errs <- err
					return
				}
				if failed == -1 {
					passed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Spend: %v", err)
	}
	return passed.Load()
}

func TestRedisAwayFallsBackAndReconciles(t *testing.T) {
	tests := []struct {
		name       string
		break_     func(*proxy)
		heal       func(*testing.T, *proxy)
		wantPrompt bool // Redis refuses at once rather than after OpTimeout
	}{
		{"closed", func(p *proxy) { p.down() }, func(t *testing.T, p *proxy) { p.up(t) }, true},
		{"stalled", func(p *proxy) { p.stall() }, func(_ *testing.T, p *proxy) { p.resume() }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := redisURL(t)
			ns := newNamespace(t, u)
			opt, _ := redis.ParseURL(u)
			p := startProxy(t, opt.Addr)
			local, err := memstore.Open(memstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { local.Close() })
			const opTimeout = 100 * time.Millisecond
			s := openStore(t, Options{URL: p.url(t, u), Namespace: ns, Local: local, OpTimeout: opTimeout})
			direct := openStore(t, Options{URL: u, Namespace: ns})
			// Under the race detector a first dial can pass 100ms; the probe
			// then connects within a second.
			eventually(t, "connect through the proxy", func() bool { return s.Health().Connected })
			mustSpend(t, s, rpm(10, 3), -1)

			tt.break_(p)
			start := time.Now()
			mustSpend(t, s, rpm(10, 2), -1)
			if elapsed := time.Since(start); elapsed > opTimeout+400*time.Millisecond {
				t.Errorf("Spend with Redis away took %v, want about OpTimeout (%v) at most", elapsed, opTimeout)
			}
			h := s.Health()
			if h.Connected || h.LastError == "" {
				t.Fatalf("Health = %+v, want disconnected with an error", h)
			}
			// Two instances are alive (s and direct): s may spend half of
			// the 7 left when it lost Redis, 3. It spent 2: 2 more are
			// refused, 1 passes.
			if n := h.Instances; n != 2 {
				t.Errorf("Health.Instances = %d, want 2", n)
			}
			mustSpend(t, s, rpm(10, 2), 0)
			start = time.Now()
			mustSpend(t, s, rpm(10, 1), -1) // straight to local state, no wait
			if elapsed := time.Since(start); elapsed >= opTimeout {
				t.Errorf("Spend while disconnected took %v, want no wait for Redis", elapsed)
			}
			now := time.Now().Truncate(time.Millisecond)
			rest := state.Rest{Key: "groq/llama", Until: now.Add(time.Hour), Class: "rate_day", Reason: "429", Since: now}
			if err := s.SetRest(context.Background(), rest); err != nil {
				t.Fatalf("SetRest while disconnected: %v", err)
			}
			if !hasRest(t, s, rest) {
				t.Errorf("rest set while disconnected is not served")
			}
			if got := sumOf(t, direct, rpm(0, 0)); got != 3 {
				t.Errorf("Redis sum while away = %d, want 3", got)
			}

			tt.heal(t, p)
			eventually(t, "reconnect", func() bool { return s.Health().Connected })
			if h2 := s.Health(); !h2.Since.After(h.Since) {
				t.Errorf("Health.Since = %v, want after %v", h2.Since, h.Since)
			}
			// The stalled Spend may have reached Redis after all (counted
			// twice, on the safe side); a refused one cannot have.
			want := []int64{6}
			if !tt.wantPrompt {
				want = append(want, 8)
			}
			got := sumOf(t, direct, rpm(0, 0))
			if got != want[0] && (len(want) == 1 || got != want[1]) {
				t.Errorf("Redis sum after reconciling = %d, want one of %v", got, want)
			}
			eventually(t, "rest reaches the other instance", func() bool { return hasRest(t, direct, rest) })
			mustSpend(t, s, rpm(10, 5), 0) // through Redis again: the cap holds
			if !s.Health().Connected {
				t.Errorf("store fell back again: %s", s.Health().LastError)
			}
		})
	}
}

func TestOpenWithRedisDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	s := openStore(t, Options{URL: "redis://" + addr + "/0", Namespace: "down"})
	if h := s.Health(); h.Connected || h.LastError == "" {
		t.Fatalf("Health = %+v, want disconnected with an error", h)
	}
	mustSpend(t, s, rpm(3, 3), -1)
	mustSpend(t, s, rpm(3, 1), 0)
	if got := sumOf(t, s, rpm(0, 0)); got != 3 {
		t.Errorf("local sum = %d, want 3", got)
	}
}

// brokenStore is a Local that always fails.
type brokenStore struct{}

var errBroken = errors.New("broken local store")

func (brokenStore) Spend(context.Context, []state.Spend) (int, error)      { return -1, errBroken }
func (brokenStore) Add(context.Context, []state.Spend) error               { return errBroken }
func (brokenStore) Sums(context.Context, []state.Spend) ([]int64, error)   { return nil, errBroken }
func (brokenStore) SetRest(context.Context, state.Rest) error              { return errBroken }
func (brokenStore) ClearRest(context.Context, string, bool) error          { return errBroken }
func (brokenStore) Rests(context.Context, time.Time) ([]state.Rest, error) { return nil, errBroken }
func (brokenStore) SetNote(context.Context, string, []byte, time.Duration) error {
	return errBroken
}
func (brokenStore) Notes(context.Context, string) (map[string][]byte, error) { return nil, errBroken }

func TestUnavailableOnlyWhenLocalFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx := context.Background()
	down := "redis://" + addr + "/0"
	calls := map[string]func(s *Store) error{
		"Spend":     func(s *Store) error { _, err := s.Spend(ctx, []state.Spend{rpm(1, 1)}); return err },
		"Add":       func(s *Store) error { return s.Add(ctx, []state.Spend{rpm(1, 1)}) },
		"Sums":      func(s *Store) error { _, err := s.Sums(ctx, []state.Spend{rpm(1, 1)}); return err },
		"SetRest":   func(s *Store) error { return s.SetRest(ctx, state.Rest{Key: "k", Class: "paused", Manual: true}) },
		"ClearRest": func(s *Store) error { return s.ClearRest(ctx, "k", true) },
		"Rests":     func(s *Store) error { _, err := s.Rests(ctx, time.Now()); return err },
	}
	healthy := openStore(t, Options{URL: down})
	broken := openStore(t, Options{URL: down, Local: brokenStore{}})
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			if err := call(healthy); err != nil {
				t.Errorf("with a working Local: %v, want nil", err)
			}
			err := call(broken)
			if !errors.Is(err, state.ErrUnavailable) || !errors.Is(err, errBroken) {
				t.Errorf("with a broken Local: %v, want it to wrap ErrUnavailable and the cause", err)
			}
		})
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"braces in namespace", Options{Namespace: "a{b}"}},
		{"bad URL", Options{URL: "redis://user:hunter2@[::1"}},
	}
	for _, tt := range tests {
		s, err := Open(context.Background(), tt.o)
		if err == nil {
			s.Close()
			t.Errorf("%s: Open error = nil, want one", tt.name)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error shows the password", tt.name)
		}
	}
}

func BenchmarkSpend(b *testing.B) {
	u := redisURL(b)
	s := openStore(b, Options{URL: u, Namespace: newNamespace(b, u), OpTimeout: time.Second})
	ctx := context.Background()
	spends := func(i int) []state.Spend {
		return []state.Spend{
			{Key: fmt.Sprintf("bench/model%d|rpm", i%8), Slot: 1, Slots: 6, Limit: 1 << 40, Amount: 1, TTL: time.Minute},
			{Key: "bench|rpd", Slot: 1, Slots: 1, Limit: 1 << 40, Amount: 1, TTL: time.Minute},
		}
	}
	b.Run("serial", func(b *testing.B) {
		sp := spends(0)
		for b.Loop() {
			if _, err := s.Spend(ctx, sp); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})
	b.Run("parallel", func(b *testing.B) {
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			sp := spends(int(n.Add(1)))
			for pb.Next() {
				if _, err := s.Spend(ctx, sp); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})
	if !s.Health().Connected {
		b.Fatalf("fell back to local during the benchmark: %s", s.Health().LastError)
	}
}

func TestScriptsReloadAfterFlush(t *testing.T) {
	u := redisURL(t)
	s := openStore(t, Options{URL: u, Namespace: newNamespace(t, u)})
	mustSpend(t, s, rpm(10, 4), -1)
	// A restarted or failed-over Redis has no scripts: EVALSHA answers
	// NOSCRIPT and the store must send the script again.
	if err := s.client.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatalf("SCRIPT FLUSH: %v", err)
	}
	mustSpend(t, s, rpm(10, 7), 0)
	mustSpend(t, s, rpm(10, 6), -1)
	if got := sumOf(t, s, rpm(0, 0)); got != 10 {
		t.Errorf("sum = %d, want 10", got)
	}
	if !s.Health().Connected {
		t.Errorf("store fell back to local: %s", s.Health().LastError)
	}
}
