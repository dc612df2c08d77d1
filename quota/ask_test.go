package quota

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
)

// askRig runs a caller-limit scenario on one or more Books sharing one
// Store (as instances share Redis): each request goes to the next Book in
// turn, so every limit is shown holding across instances.
type askRig struct {
	t     *testing.T
	books []*Book
	clk   *clock.Fake
	next  int
}

func (r *askRig) book() *Book {
	b := r.books[r.next%len(r.books)]
	r.next++
	return b
}

// at sets the clock to t0+d.
func (r *askRig) at(d time.Duration) { r.clk.Set(t0.Add(d)) }

// pass asks a and fails the test unless it is let through.
func (r *askRig) pass(what string, a Ask) *Pass {
	r.t.Helper()
	p, err := r.book().Enter(context.Background(), a)
	if err != nil {
		r.t.Fatalf("%s: refused: %v", what, err)
	}
	if p == nil {
		r.t.Fatalf("%s: nil Pass", what)
	}
	return p
}

// refused asks a and fails the test unless it is refused by the limit
// named want ("caller hour") with a retry at retryAt (t0+retryAt).
func (r *askRig) refused(what string, a Ask, want string, retryAt time.Duration) *LimitError {
	r.t.Helper()
	p, err := r.book().Enter(context.Background(), a)
	var le *LimitError
	if !errors.As(err, &le) {
		r.t.Fatalf("%s: got %v (pass %v), want refused by %s", what, err, p != nil, want)
	}
	if p != nil {
		r.t.Errorf("%s: refused with a Pass", what)
	}
	if le.Name() != want || !le.RetryAt.Equal(t0.Add(retryAt)) {
		r.t.Fatalf("%s: refused by %s until t0+%s, want %s until t0+%s", what, le.Name(), le.RetryAt.Sub(t0), want, retryAt)
	}
	return le
}

func (r *askRig) leave(p *Pass, used int, known bool) {
	r.t.Helper()
	b := r.book()
	if err := b.Leave(context.Background(), p, used, known); err != nil {
		r.t.Fatalf("Leave: %v", err)
	}
	// On Redis the give-back is queued: the other instances see it once
	// it is applied, within a round trip (Book.Flush).
	b.Flush(context.Background())
}

// askScenarios are the caller limits, each shown on a fresh store.
var askScenarios = []struct {
	name string
	run  func(*askRig)
}{
	{"hour and day", scenarioHourDay},
	{"tokens per day", scenarioTokens},
	{"concurrent", scenarioConcurrent},
	{"burst mute", scenarioBurstMute},
	{"burst without mute", scenarioBurstNoMute},
	{"chain and key scopes", scenarioScopes},
	{"site cap and owner's reserve", scenarioSiteReserve},
	{"refund", scenarioRefund},
}

// scenarioRefund: a request let through and then refunded (the gateway
// was too busy to take it) counts nowhere: not in the hour, the burst,
// the requests in flight, the tokens or the site's day.
func scenarioRefund(r *askRig) {
	v := Ask{Caller: "v", Chain: "answer", ChainLimits: config.CallerLimits{PerDay: 1}, Tokens: 600, SiteDay: 2,
		Limits: config.CallerLimits{PerHour: 1, TokensDay: 1000, Concurrent: 1, Burst: config.Burst{Count: 1, Within: time.Minute, Mute: time.Hour}}}
	for i := range 3 {
		p := r.pass(fmt.Sprintf("asked and refunded, %d", i+1), v)
		b := r.book()
		if err := b.Refund(context.Background(), p); err != nil {
			r.t.Fatalf("Refund: %v", err)
		}
		b.Flush(context.Background())
		r.leave(p, 0, true) // after a Refund, Leave gives back nothing more
	}
	// Each limit above is 1 (the tokens' 1000 holds one estimate): had a
	// refund left any count behind, this would be refused.
	p := r.pass("asked and kept", v)
	r.leave(p, 600, true)
	r.refused("the next, past the burst", v, "caller burst", 66*time.Minute)
	r.pass("another caller: the site has one left", Ask{Caller: "w", SiteDay: 2})
	r.refused("a third: the site's two are spent", Ask{Caller: "x", SiteDay: 2}, "site day", 24*time.Hour)
}

