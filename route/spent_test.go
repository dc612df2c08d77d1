package route

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/provider/openaicompat"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

// TestSpentRouteSkippedWithoutStore: a route whose minute is spent is
// skipped on the next requests without asking the state store about it
// (issue 18, item 5: in Redis mode, a round trip per spent route per
// request), at most once a second (another instance may have lowered the
// count), and is called again once its window frees up.
func TestSpentRouteSkippedWithoutStore(t *testing.T) {
	clk := clock.NewFake(t0)
	emu, url := emutest.Start(t, clk, nil)
	emu.AddModel("groq", emulator.Model{ID: "m1"})
	emu.AddModel("groq", emulator.Model{ID: "m2"})
	plan := emutest.Plan(t, `
providers:
  groq: {preset: groq, base_url: EMU/groq/v1, api_key: ${GROQ_API_KEY}, models: {m1: {rpm: 1}, m2: {}}}
chains:
  capped:
    routes: [groq/m1, groq/m2]
    margin: 0
`, url, nil)
	mem, err := memstore.Open(memstore.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	store := &spendCounter{Store: mem, n: make(map[string]int)}
	budget := quota.New(quota.Options{Store: store, Clock: clk})
	transport := openaicompat.NewTransport()
	r, err := New(Options{Plan: plan, Upstreams: upstreams(plan, &http.Client{Transport: transport}), Store: store, Budget: budget, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		budget.Close()
		mem.Close()
		transport.CloseIdleConnections()
	})
	ask := func(when, want string) {
		t.Helper()
		res, err := r.Chat(context.Background(), plan.Chains["capped"], "req", question(emutest.Question))
		if err != nil || res.Route.ID != want {
			t.Fatalf("%s: answer %+v, %v; want one of %s", when, res, err, want)
		}
	}
	const m1 = "groq/m1|rpm" // groq/m1's minute, as the store counts it
	asks := func() int { return store.asks(m1) }

	ask("first request", "groq/m1")
	ask("second request", "groq/m2") // the store refuses groq/m1's minute
	before := asks()
	ask("third request", "groq/m2")
	ask("fourth request", "groq/m2")
	if got := asks(); got != before {
		t.Fatalf("the store was asked %d times about groq/m1's spent minute after it refused it, want 0", got-before)
	}
	if n := emu.Calls("groq", "m1"); n != 1 {
		t.Fatalf("groq/m1 was called %d times, want 1", n)
	}

	// Past a second, the store is asked once more: another instance may
	// have made room. It still says no.
	clk.Advance(30 * time.Second)
	ask("30 s later", "groq/m2")
	ask("30 s later, again", "groq/m2")
	if got := asks(); got != before+1 {
		t.Fatalf("30 s later the store was asked %d times about groq/m1, want once", got-before)
	}

	// The minute's one request leaves the sliding window (241 slots of a
	// quarter second) 60.25 s after it was made: groq/m1 answers again.
	clk.Set(t0.Add(60250 * time.Millisecond))
	ask("60.25 s later", "groq/m1")
	if n := emu.Calls("groq", "m1"); n != 2 {
		t.Fatalf("groq/m1 was called %d times, want 2", n)
	}
}

// spendCounter is a state.Store that counts the Spend calls touching each
// counter key.
type spendCounter struct {
	state.Store
	mu sync.Mutex // guards n
	n  map[string]int
}

func (s *spendCounter) Spend(ctx context.Context, spends []state.Spend) (int, error) {
	s.mu.Lock()
	for _, sp := range spends {
		s.n[sp.Key]++
	}
	s.mu.Unlock()
	return s.Store.Spend(ctx, spends)
}

func (s *spendCounter) asks(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[key]
}
