package pace_test

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/pace"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/state/memstore"
)

// BenchmarkRequestPath is what pacing adds to a request of a paced chain
// whose caps bind (issue 31, item 8): counting its demand and ordering
// its routes, the capped one held, both from memory.
func BenchmarkRequestPath(b *testing.B) {
	clk := clock.NewFake(time.Date(2026, 6, 16, 6, 0, 0, 0, time.UTC))
	store, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	book := quota.New(quota.Options{Store: store, Clock: clk})
	defer book.Close()
	pc := pace.New(pace.Options{Store: store, Budget: book, Clock: clk})
	defer pc.Close()
	p := planOf(b, 24, "on")
	ch := p.Chains["answer"]
	for range 20 {
		pc.Arrived(ch, 500)
	}
	if _, err := book.Reserve(context.Background(), ch.Routes[0], 500, 0); err != nil {
		b.Fatal(err)
	}
	pc.Refresh(ch)
	if s := pc.Snapshot("answer"); s == nil || !s.Binding {
		b.Fatalf("snapshot %+v: want binding caps", s)
	}
	b.ReportAllocs()
	for b.Loop() {
		pc.Arrived(ch, 500)
		if out := pc.Order(ch, ch.Routes, 1000); out[0] != ch.Routes[1] {
			b.Fatal("the capped route is not held")
		}
	}
}