// scenarioHourDay: seed 000, each visitor 15 questions an hour and 40 a
// day; another visitor is counted apart.
func scenarioHourDay(r *askRig) {
	v := Ask{Caller: "ip:203.0.113.7", Limits: config.CallerLimits{PerHour: 15, PerDay: 40}}
	for i := range 15 {
		r.at(time.Duration(i) * time.Minute)
		r.pass(fmt.Sprintf("question %d", i+1), v)
	}
	le := r.refused("16th in the hour", v, "caller hour", time.Hour)
	if le.Limit != 15 || le.Window != time.Hour || le.Scope != ScopeCaller || le.Kind != KindHour {
		r.t.Errorf("refusal = %+v, want the caller's hour of 15", le)
	}
	r.pass("another visitor", Ask{Caller: "ip:203.0.113.8", Limits: v.Limits})
	r.at(time.Hour) // the first 10-minute slot (10 questions) drops out
	for i := range 10 {
		r.pass(fmt.Sprintf("question %d of the second hour", i+1), v)
	}
	r.refused("past the sliding hour", v, "caller hour", time.Hour+10*time.Minute)
	r.at(2 * time.Hour)
	for i := range 15 {
		r.pass(fmt.Sprintf("question %d of the third hour", i+1), v)
	}
	r.at(3 * time.Hour)
	r.refused("41st today", v, "caller day", 24*time.Hour)
	r.at(24 * time.Hour) // the first hour of the rolling day drops out
	r.pass("a day later", v)
}

// scenarioTokens: tokens per day are spent on the estimate and settled
// with what the answer used.
func scenarioTokens(r *askRig) {
	v := Ask{Caller: "v", Limits: config.CallerLimits{TokensDay: 1000}, Tokens: 400}
	p1 := r.pass("first", v)
	p2 := r.pass("second", v)
	r.refused("third: 800 + 400 > 1000", v, "caller tokens", 24*time.Hour)
	r.leave(p1, 100, true) // used 100 of the 400 estimated
	r.leave(p2, 0, false)  // unknown: the estimate stands
	r.leave(p1, 0, true)   // a second Leave changes nothing
	p3 := r.pass("third after settling: 500 + 400", v)
	r.refused("fourth: 900 + 400", v, "caller tokens", 24*time.Hour)
	r.leave(p3, 400, true)
	big := v
	big.Caller, big.Tokens = "w", 2000
	r.refused("larger than the whole day", big, "caller tokens", 24*time.Hour)
}

// scenarioConcurrent: requests in flight at once, released by Leave, and
// dropped after the lease if Leave never comes (an instance that died).
func scenarioConcurrent(r *askRig) {
	v := Ask{Caller: "v", Limits: config.CallerLimits{Concurrent: 2}, Lease: time.Minute}
	p1 := r.pass("first in flight", v)
	p2 := r.pass("second in flight", v)
	le := r.refused("third at once", v, "caller concurrent", time.Second)
	if le.Limit != 2 || le.Window != 0 {
		r.t.Errorf("refusal = %+v, want 2 at once", le)
	}
	r.leave(p1, 0, false)
	r.leave(p1, 0, false) // twice: released once
	p3 := r.pass("after one ended", v)
	r.refused("third again", v, "caller concurrent", time.Second)
	r.leave(p3, 0, false)
	// p2 is never left. Its count drops out after between one and two
	// leases (a minute each here).
	r.pass("p2 and a new one", v)
	r.at(119 * time.Second)
	r.refused("p2's lease still counts", v, "caller concurrent", 120*time.Second)
	r.at(120 * time.Second)
	r.pass("p2's lease is over", v)
	_ = p2
}

