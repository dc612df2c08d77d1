package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/route"
)

// driver runs code that waits on a fake clock as fast as it can: whenever
// everything it drives is waiting on the clock, it moves the clock to the
// next timer or the next arrival, whichever comes first.
//
// "Everything is waiting" is known exactly for the parts the driver sees
// (calls to the emulator, which run in-process through transport, and the
// clock's AfterFunc callbacks), and by a short settle for the rest (the
// router's own goroutine between two clock or network events): the driver
// advances only once no clock call, network call or attempt record has
// happened for a few scheduler rounds.
type driver struct {
	fake     *clock.Fake
	activity atomic.Int64 // bumped by every clock call, network call and record

	mu       sync.Mutex // guards the fields below
	emu      map[*dtimer]struct{}
	funcs    map[*dtimer]struct{}
	inflight map[*http.Request]struct{}
	reqs     map[*track]struct{} // questions being answered
	calling  int                 // upstream calls running outside the emulator's waits
	ended    int64               // upstream calls that returned
	recorded int64               // attempts recorded (router) or finished (naive loop)

	stalls atomic.Int64 // settles that gave up waiting: see settle

	why []string // for each stall, the condition that held it; the driver's goroutine's own
}

func newDriver(start time.Time) *driver {
	return &driver{
		fake:     clock.NewFake(start),
		emu:      map[*dtimer]struct{}{},
		funcs:    map[*dtimer]struct{}{},
		inflight: map[*http.Request]struct{}{},
		reqs:     map[*track]struct{}{},
	}
}

// track is one question being answered. busy is set while its own
// goroutine works outside any wait the driver sees: from its start until
// its first upstream call begins, and after a failed attempt until the next
// call begins or the question is answered.
type track struct {
	busy bool // guarded by driver.mu
}

type trackKey struct{}

// begin marks a question started; its goroutine is busy.
func (d *driver) begin(ctx context.Context) (context.Context, *track) {
	t := &track{busy: true}
	d.mu.Lock()
	d.reqs[t] = struct{}{}
	d.mu.Unlock()
	d.activity.Add(1)
	return context.WithValue(ctx, trackKey{}, t), t
}

// end marks a question answered.
func (d *driver) end(t *track) {
	d.mu.Lock()
	delete(d.reqs, t)
	d.mu.Unlock()
	d.activity.Add(1)
}

// busy marks a question's goroutine at work again (after a failed attempt).
func (d *driver) busy(t *track) {
	d.mu.Lock()
	if _, ok := d.reqs[t]; ok {
		t.busy = true
	}
	d.mu.Unlock()
}

// upstream wraps a provider adapter so that the driver sees each attempt
// from its first instruction (the request body is encoded before any
// network call) to its return.
type upstream struct {
	d  *driver
	up route.Upstream
}

var _ route.Upstream = upstream{}

func (u upstream) Chat(ctx context.Context, call provider.Call) (*llm.Response, error) {
	d := u.d
	d.mu.Lock()
	d.calling++
	if t := trackOf(ctx); t != nil {
		t.busy = false
	}
	d.mu.Unlock()
	d.activity.Add(1)
	defer func() {
		d.mu.Lock()
		d.calling--
		d.ended++
		d.mu.Unlock()
		d.activity.Add(1)
	}()
	return u.up.Chat(ctx, call)
}

func (u upstream) Stream(ctx context.Context, call provider.Call) (llm.Stream, error) {
	return nil, errors.New("sim: streaming is not simulated")
}

// wrap wraps every adapter.
func (d *driver) wrap(ups map[string]route.Upstream) map[string]route.Upstream {
	out := make(map[string]route.Upstream, len(ups))
	for k, u := range ups {
		out[k] = upstream{d: d, up: u}
	}
	return out
}

// clockFor returns the clock to give to a component; emu marks the
// emulator's, whose timers mean "an upstream call is parked".
func (d *driver) clockFor(emu bool) clock.Clock { return dclock{d: d, emu: emu} }

type dclock struct {
	d   *driver
	emu bool
}

type dtimer struct {
	d   *driver
	t   clock.Timer
	at  time.Time
	emu bool
}

func (c dclock) Now() time.Time {
	c.d.activity.Add(1)
	return c.d.fake.Now()
}

func (c dclock) NewTimer(dur time.Duration) clock.Timer {
	c.d.activity.Add(1)
	t := &dtimer{d: c.d, at: c.d.fake.Now().Add(dur), emu: c.emu}
	if c.emu {
		c.d.mu.Lock()
		c.d.emu[t] = struct{}{}
		c.d.mu.Unlock()
	}
	t.t = c.d.fake.NewTimer(dur)
	return t
}

func (c dclock) AfterFunc(dur time.Duration, fn func()) clock.Timer {
	c.d.activity.Add(1)
	t := &dtimer{d: c.d, at: c.d.fake.Now().Add(dur)}
	c.d.mu.Lock()
	c.d.funcs[t] = struct{}{}
	c.d.mu.Unlock()
	t.t = c.d.fake.AfterFunc(dur, func() {
		fn()
		c.d.mu.Lock()
		delete(c.d.funcs, t)
		c.d.mu.Unlock()
		c.d.activity.Add(1)
	})
	return t
}

func (t *dtimer) C() <-chan time.Time { return t.t.C() }

// Stop forgets an emulator timer whatever the result: the emulator stops
// its timer once its wait is over. An AfterFunc that already fired stays
// counted until its callback returns.
func (t *dtimer) Stop() bool {
	t.d.activity.Add(1)
	ok := t.t.Stop()
	t.d.mu.Lock()
	if t.emu || ok {
		delete(t.d.emu, t)
		delete(t.d.funcs, t)
	}
	t.d.mu.Unlock()
	return ok
}

