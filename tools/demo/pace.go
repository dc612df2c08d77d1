package demo

import (
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

// pacer tells the demo's clock (clock.Paced) when work is running, so that
// a sped-up run measures only the delays the emulated providers wait on
// the clock, not the machine's own time multiplied by the speed. Work runs
// when an upstream call is in flight and not parked in one of the
// emulator's waits, or when a question is at the gateway with no upstream
// call in flight (the gateway choosing a route or writing the answer).
type pacer struct {
	clk *clock.Paced

	mu        sync.Mutex // guards the fields below
	questions int        // demo questions in flight
	upstream  int        // gateway calls to the emulator in flight
	parked    map[*parkedTimer]struct{}
}

func newPacer(start time.Time, speed float64) *pacer {
	p := &pacer{parked: make(map[*parkedTimer]struct{})}
	p.clk = clock.NewPaced(start, speed, p.busy)
	return p
}

// busy reports whether work is running outside a wait on the clock.
func (p *pacer) busy() bool {
	now := p.clk.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	parked := 0
	for t := range p.parked {
		if t.at.After(now) {
			parked++
		}
	}
	return p.upstream > parked || p.questions > p.upstream
}

func (p *pacer) add(n *int, d int) {
	p.mu.Lock()
	*n += d
	p.mu.Unlock()
}

// question marks a demo question in flight until the returned func runs.
func (p *pacer) question() (done func()) {
	p.add(&p.questions, 1)
	var once sync.Once
	return func() { once.Do(func() { p.add(&p.questions, -1) }) }
}

// emulatorClock is the clock for the emulator: its waits are parked work.
func (p *pacer) emulatorClock() clock.Clock { return parkingClock{p} }

type parkingClock struct{ p *pacer }

type parkedTimer struct {
	clock.Timer
	p  *pacer
	at time.Time
}

func (c parkingClock) Now() time.Time { return c.p.clk.Now() }

func (c parkingClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return c.p.clk.AfterFunc(d, f)
}

// NewTimer parks the calling request until the timer's deadline: a timer
// is parked while its deadline is ahead of the clock and it is not
// stopped (the emulator stops every timer once its wait is over).
func (c parkingClock) NewTimer(d time.Duration) clock.Timer {
	t := &parkedTimer{p: c.p, at: c.p.clk.Now().Add(d)}
	c.p.mu.Lock()
	c.p.parked[t] = struct{}{}
	c.p.mu.Unlock()
	t.Timer = c.p.clk.NewTimer(d)
	return t
}

func (t *parkedTimer) Stop() bool {
	t.p.mu.Lock()
	delete(t.p.parked, t)
	t.p.mu.Unlock()
	return t.Timer.Stop()
}

// transport counts the gateway's calls to the emulator from the request's
// start until its body is read to the end or closed.
type transport struct {
	p    *pacer
	base http.RoundTripper
}

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.p.add(&t.p.upstream, 1)
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		t.p.add(&t.p.upstream, -1)
		return nil, err
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, done: func() { t.p.add(&t.p.upstream, -1) }}
	return resp, nil
}

type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(b.done)
	}
	return n, err
}

func (b *countedBody) Close() error {
	b.once.Do(b.done)
	return b.ReadCloser.Close()
}