// scenarioBurstMute: seed 004, a caller that asks too fast is muted: a 6th
// request within 10 s mutes it for 2 minutes, whatever it sends meanwhile.
func scenarioBurstMute(r *askRig) {
	v := Ask{Caller: "v", Limits: config.CallerLimits{Burst: config.Burst{Count: 5, Within: 10 * time.Second, Mute: 2 * time.Minute}}}
	for i := range 5 {
		r.at(time.Duration(i) * time.Second)
		r.pass(fmt.Sprintf("request %d", i+1), v)
	}
	// The mute's slots are 12 s: it lasts to the end of the 11th slot from
	// the one it started in, between 2m and 2m12s.
	const muteEnd = 132 * time.Second
	le := r.refused("6th within 10s", v, "caller burst", muteEnd)
	if le.Limit != 5 || le.Window != 10*time.Second {
		r.t.Errorf("refusal = %+v, want the burst of 5 in 10s", le)
	}
	r.at(30 * time.Second) // the burst window is empty again; the mute holds
	r.refused("muted", v, "caller burst", muteEnd)
	r.at(muteEnd - time.Second)
	r.refused("muted to the end", v, "caller burst", muteEnd)
	r.pass("another caller", Ask{Caller: "w", Limits: v.Limits})
	r.at(muteEnd)
	for i := range 5 {
		r.pass(fmt.Sprintf("after the mute, request %d", i+1), v)
	}
}

// scenarioBurstNoMute: without a mute, a burst is refused only until its
// window has room.
func scenarioBurstNoMute(r *askRig) {
	v := Ask{Caller: "v", Limits: config.CallerLimits{Burst: config.Burst{Count: 3, Within: 10 * time.Second}}}
	for i := range 3 {
		r.at(time.Duration(i) * time.Second)
		r.pass(fmt.Sprintf("request %d", i+1), v)
	}
	// The window is 11 one-second slots: never shorter than 10 s.
	r.at(3 * time.Second)
	r.refused("4th within 10s", v, "caller burst", 11*time.Second)
	r.at(11 * time.Second)
	r.pass("the first has dropped out", v)
}

// scenarioScopes: a chain's own limits count each caller in that chain
// only; a key's limits count all its users together; a refusal counts in
// no scope.
func scenarioScopes(r *askRig) {
	inAnswer := Ask{Caller: "v", Chain: "answer", ChainLimits: config.CallerLimits{PerHour: 2}, Limits: config.CallerLimits{PerHour: 10}}
	r.pass("answer 1", inAnswer)
	r.pass("answer 2", inAnswer)
	le := r.refused("answer 3", inAnswer, "chain hour", time.Hour)
	if le.Scope != ScopeChain || le.Limit != 2 {
		r.t.Errorf("refusal = %+v, want the chain's 2", le)
	}
	other := inAnswer
	other.Chain, other.ChainLimits = "other", config.CallerLimits{}
	r.pass("another chain", other)
	w := inAnswer
	w.Caller = "w"
	r.pass("another caller in answer", w)

	user := func(n int) Ask {
		return Ask{Caller: fmt.Sprintf("key:bot\x00user:%d", n), Key: "bot",
			KeyLimits: config.CallerLimits{PerDay: 3}, Limits: config.CallerLimits{PerHour: 2}}
	}
	r.pass("user 1, first", user(1))
	r.pass("user 1, second", user(1))
	r.refused("user 1, third", user(1), "caller hour", time.Hour)
	r.pass("user 2: the key's third (user 1's refusal did not count)", user(2))
	le = r.refused("user 3: the key's fourth", user(3), "key day", 24*time.Hour)
	if le.Scope != ScopeKey || le.Limit != 3 {
		r.t.Errorf("refusal = %+v, want the key's 3", le)
	}
}

// scenarioSiteReserve: seed 000's site cap, and seed 004's reserve that
// lets the owner through when visitors have spent the rest; the owner
// skips every caller limit.
func scenarioSiteReserve(r *askRig) {
	limits := config.CallerLimits{PerHour: 15, Concurrent: 1, Burst: config.Burst{Count: 1, Within: time.Minute, Mute: time.Hour}}
	for i := range 8 {
		r.pass(fmt.Sprintf("visitor %d", i), Ask{Caller: fmt.Sprintf("v%d", i), Limits: limits, SiteDay: 10, Reserve: 2})
	}
	le := r.refused("visitor 8", Ask{Caller: "v8", Limits: limits, SiteDay: 10, Reserve: 2}, "site day", 24*time.Hour)
	if le.Limit != 8 {
		r.t.Errorf("refusal = %+v, want the site's 8 left to visitors", le)
	}
	owner := Ask{Caller: "key:me", Owner: true, Limits: limits, SiteDay: 10, Reserve: 2}
	var held []*Pass
	for i := range 2 {
		held = append(held, r.pass(fmt.Sprintf("owner %d (no burst, no concurrent limit)", i+1), owner))
	}
	r.refused("owner past the whole site day", owner, "site day", 24*time.Hour)
	for _, p := range held {
		r.leave(p, 0, false)
	}
	r.refused("all reserved", Ask{Caller: "x", SiteDay: 5, Reserve: 5}, "site day", time.Hour)
}

