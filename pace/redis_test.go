package pace_test

import (
	"context"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/testenv"
	"github.com/tollfree/tollfree/pace"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
	"github.com/tollfree/tollfree/state/redisstore"
)

// TestProfileSharedAndKept: the demand one instance counted is in the
// state store, where a second instance (Redis) and the same one restarted
// (memstore, from its folder) forecast from it. Yesterday's demand,
// counted a day earlier, is the profile: the forecast is learned.
func TestProfileSharedAndKept(t *testing.T) {
	start := time.Date(2026, 6, 15, 6, 0, 0, 0, time.UTC)
	p := planOf(t, 24, "on")
	ch := p.Chains["answer"]
	// count asks 30 questions over the hour from 6:00 on day one, then
	// moves the clock a day on.
	count := func(clk *clock.Fake, st state.Store) {
		book := quota.New(quota.Options{Store: st, Clock: clk})
		pc := pace.New(pace.Options{Store: st, Budget: book, Clock: clk})
		for range 30 {
			pc.Arrived(ch, 500, 500)
			clk.Advance(2 * time.Minute)
		}
		pc.Close()
		book.Close()
		if f, ok := state.Find[state.Deferrer](st); ok {
			f.Flush(context.Background())
		}
		clk.Set(start.Add(24 * time.Hour))
	}
	forecastOn := func(clk *clock.Fake, st state.Store) *pace.Snapshot {
		book := quota.New(quota.Options{Store: st, Clock: clk})
		defer book.Close()
		pc := pace.New(pace.Options{Store: st, Budget: book, Clock: clk})
		defer pc.Close()
		pc.Refresh(ch)
		return pc.Snapshot("answer")
	}

	t.Run("redis", func(t *testing.T) {
		url := testenv.RedisURL(t)
		ns := testenv.Namespace(t, url)
		clk := clock.NewFake(start)
		open := func() state.Store {
			st, err := redisstore.Open(context.Background(), redisstore.Options{URL: url, Namespace: ns, Clock: clk, OpTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
		count(clk, open())
		s := forecastOn(clk, open()) // another instance
		if s == nil || !s.Learned || s.PerHour[6] != 30 {
			t.Fatalf("forecast %+v: want one learned from yesterday, 30 at 06:00", s)
		}
	})
	t.Run("memstore", func(t *testing.T) {
		dir := t.TempDir()
		clk := clock.NewFake(start)
		st, err := memstore.Open(memstore.Options{Dir: dir, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		count(clk, st)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		st2, err := memstore.Open(memstore.Options{Dir: dir, Clock: clk}) // a restart
		if err != nil {
			t.Fatal(err)
		}
		defer st2.Close()
		s := forecastOn(clk, st2)
		if s == nil || !s.Learned || s.PerHour[6] != 30 {
			t.Fatalf("forecast %+v: want one learned from yesterday, 30 at 06:00", s)
		}
	})
}