// record counts one attempt finished; see quiet. The transport must only
// be called through an upstream, which balances calling.
func (d *driver) record() {
	d.mu.Lock()
	d.recorded++
	d.mu.Unlock()
	d.activity.Add(1)
}

// quiet reports whether every part the driver sees exactly is waiting on
// the clock: each emulator call in flight parked on a timer still to come,
// no AfterFunc callback running, and every returned call's attempt
// recorded.
func (d *driver) quiet() bool { return d.unquiet() == "" }

// unquiet names the first condition that keeps the driver from being
// quiet, or "" when it is.
func (d *driver) unquiet() string {
	now := d.fake.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.ended != d.recorded:
		return fmt.Sprintf("%d upstream calls returned, %d attempts recorded", d.ended, d.recorded)
	case d.calling != 0:
		return fmt.Sprintf("%d upstream calls between the router and the emulator", d.calling)
	case len(d.emu) != len(d.inflight):
		return fmt.Sprintf("%d emulator calls in flight, %d parked on a timer", len(d.inflight), len(d.emu))
	}
	for t := range d.reqs {
		if t.busy {
			return "a question's goroutine at work outside any wait"
		}
	}
	for r := range d.inflight {
		if r.Context().Err() != nil {
			return "an emulator call whose caller went away"
		}
	}
	for t := range d.emu {
		if !t.at.After(now) {
			return "an emulator timer due"
		}
	}
	for t := range d.funcs {
		if !t.at.After(now) {
			return "a clock callback running"
		}
	}
	return ""
}

// Settle tuning: rounds is how many probes in a row must see no activity;
// stallAfter is how long (real time) settle waits for the exact conditions
// before it counts a stall and lets the clock move anyway: long enough
// that a machine busy with other work (CI runs every package at once,
// under the race detector) does not pass for a stall, which TestDayThatBinds
// fails on.
const (
	settleRounds = 3
	settleProbe  = 40 * time.Microsecond
	stallAfter   = 10 * time.Second
)

// settle waits until the driven code is waiting on the clock.
func (d *driver) settle() {
	giveUp := time.Now().Add(stallAfter)
	last, stable := d.activity.Load(), 0
	for {
		runtime.Gosched()
		time.Sleep(settleProbe)
		a := d.activity.Load()
		switch {
		case a != last:
			last, stable = a, 0
		case !d.quiet():
			stable = 0
		default:
			stable++
		}
		if stable >= settleRounds {
			return
		}
		if time.Now().After(giveUp) {
			d.stalls.Add(1)
			why := d.unquiet()
			if why == "" {
				why = "clock, network or record activity that never stopped"
			}
			d.why = append(d.why, d.fake.Now().Format("15:04:05.000")+": "+why)
			return
		}
	}
}

// trackOf returns the question that ctx (given to do by drive) answers.
func trackOf(ctx context.Context) *track {
	t, _ := ctx.Value(trackKey{}).(*track)
	return t
}

// drive starts do(i) for every arrival i at start+at[i] (each in its own
// goroutine, as concurrent callers would), moving the clock through every
// timer in between, and returns once every call has returned and every
// attempt is recorded.
// inline(i) handles event i in the driver's goroutine instead (an incident),
// and reports whether it did.
func (d *driver) drive(ctx context.Context, start time.Time, at []time.Duration, inline func(i int) bool, do func(ctx context.Context, i int)) error {
	var wg sync.WaitGroup
	var running atomic.Int64
	next := 0
	for {
		if err := ctx.Err(); err != nil {
			wg.Wait()
			return fmt.Errorf("sim: %w", err)
		}
		d.settle()
		if next == len(at) && running.Load() == 0 {
			break
		}
		tAt, hasT := d.fake.Next()
		if next < len(at) {
			arr := start.Add(at[next])
			if !hasT || arr.Before(tAt) {
				d.fake.Set(arr)
				if inline(next) {
					next++
					continue
				}
				running.Add(1)
				wg.Add(1)
				// The question is busy from here, not from its
				// goroutine's first instruction: a goroutine not yet
				// scheduled is invisible to quiet.
				qctx, tk := d.begin(ctx)
				go func(i int) {
					defer wg.Done()
					do(qctx, i)
					d.end(tk)
					running.Add(-1)
					d.activity.Add(1)
				}(next)
				next++
				continue
			}
		}
		if !hasT {
			// Calls are running but nothing waits on the clock: they wait on
			// each other. Settle again.
			continue
		}
		d.fake.Set(tAt)
	}
	wg.Wait()
	return nil
}

// transport serves HTTP calls with the emulator in-process, so that the
// driver sees each call from its start to its end.
type transport struct {
	d *driver
	h http.Handler
}

var errAborted = errors.New("sim: the emulated provider dropped the connection")

func (t transport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	d := t.d
	d.mu.Lock()
	d.inflight[req] = struct{}{}
	d.calling--
	d.mu.Unlock()
	d.activity.Add(1)
	defer func() {
		d.mu.Lock()
		delete(d.inflight, req)
		d.calling++
		d.mu.Unlock()
		d.activity.Add(1)
	}()
	if req.Body != nil {
		defer req.Body.Close()
	}
	w := httptest.NewRecorder()
	aborted := func() (abort bool) {
		defer func() {
			if r := recover(); r != nil {
				if r != http.ErrAbortHandler {
					panic(r)
				}
				abort = true
			}
		}()
		t.h.ServeHTTP(w, req)
		return false
	}()
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	if aborted {
		return nil, errAborted
	}
	res := w.Result()
	res.Body = io.NopCloser(bytes.NewReader(w.Body.Bytes()))
	res.Request = req
	return res, nil
}
