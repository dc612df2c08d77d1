package quota

import (
	"context"
	"sync"
	"testing"

	"github.com/tollfree/tollfree/config"
)

// spendCalls is how many times Reserve asked the store.
func (f *fakeStore) spendCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.spends
}

// TestSpentRouteSkipsStore: once the Store refused a route's spent day, the
// next requests are refused from memory, with the same window and time,
// until markLife has passed; then the Store is asked again, and at the
// day's reset the route takes requests again (issue 18, item 5).
func TestSpentRouteSkipsStore(t *testing.T) {
	b, st, clk := newTestBook(t0)
	r := testRoute("groq/m1", testProvider("groq", config.Limits{}, utcMidnight), config.Limits{RPD: 2})
	mustReserve(t, b, r, 10, 0)
	mustReserve(t, b, r, 10, 0)
	first := refused(t, b, r, 10, 0)
	asked := st.spendCalls()
	for range 5 {
		e := refused(t, b, r, 10, 0)
		if e.Limit != first.Limit || !e.Until.Equal(first.Until) {
			t.Fatalf("refused from memory as %v, want %v", e, first)
		}
	}
	if got := st.spendCalls(); got != asked {
		t.Fatalf("the store was asked %d more times about a spent route, want 0", got-asked)
	}
	if l, until, ok := b.Spent(r, 10, 0, clk.Now()); !ok || l != "rpd" || !until.Equal(first.Until) {
		t.Fatalf("Spent = %q, %v, %v; want rpd until %v", l, until, ok, first.Until)
	}
	clk.Advance(markLife)
	refused(t, b, r, 10, 0)
	if got := st.spendCalls(); got != asked+1 {
		t.Fatalf("%v after the refusal: the store was asked %d times, want once", markLife, got-asked)
	}
	clk.Set(first.Until)
	mustReserve(t, b, r, 10, 0)
}

// TestSpentForgottenWhenCountLowers: a token window refused for an
// estimate has room again when a Settle finds the answer used less; the
// Book must not keep refusing it from memory.
func TestSpentForgottenWhenCountLowers(t *testing.T) {
	b, _, _ := newTestBook(t0)
	r := testRoute("groq/m1", testProvider("groq", config.Limits{}, utcMidnight), config.Limits{TPD: 1000})
	res := mustReserve(t, b, r, 900, 0)
	refused(t, b, r, 200, 0)
	refused(t, b, r, 200, 0)
	if err := b.Settle(context.Background(), res, 300, true); err != nil {
		t.Fatal(err)
	}
	mustReserve(t, b, r, 200, 0)
}

// TestSpentOnlyRefusesWhatStoreRefused: a mark refuses no smaller spend
// than the one the Store refused, nothing under a higher limit (a smaller
// margin), and nothing larger than the whole window (which the Store
// refuses as too large).
func TestSpentOnlyRefusesWhatStoreRefused(t *testing.T) {
	b, st, _ := newTestBook(t0)
	r := testRoute("groq/m1", testProvider("groq", config.Limits{}, utcMidnight), config.Limits{TPD: 1000, RPD: 20})
	mustReserve(t, b, r, 900, 0)
	refused(t, b, r, 200, 0)
	mustReserve(t, b, r, 50, 0) // room for 100 tokens: a smaller spend passes
	if e := refused(t, b, r, 5000, 0); !e.TooLarge {
		t.Fatalf("a spend above the whole limit: %v, want TooLarge", e)
	}

	// rpd 20 at a margin of 0.1 stops at 18; at margin 0 it takes 20.
	b, st, _ = newTestBook(t0)
	r = testRoute("groq/m2", testProvider("groq", config.Limits{}, utcMidnight), config.Limits{RPD: 20})
	for range 18 {
		mustReserve(t, b, r, 1, 0.1)
	}
	refused(t, b, r, 1, 0.1)
	asked := st.spendCalls()
	refused(t, b, r, 1, 0.1)
	if st.spendCalls() != asked {
		t.Fatal("a second refusal at the same margin asked the store")
	}
	mustReserve(t, b, r, 1, 0) // a chain with no margin has room
}

