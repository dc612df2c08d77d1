package cache

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

var epoch = time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)

func testKey(i int) Key {
	var k Key
	copy(k[:], fmt.Sprintf("test-key-%d", i))
	return k
}

func mustGet(t *testing.T, b Backend, k Key) ([]byte, bool) {
	t.Helper()
	v, ok, err := b.Get(context.Background(), k)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return v, ok
}

func mustSet(t *testing.T, b Backend, k Key, v []byte, ttl time.Duration) {
	t.Helper()
	if err := b.Set(context.Background(), k, v, ttl); err != nil {
		t.Fatalf("Set: %v", err)
	}
}

func TestMemoryTTL(t *testing.T) {
	tests := []struct {
		name    string
		ttl     time.Duration
		advance time.Duration
		want    bool
	}{
		{"fresh", time.Minute, 59 * time.Second, true},
		{"at expiry", time.Minute, time.Minute, false},
		{"past expiry", time.Minute, time.Hour, false},
		{"no ttl never expires", 0, 365 * 24 * time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(epoch)
			m := NewMemory(1<<20, clk)
			mustSet(t, m, testKey(1), []byte("v"), tt.ttl)
			clk.Advance(tt.advance)
			if _, ok := mustGet(t, m, testKey(1)); ok != tt.want {
				t.Errorf("Get after %v with ttl %v: found = %v, want %v", tt.advance, tt.ttl, ok, tt.want)
			}
			wantLen := 0
			if tt.want {
				wantLen = 1
			}
			if got := m.Len(); got != wantLen {
				t.Errorf("Len = %d, want %d (an expired entry is removed on read)", got, wantLen)
			}
		})
	}
}

func TestMemoryGetTTL(t *testing.T) {
	clk := clock.NewFake(epoch)
	m := NewMemory(1<<20, clk)
	mustSet(t, m, testKey(1), []byte("v"), time.Hour)
	clk.Advance(20 * time.Minute)
	_, left, ok, err := m.GetTTL(context.Background(), testKey(1))
	if err != nil || !ok {
		t.Fatalf("GetTTL: found %v, err %v; want a hit", ok, err)
	}
	if want := 40 * time.Minute; left != want {
		t.Errorf("GetTTL left = %v, want %v", left, want)
	}
}

func TestMemoryEvictsByBytes(t *testing.T) {
	clk := clock.NewFake(epoch)
	// Each entry is 32 (key) + 68 (value) = 100 bytes; three fit in 300.
	m := NewMemory(300, clk)
	v := bytes.Repeat([]byte("x"), 68)
	for i := 1; i <= 3; i++ {
		mustSet(t, m, testKey(i), v, time.Hour)
	}
	if got, want := m.Bytes(), int64(300); got != want {
		t.Fatalf("Bytes = %d, want %d", got, want)
	}
	mustGet(t, m, testKey(1)) // 1 is now the most recent; 2 the least.
	mustSet(t, m, testKey(4), v, time.Hour)

	for i, want := range map[int]bool{1: true, 2: false, 3: true, 4: true} {
		if _, ok := mustGet(t, m, testKey(i)); ok != want {
			t.Errorf("key %d: found = %v, want %v", i, ok, want)
		}
	}
	if got, want := m.Bytes(), int64(300); got != want {
		t.Errorf("Bytes = %d, want %d", got, want)
	}

	// A value larger than several entries evicts as many as it needs.
	big := bytes.Repeat([]byte("y"), 168) // 200 bytes with its key
	mustSet(t, m, testKey(5), big, time.Hour)
	if got, want := m.Len(), 2; got != want {
		t.Errorf("after a 200-byte entry: Len = %d, want %d", got, want)
	}
	if got := m.Bytes(); got > 300 {
		t.Errorf("Bytes = %d, want at most 300", got)
	}
}

func TestMemoryTooLarge(t *testing.T) {
	m := NewMemory(100, clock.NewFake(epoch))
	mustSet(t, m, testKey(1), []byte("small"), time.Hour)
	mustSet(t, m, testKey(1), bytes.Repeat([]byte("z"), 100), time.Hour)
	if _, ok := mustGet(t, m, testKey(1)); ok {
		t.Errorf("a value larger than the bound was stored")
	}
	if got := m.Bytes(); got != 0 {
		t.Errorf("Bytes = %d, want 0 (the older value is dropped too)", got)
	}
}

func TestMemoryOverwriteKeepsSize(t *testing.T) {
	m := NewMemory(1000, clock.NewFake(epoch))
	mustSet(t, m, testKey(1), []byte("0123456789"), time.Hour)
	mustSet(t, m, testKey(1), []byte("01234"), time.Hour)
	if got, want := m.Bytes(), int64(32+5); got != want {
		t.Errorf("Bytes = %d, want %d", got, want)
	}
}

func TestMemorySetCopies(t *testing.T) {
	m := NewMemory(1000, clock.NewFake(epoch))
	v := []byte("original")
	mustSet(t, m, testKey(1), v, time.Hour)
	copy(v, "CHANGED!")
	if got, _ := mustGet(t, m, testKey(1)); string(got) != "original" {
		t.Errorf("Get = %q, want %q", got, "original")
	}
}
