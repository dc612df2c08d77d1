// Package cachetest is the conformance suite every cache.Backend passes
// (docs/STYLE.md: one suite runs against every store implementation). Expiry is
// left to each backend's own tests, since only some can be driven by a fake
// clock.
package cachetest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tollfree/tollfree/cache"
)

// Run runs the suite. newBackend returns an empty backend that can hold at
// least 1 MiB; the suite calls it once per subtest.
func Run(t *testing.T, newBackend func(t *testing.T) cache.Backend) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, b cache.Backend)
	}{
		{"Miss", testMiss},
		{"RoundTrip", testRoundTrip},
		{"Overwrite", testOverwrite},
		{"EmptyValue", testEmptyValue},
		{"KeysAreDistinct", testDistinct},
		{"LargeValue", testLarge},
		{"Concurrent", testConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newBackend(t)) })
	}
}

func key(i int) cache.Key {
	var k cache.Key
	copy(k[:], fmt.Sprintf("cachetest-key-%d", i))
	return k
}

func mustSet(t *testing.T, b cache.Backend, k cache.Key, v []byte) {
	t.Helper()
	if err := b.Set(context.Background(), k, v, time.Hour); err != nil {
		t.Fatalf("Set: %v", err)
	}
}

func wantValue(t *testing.T, b cache.Backend, k cache.Key, want []byte) {
	t.Helper()
	got, ok, err := b.Get(context.Background(), k)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if want == nil {
		if ok {
			t.Fatalf("Get: got a %d-byte value, want a miss", len(got))
		}
		return
	}
	if !ok {
		t.Fatalf("Get: got a miss, want a %d-byte value", len(want))
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get: got %q, want %q", got, want)
	}
}

func testMiss(t *testing.T, b cache.Backend) { wantValue(t, b, key(1), nil) }

func testRoundTrip(t *testing.T, b cache.Backend) {
	mustSet(t, b, key(1), []byte("value one"))
	wantValue(t, b, key(1), []byte("value one"))
}

func testOverwrite(t *testing.T, b cache.Backend) {
	mustSet(t, b, key(1), []byte("old"))
	mustSet(t, b, key(1), []byte("new value"))
	wantValue(t, b, key(1), []byte("new value"))
}

func testEmptyValue(t *testing.T, b cache.Backend) {
	mustSet(t, b, key(1), []byte{})
	wantValue(t, b, key(1), []byte{})
}

func testDistinct(t *testing.T, b cache.Backend) {
	for i := range 10 {
		mustSet(t, b, key(i), []byte(fmt.Sprint("v", i)))
	}
	for i := range 10 {
		wantValue(t, b, key(i), []byte(fmt.Sprint("v", i)))
	}
	wantValue(t, b, key(10), nil)
}

func testLarge(t *testing.T, b cache.Backend) {
	v := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB
	mustSet(t, b, key(1), v)
	wantValue(t, b, key(1), v)
}

func testConcurrent(t *testing.T, b cache.Backend) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16*20)
	for g := range 16 {
		wg.Go(func() {
			for i := range 20 {
				k := key(g*100 + i%5)
				v := []byte(fmt.Sprint("g", g, "i", i%5))
				if err := b.Set(ctx, k, v, time.Hour); err != nil {
					errs <- err
					return
				}
				got, ok, err := b.Get(ctx, k)
				switch {
				case err != nil:
					errs <- err
					return
				case !ok || !bytes.Equal(got, v):
					errs <- fmt.Errorf("goroutine %d: got %q (found %v), want %q", g, got, ok, v)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
