package cache_test

import (
	"testing"

	"github.com/tollfree/tollfree/cache"
	"github.com/tollfree/tollfree/cache/cachetest"
	"github.com/tollfree/tollfree/internal/clock"
)

func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		new  func(t *testing.T) cache.Backend
	}{
		{"Memory", func(t *testing.T) cache.Backend { return cache.NewMemory(4<<20, clock.Real{}) }},
		{"Disk", func(t *testing.T) cache.Backend {
			d, err := cache.NewDisk(t.TempDir(), clock.Real{})
			if err != nil {
				t.Fatalf("NewDisk: %v", err)
			}
			return d
		}},
		{"Tiered", func(t *testing.T) cache.Backend {
			d, err := cache.NewDisk(t.TempDir(), clock.Real{})
			if err != nil {
				t.Fatalf("NewDisk: %v", err)
			}
			return cache.Tiered{Fast: cache.NewMemory(4<<20, clock.Real{}), Slow: d}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { cachetest.Run(t, tt.new) })
	}
}