// TestEnter runs every scenario on the test store, one Book.
func TestEnter(t *testing.T) {
	for _, sc := range askScenarios {
		t.Run(sc.name, func(t *testing.T) {
			b, _, clk := newTestBook(t0)
			sc.run(&askRig{t: t, books: []*Book{b}, clk: clk})
		})
	}
}

// TestEnterStoreDown: with the store down, a request is let through with
// a Pass that gives nothing back, and the error says why.
func TestEnterStoreDown(t *testing.T) {
	b, st, _ := newTestBook(t0)
	st.setErr(errDown())
	p, err := b.Enter(context.Background(), Ask{Caller: "v", Limits: config.CallerLimits{PerHour: 1, Concurrent: 1}})
	if p == nil || !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Enter with the store down: got %v, %v; want a Pass and a wrapped ErrUnavailable", p, err)
	}
	if err := b.Leave(context.Background(), p, 10, true); err != nil {
		t.Errorf("Leave of that Pass: %v", err)
	}
}

// TestEnterNoLimits: an Ask that limits nothing does not touch the store.
func TestEnterNoLimits(t *testing.T) {
	b, st, _ := newTestBook(t0)
	p, err := b.Enter(context.Background(), Ask{Caller: "v", Chain: "answer", Key: "k"})
	if p == nil || err != nil || st.spends != 0 {
		t.Errorf("got %v, %v after %d Spend calls; want a Pass, no error, no call", p, err, st.spends)
	}
}

// TestEnterCountersHideIDs: no counter key holds a caller id, a chain's
// pairing with it, or a key's name.
func TestEnterCountersHideIDs(t *testing.T) {
	b, st, _ := newTestBook(t0)
	l := config.CallerLimits{PerHour: 5, PerDay: 5, TokensDay: 5000, Concurrent: 2, Burst: config.Burst{Count: 3, Within: 10 * time.Second, Mute: time.Minute}}
	if _, err := b.Enter(context.Background(), Ask{Caller: "key:bot\x00user:alice@example.org", Chain: "answer", ChainLimits: l, Key: "bot", KeyLimits: l, Limits: l, SiteDay: 100}); err != nil {
		t.Fatal(err)
	}
	keys := st.keys()
	if len(keys) != 3*6+1 {
		t.Errorf("counters = %d, want 6 per scope and the site's: %v", len(keys), keys)
	}
	for _, k := range keys {
		if strings.Contains(k, "alice") || strings.Contains(k, "bot") || strings.Contains(k, "answer") {
			t.Errorf("counter %q holds an id", k)
		}
	}
}

func TestLimitErrorText(t *testing.T) {
	e := &LimitError{Scope: ScopeCaller, Kind: KindHour, Limit: 15, RetryAt: t0.Add(time.Hour)}
	if got, want := e.Error(), "quota: caller hour limit (15) reached; retry at 2026-05-01T13:00:00Z"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestBurstWindow: a burst window is never shorter than asked, in whole
// seconds.
func TestBurstWindow(t *testing.T) {
	for _, tc := range []struct {
		d          time.Duration
		size       time.Duration
		slots      int
		atLeastFor time.Duration
	}{
		{10 * time.Second, time.Second, 11, 10 * time.Second},
		{time.Second, time.Second, 2, time.Second},
		{2 * time.Minute, 12 * time.Second, 11, 2 * time.Minute},
		{95 * time.Second, 9 * time.Second, 12, 95 * time.Second},
	} {
		w := burstWindow(t0, tc.d)
		if w.size != tc.size || w.slots != tc.slots {
			t.Errorf("burstWindow(%s) = %d slots of %s, want %d of %s", tc.d, w.slots, w.size, tc.slots, tc.size)
		}
		if covered := time.Duration(w.slots-1) * w.size; covered < tc.atLeastFor {
			t.Errorf("burstWindow(%s) covers %s at least, want %s", tc.d, covered, tc.atLeastFor)
		}
	}
}
