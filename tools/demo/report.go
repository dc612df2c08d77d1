package demo

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/rest"
	"github.com/tollfree/tollfree/route"
)

// report receives the gateway's attempt records and prints one line per
// question as it is answered: the route that answered, in how long, and
// what the routes before it did and how long they now rest. It prints only
// route names, classes, durations and the questions' fixed labels; never a
// prompt, an answer or a key. It is safe for concurrent use.
type report struct {
	clk clock.Clock
	// order is the chain's routes; daySpent tells whether one has spent
	// today's requests (within the chain's margin) and when its day
	// resets. Both may be nil.
	order    []string
	daySpent func(routeID string) (spent bool, resets time.Time)

	mu  sync.Mutex // guards out, pending, finished, finOrder, tally
	out io.Writer
	// pending holds the attempts of requests not yet printed, by request id.
	pending map[string][]route.Attempt
	// finished names the last requests printed (label by id), so that a
	// hedge's loser, recorded after its request was answered, is put on
	// the right question.
	finished map[string]string
	finOrder []string
	// awaiting names the hedged answers, printed already, whose raced
	// route has not been recorded yet (a loser is recorded after the
	// answer is sent): its record gets a line of its own.
	awaiting map[string]bool
	// spent names the routes reported out of today's budget, until they
	// have some again.
	spent map[string]bool
	tally tally
}

// tally counts what the demo's questions got.
type tally struct {
	asked, answered, fallbacks, failed, stopped int
	byRoute                                     map[string]int
	rests                                       map[string]int // by class
}

// keepFinished is how many printed requests a late record can still be
// put on.
const keepFinished = 256

// maxPending bounds the attempts kept for requests not yet printed.
const maxPending = 1024

var _ route.Recorder = (*report)(nil)

func newReport(out io.Writer, clk clock.Clock) *report {
	return &report{
		clk: clk, out: out,
		pending:  make(map[string][]route.Attempt),
		finished: make(map[string]string),
		awaiting: make(map[string]bool),
		spent:    make(map[string]bool),
		tally:    tally{byRoute: make(map[string]int), rests: make(map[string]int)},
	}
}

// RecordAttempt implements route.Recorder.
func (r *report) RecordAttempt(a *route.Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !a.RestKey.IsZero() {
		r.tally.rests[a.Class.RestClass().String()]++
	}
	if label, ok := r.finished[a.RequestID]; ok {
		if r.awaiting[a.RequestID] && !a.Hedge && lostRace(a.Class) {
			delete(r.awaiting, a.RequestID)
			fmt.Fprintf(r.out, "%s %s   raced: %s\n", r.stamp(), label, r.attemptText(a))
			return
		}
		// A call wound down after the answer: worth a line only when it
		// rested something.
		if !a.RestKey.IsZero() {
			fmt.Fprintf(r.out, "%s %s   later: %s\n", r.stamp(), label, r.attemptText(a))
		}
		return
	}
	if len(r.pending) >= maxPending {
		// Requests the demo did not send (someone trying the gateway with
		// curl) are never finished; forget them rather than grow.
		clear(r.pending)
	}
	r.pending[a.RequestID] = append(r.pending[a.RequestID], *a)
}

// outcome is what one demo question got over HTTP.
type outcome struct {
	id       string // the gateway's X-Request-Id
	label    string // "q17 (contact)"
	status   int
	fallback bool
	// err is set when no HTTP answer came back at all.
	err error
	// stopped is set when the demo ended while the question was in flight.
	stopped bool
	latency time.Duration
}

