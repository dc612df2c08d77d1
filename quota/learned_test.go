package quota

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/state/memstore"
	"github.com/tollfree/tollfree/state/redisstore"
)

// TestLearnedLimitSurvivesRestart: a limit learned from headers is kept in
// the store, so a new Book on the store reopened from its folder (a restart,
// or a config reload) budgets by it before any new answer, and a Book
// already running on the same store learns it at its next refresh.
func TestLearnedLimitSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	groq := testProvider("groq", config.Limits{}, config.Reset{Kind: config.ResetRolling})
	r := testRoute("groq/qwen/qwen3.6-27b", groq, config.Limits{})

	st, err := memstore.Open(memstore.Options{Dir: dir, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	b := New(Options{Store: st, Clock: clk})
	other := New(Options{Store: st, Clock: clk}) // another gateway on the store
	if err := b.Observe(ctx, r, header(
		"x-ratelimit-limit-requests", "1000", "x-ratelimit-remaining-requests", "990", "x-ratelimit-reset-requests", "14m24s",
		"x-ratelimit-limit-tokens", "8000", "x-ratelimit-remaining-tokens", "7000", "x-ratelimit-reset-tokens", "7.5s")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	clk.Advance(refreshEvery)
	mustReserve(t, other, r, 10, 0) // starts the refresh
	other.Close()
	if ex := refused(t, other, r, 9000, 0); !ex.TooLarge {
		t.Errorf("other Book after its refresh, 9000 tokens: got %+v, want TooLarge (learned TPM 8000)", ex)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	clk.Advance(time.Hour)
	st2, err := memstore.Open(memstore.Options{Dir: dir, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	b2 := New(Options{Store: st2, Clock: clk})
	defer b2.Close()
	left, err := b2.Left(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if w := left.Route.RPD; w.Limit != 1000 || !w.Learned {
		t.Errorf("RPD after a restart: got %+v, want limit 1000 learned", w)
	}
	if ex := refused(t, b2, r, 9000, 0); !ex.TooLarge {
		t.Errorf("after a restart, 9000 tokens: got %+v, want TooLarge (learned TPM 8000)", ex)
	}

	// A day after it was last seen, the limit is gone from the store too.
	clk.Advance(learnTTL)
	st3, err := memstore.Open(memstore.Options{Dir: dir, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer st3.Close()
	b3 := New(Options{Store: st3, Clock: clk})
	defer b3.Close()
	if res := mustReserve(t, b3, r, 9000, 0); res != nil {
		t.Errorf("a day after the limit was last seen: Reserve = %+v, want nil (no limit known)", res)
	}
}

// TestLearnedLimitSharedThroughRedis: a limit one instance learned from
// headers reaches another instance on the same Redis at its next refresh,
// and a third that starts later knows it at once.
func TestLearnedLimitSharedThroughRedis(t *testing.T) {
	ctx := context.Background()
	url := testenv.RedisURL(t)
	ns := testenv.Namespace(t, url)
	clk := clock.NewFake(t0)
	open := func() *Book {
		st, err := redisstore.Open(ctx, redisstore.Options{URL: url, Namespace: ns, Clock: clk, OpTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		b := New(Options{Store: st, Clock: clk})
		t.Cleanup(func() {
			b.Close()
			st.Close()
		})
		return b
	}
	groq := testProvider("groq", config.Limits{}, config.Reset{Kind: config.ResetRolling})
	r := testRoute("groq/qwen/qwen3.6-27b", groq, config.Limits{})
	a, b := open(), open()
	if err := a.Observe(ctx, r, header(
		"x-ratelimit-limit-tokens", "8000", "x-ratelimit-remaining-tokens", "7000", "x-ratelimit-reset-tokens", "7.5s")); err != nil {
		t.Fatal(err)
	}
	a.Close()
	clk.Advance(refreshEvery)
	mustReserve(t, b, r, 10, 0) // starts the refresh
	b.Close()
	if ex := refused(t, b, r, 9000, 0); !ex.TooLarge {
		t.Errorf("other instance after its refresh, 9000 tokens: got %+v, want TooLarge (learned TPM 8000)", ex)
	}
	if ex := refused(t, open(), r, 9000, 0); !ex.TooLarge {
		t.Errorf("instance started later, 9000 tokens: got %+v, want TooLarge (learned TPM 8000)", ex)
	}
}
