package quota

import (
	"testing"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state/memstore"
)

// TestMemstore runs the window tests on the real in-memory Store, whose
// slots expire by their TTL on the same fake clock.
func TestMemstore(t *testing.T) {
	tests := []struct {
		name string
		run  func(*testing.T, *Book, *clock.Fake)
	}{
		{"sliding minute", testSlidingMinute},
		{"rolling day", testRollingDay},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			st, err := memstore.Open(memstore.Options{Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			tt.run(t, New(Options{Store: st, Clock: clk}), clk)
		})
	}
}
