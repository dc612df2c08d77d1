package cache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

// plainBackend hides a backend's GetTTL, and can be made to fail.
type plainBackend struct {
	b    Backend
	fail error
	gets int
}

func (p *plainBackend) Get(ctx context.Context, k Key) ([]byte, bool, error) {
	p.gets++
	if p.fail != nil {
		return nil, false, p.fail
	}
	return p.b.Get(ctx, k)
}

func (p *plainBackend) Set(ctx context.Context, k Key, v []byte, ttl time.Duration) error {
	if p.fail != nil {
		return p.fail
	}
	return p.b.Set(ctx, k, v, ttl)
}

func TestTieredPromotes(t *testing.T) {
	clk := clock.NewFake(epoch)
	fast := NewMemory(1<<20, clk)
	slow := newDisk(t, t.TempDir(), clk)
	tr := Tiered{Fast: fast, Slow: slow}
	mustSet(t, slow, testKey(1), []byte("from disk"), time.Hour)
	clk.Advance(15 * time.Minute)

	got, ok := mustGet(t, tr, testKey(1))
	if !ok || string(got) != "from disk" {
		t.Fatalf("Tiered.Get = %q, %v; want %q, true", got, ok, "from disk")
	}
	_, left, ok, _ := fast.GetTTL(context.Background(), testKey(1))
	if !ok {
		t.Fatalf("slow hit not promoted into fast")
	}
	if want := 45 * time.Minute; left != want {
		t.Errorf("promoted ttl = %v, want %v (what the slow tier had left)", left, want)
	}
	clk.Advance(45 * time.Minute)
	if _, ok := mustGet(t, tr, testKey(1)); ok {
		t.Errorf("hit after the slow entry's expiry, want a miss")
	}
}

func TestTieredPromoteTTLFallback(t *testing.T) {
	clk := clock.NewFake(epoch)
	fast := NewMemory(1<<20, clk)
	slow := &plainBackend{b: NewMemory(1<<20, clk)}
	tests := []struct {
		name       string
		promoteTTL time.Duration
		want       time.Duration
	}{
		{"default", 0, 5 * time.Minute},
		{"set", time.Minute, time.Minute},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := Tiered{Fast: fast, Slow: slow, PromoteTTL: tt.promoteTTL}
			mustSet(t, slow, testKey(i), []byte("v"), 24*time.Hour)
			mustGet(t, tr, testKey(i))
			_, left, ok, _ := fast.GetTTL(context.Background(), testKey(i))
			if !ok || left != tt.want {
				t.Errorf("promoted: found %v with ttl %v, want true with %v", ok, left, tt.want)
			}
		})
	}
}

func TestTieredReadsFastFirstAndWritesBoth(t *testing.T) {
	clk := clock.NewFake(epoch)
	fast := NewMemory(1<<20, clk)
	slow := &plainBackend{b: NewMemory(1<<20, clk)}
	tr := Tiered{Fast: fast, Slow: slow}
	mustSet(t, tr, testKey(1), []byte("v"), time.Hour)
	for name, b := range map[string]Backend{"fast": fast, "slow": slow.b} {
		if _, ok := mustGet(t, b, testKey(1)); !ok {
			t.Errorf("Tiered.Set did not write the %s tier", name)
		}
	}
	slow.gets = 0
	mustGet(t, tr, testKey(1))
	if slow.gets != 0 {
		t.Errorf("a fast hit read the slow tier %d times, want 0", slow.gets)
	}
}

func TestTieredErrors(t *testing.T) {
	clk := clock.NewFake(epoch)
	boom := errors.New("boom")
	good := NewMemory(1<<20, clk)
	mustSet(t, good, testKey(1), []byte("v"), time.Hour)

	tr := Tiered{Fast: &plainBackend{fail: boom}, Slow: good}
	if v, ok := mustGet(t, tr, testKey(1)); !ok || string(v) != "v" {
		t.Errorf("failing fast tier: Get = %q, %v; want the slow hit", v, ok)
	}
	tr = Tiered{Fast: NewMemory(1<<20, clk), Slow: &plainBackend{fail: boom}}
	if _, _, err := tr.Get(context.Background(), testKey(1)); !errors.Is(err, boom) {
		t.Errorf("failing slow tier: Get err = %v, want %v", err, boom)
	}
	if err := tr.Set(context.Background(), testKey(1), []byte("v"), time.Hour); !errors.Is(err, boom) {
		t.Errorf("failing slow tier: Set err = %v, want %v", err, boom)
	}
}
