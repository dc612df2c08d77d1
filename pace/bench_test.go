package pace_test

import (
	"context"
	"testing"
)

// BenchmarkRequestPath is what pacing adds to a request of a paced chain
// whose caps bind (issue 31, item 8): counting its demand and ordering
// its routes, the capped one held, both from memory.
func BenchmarkRequestPath(b *testing.B) {
	_, book, pc := startPacer(b)
	p := planOf(b, 24, "on")
	ch := p.Chains["answer"]
	for range 20 {
		pc.Arrived(ch, 500, 500)
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
		pc.Arrived(ch, 500, 500)
		if out := pc.Order(ch, ch.Routes, 1000); out[0] != ch.Routes[1] {
			b.Fatal("the capped route is not held")
		}
	}
}