// finish prints the line of one question and forgets its attempts.
func (r *report) finish(o outcome) {
	r.mu.Lock()
	atts := r.pending[o.id]
	delete(r.pending, o.id)
	r.mu.Unlock()
	// The budget is read without the lock: it asks the state store.
	spent := r.spentBefore(atts)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sp := range spent {
		if !r.spent[sp.route] {
			r.spent[sp.route] = true
			fmt.Fprintf(r.out, "%s %s has spent today's requests: skipped until its daily reset at %s\n", r.stamp(), sp.route, sp.resets.Format("Jan 2 15:04 MST"))
		}
	}
	if o.id != "" {
		r.finished[o.id] = o.label
		r.finOrder = append(r.finOrder, o.id)
		if len(r.finOrder) > keepFinished {
			delete(r.finished, r.finOrder[0])
			delete(r.awaiting, r.finOrder[0])
			r.finOrder = r.finOrder[1:]
		}
	}
	r.tally.asked++
	var winner *route.Attempt
	for i := range atts {
		if atts[i].Class == failure.OK {
			winner = &atts[i]
			break
		}
	}
	// A hedged answer raced the route that was silent; that route was
	// cancelled when the hedge won, and its record may come after the
	// answer: then the line waits for it (RecordAttempt).
	var before []string
	var raced *route.Attempt
	racedFailed := false // the raced route failed on its own during the race
	for i := range atts {
		a := &atts[i]
		if winner != nil && a != winner && !a.Hedge && a.Start.Add(a.Latency).After(winner.Start) {
			racedFailed = true
		}
		switch {
		case a == winner:
		case winner != nil && winner.Hedge && !a.Hedge && lostRace(a.Class) && raced == nil:
			raced = a
		default:
			before = append(before, r.attemptText(a))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s ", r.stamp(), o.label)
	switch {
	case o.stopped:
		r.tally.stopped++
		b.WriteString("stopped with the demo")
	case o.err != nil:
		r.tally.failed++
		fmt.Fprintf(&b, "got no answer: %v", o.err)
	case o.fallback:
		r.tally.fallbacks++
		fmt.Fprintf(&b, "answered by the chain's fallback message in %s (every route resting, out of budget or failing)", round(o.latency))
	case winner != nil:
		r.tally.answered++
		r.tally.byRoute[winner.Route]++
		fmt.Fprintf(&b, "answered by %s in %s", winner.Route, round(o.latency))
		if winner.Hedge {
			b.WriteString(", hedged")
		}
	default:
		r.tally.failed++
		fmt.Fprintf(&b, "failed with HTTP %d", o.status)
	}
	if len(before) > 0 {
		b.WriteString(" (after " + strings.Join(before, "; ") + ")")
	}
	if raced != nil {
		b.WriteString(" (raced " + r.attemptText(raced) + ")")
	} else if winner != nil && winner.Hedge && !racedFailed && o.id != "" {
		// Printed now all the same; the raced route gets a line of its
		// own when its record comes.
		r.awaiting[o.id] = true
	}
	b.WriteString("\n")
	io.WriteString(r.out, b.String())
}

// spentBefore returns, of the routes before the one that answered and not
// called, those out of today's budget. Routes found with budget again are
// forgotten from r.spent, so that their next day is reported too.
func (r *report) spentBefore(atts []route.Attempt) []spentRoute {
	if r.daySpent == nil {
		return nil
	}
	called := make(map[string]bool, len(atts))
	var winner string
	for _, a := range atts {
		called[a.Route] = true
		if a.Class == failure.OK && winner == "" {
			winner = a.Route
		}
	}
	var out []spentRoute
	var back []string
	for _, rt := range r.order {
		if rt == winner {
			break
		}
		if called[rt] {
			continue
		}
		if spent, resets := r.daySpent(rt); spent {
			out = append(out, spentRoute{rt, resets})
		} else {
			back = append(back, rt)
		}
	}
	r.mu.Lock()
	for _, rt := range back {
		delete(r.spent, rt)
	}
	r.mu.Unlock()
	return out
}

// spentRoute is a route out of today's requests.
type spentRoute struct {
	route  string
	resets time.Time
}

// note prints a line about the demo itself.
func (r *report) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.out, "%s %s\n", r.stamp(), s)
}

// lostRace reports whether an attempt of class c may be the loser of a
// race: cancelled, having started to answer or not.
func lostRace(c failure.Class) bool { return c == failure.Cancelled || c == failure.SilentLoser }

// attemptText says what one failed attempt did: "gemini/gemini-2.5-flash-lite:
// overloaded, resting 30s". It runs with r.mu held.
func (r *report) attemptText(a *route.Attempt) string {
	s := a.Route + ": " + a.Class.String()
	switch a.Class {
	case failure.Timeout:
		s += " after " + round(a.Latency).String()
	case failure.SilentLoser:
		s = a.Route + ": silent for " + round(a.Latency).String() + ", cancelled"
	case failure.Cancelled:
		s = a.Route + ": cancelled after " + round(a.Latency).String()
	}
	if !a.RestKey.IsZero() && !a.RestUntil.IsZero() {
		what := "resting"
		if a.RestKey == rest.ProviderKey(a.Provider) {
			what = "resting all of " + a.Provider
		}
		s += ", " + what + " " + round(a.RestUntil.Sub(a.Start.Add(a.Latency))).String()
	}
	return s
}

// summary prints the totals.
func (r *report) summary() {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tally
	fmt.Fprintf(r.out, "\n%d questions: %d answered by a route, %d by the fallback, %d without an answer", t.asked, t.answered, t.fallbacks, t.failed)
	if t.stopped > 0 {
		fmt.Fprintf(r.out, ", %d stopped with the demo", t.stopped)
	}
	fmt.Fprintln(r.out)
	routes := make([]string, 0, len(t.byRoute))
	for k := range t.byRoute {
		routes = append(routes, k)
	}
	sort.Slice(routes, func(i, j int) bool {
		if t.byRoute[routes[i]] != t.byRoute[routes[j]] {
			return t.byRoute[routes[i]] > t.byRoute[routes[j]]
		}
		return routes[i] < routes[j]
	})
	for _, k := range routes {
		fmt.Fprintf(r.out, "  %5d  %s\n", t.byRoute[k], k)
	}
	if len(t.rests) > 0 {
		classes := make([]string, 0, len(t.rests))
		for c := range t.rests {
			classes = append(classes, fmt.Sprintf("%s %d", c, t.rests[c]))
		}
		sort.Strings(classes)
		fmt.Fprintf(r.out, "rests set: %s\n", strings.Join(classes, ", "))
	}
}

// stamp is the virtual time of day. It runs with r.mu held.
func (r *report) stamp() string { return r.clk.Now().Format("15:04:05") }

// round shortens a duration for a line: whole milliseconds under 10 s,
// whole seconds above.
func round(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}