// TestSpentProviderWindow: a provider's spent day, refused for one of its
// routes, refuses that route from memory and leaves the other routes to
// the store, which refuses them too.
func TestSpentProviderWindow(t *testing.T) {
	b, st, _ := newTestBook(t0)
	p := testProvider("openrouter", config.Limits{RPD: 1}, utcMidnight)
	r1 := testRoute("openrouter/a:free", p, config.Limits{})
	r2 := testRoute("openrouter/b:free", p, config.Limits{})
	mustReserve(t, b, r1, 10, 0)
	if e := refused(t, b, r1, 10, 0); e.Limit != "provider rpd" {
		t.Fatalf("refused as %q, want provider rpd", e.Limit)
	}
	asked := st.spendCalls()
	refused(t, b, r1, 10, 0)
	if st.spendCalls() != asked {
		t.Fatal("the spent provider day was asked about again")
	}
	if e := refused(t, b, r2, 10, 0); e.Limit != "provider rpd" || st.spendCalls() != asked+1 {
		t.Fatalf("the other route: %v after %d store calls, want a provider rpd refusal from the store", e, st.spendCalls()-asked)
	}
}

// TestSpentNotNotedAcrossLowering: a refusal the Store made before a
// Settle lowered the same kind of window is not remembered, since the
// lowering may have made the room it says is missing.
func TestSpentNotNotedAcrossLowering(t *testing.T) {
	b, _, clk := newTestBook(t0)
	r := testRoute("groq/m1", testProvider("groq", config.Limits{}, utcMidnight), config.Limits{TPD: 1000})
	res := mustReserve(t, b, r, 900, 0)
	_, g := b.spentFor(r, 200, 0, clk.Now()) // a Reserve reads the generations...
	if err := b.Settle(context.Background(), res, 300, true); err != nil {
		t.Fatal(err) // ...a Settle lowers the count meanwhile...
	}
	s := scope{key: r.ID, limits: r.Limits, reset: r.Reset}
	w := windowFor(tpd, r.Reset, clk.Now())
	sp := w.spend(counterKey(r.ID, tpd), 1000, 200)
	// ...and the Store's refusal arrives after it.
	b.noteSpent(r, s, tpd, sp, &SpentError{Route: r.ID, Limit: "tpd", Until: w.firstExpiry()}, g, clk.Now())
	if _, _, ok := b.Spent(r, 200, 0, clk.Now()); ok {
		t.Fatal("a refusal older than a lowering was remembered")
	}
	mustReserve(t, b, r, 200, 0)
}

// TestSpentForgottenWhenObserveTakesBack: a day spent by a raise Observe
// made (the provider counted calls this Book did not) has room again when
// a later answer's headers count fewer and the raise is taken back; the
// Book must not keep refusing it from memory.
func TestSpentForgottenWhenObserveTakesBack(t *testing.T) {
	ctx := context.Background()
	b, _, _ := newTestBook(t0)
	groq := testProvider("groq", config.Limits{}, utcMidnight)
	r := testRoute("groq/m1", groq, config.Limits{RPD: 10})
	if err := b.Observe(ctx, r, groqRequests(10, 0)); err != nil {
		t.Fatal(err)
	}
	refused(t, b, r, 10, 0)
	refused(t, b, r, 10, 0)
	if err := b.Observe(ctx, r, groqRequests(10, 5)); err != nil {
		t.Fatal(err)
	}
	mustReserve(t, b, r, 10, 0)
}

// TestSpentConcurrent: requests racing on a route whose day fills, while
// Settles lower its tokens, take exactly its requests: marks made and
// forgotten meanwhile never let one more through, nor refuse one too many.
func TestSpentConcurrent(t *testing.T) {
	ctx := context.Background()
	b, _, _ := newTestBook(t0)
	r := testRoute("groq/m1", testProvider("groq", config.Limits{}, utcMidnight), config.Limits{RPD: 40, TPD: 1 << 30})
	var mu sync.Mutex
	took := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				res, err := b.Reserve(ctx, r, 100, 0)
				if err != nil {
					continue
				}
				if err := b.Settle(ctx, res, 50, true); err != nil {
					t.Error(err)
				}
				mu.Lock()
				took++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if took != 40 {
		t.Fatalf("%d requests took an rpd-40 route, want 40", took)
	}
}

func TestKindOfKey(t *testing.T) {
	for k := kind(0); k < nKinds; k++ {
		if got, ok := kindOfKey(counterKey("provider:groq", k)); !ok || got != k {
			t.Errorf("kindOfKey(%q) = %v, %v", counterKey("provider:groq", k), got, ok)
		}
	}
	if _, ok := kindOfKey("groq/m1"); ok {
		t.Error("a key without a window read as one")
	}
}
