package route

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/typed"
)

// Typed answers (issue 15). A whole answer to a request with a
// response_format of json_object or json_schema, or with function tools,
// is checked before it wins (package typed): its JSON unwrapped from prose
// or a fenced block, then validated. An invalid answer is its own outcome,
// failure.Invalid: one call-log line, no rest, its tokens settled. The same
// route is then asked again with the conversation, its invalid answer and
// the violations (a repair, Attempt.Repair), up to the chain's
// SchemaRepairs; past them, the next route. When no answer was valid, the
// caller gets an *InvalidAnswerError naming the violations (never an
// invalid answer as if valid, so nothing invalid is ever cached either).
//
// A typed request that fails is cheap (issue 34): it spends at most the
// chain's TypedCalls upstream calls in all (repairs, hedges and retries
// included; then the walk stops and says so), repairs are asked of one
// route only (the first to answer invalidly; the others get one try
// each), and never of a scarce route (one a hedge would not start, see
// hedgeable): a model that broke the schema once is asked again only where
// a call is cheap. The error says how many calls were spent.
//
// Each route is asked what it can do (config.Route.Schema, typed.Spec.For):
// a schema as sent to a route that enforces schemas, JSON mode plus the
// schema in a system message to one that has JSON mode only, the schema in
// a system message alone to one with neither. A chain with RequireSchema
// skips, for a request with a schema, the routes that cannot enforce it:
// their schema support is not enforce, or their dialect cannot take one of
// the schema's keywords (an Upstream with SchemaGaps, Gemini's); for a
// json_object request, the routes without JSON mode. When every route is
// skipped so, the caller gets a 400 naming why.
//
// An invalid answer weighs on its route's latency average as an answer
// that took the route's whole attempt timeout: a latency-aware chain then
// puts a route that keeps breaking schemas behind the routes of its rank,
// as it would a route that keeps failing.
//
// Streams are not checked here: the gateway serves a typed stream from a
// whole answer (the root package's typed.go).

// schemaGapper is an Upstream whose dialect takes only part of JSON
// Schema: SchemaGaps names the keywords of a schema it cannot enforce
// ("pattern at /properties/code"), none when it takes them all.
type schemaGapper interface {
	SchemaGaps(schema json.RawMessage) []string
}

// typing is what a walk knows of its request's typed answer. The walk's
// goroutine owns every field but repairOf, which drains read too.
type typing struct {
	spec    *typed.Spec
	repairs map[*config.Route]int          // repairs asked of each route
	sent    map[*config.Route]*llm.Request // what each route was last asked
	unable  map[*config.Route]string       // routes that cannot enforce the schema, and why
	gaps    map[string][]string            // by provider: the schema's keywords it cannot take
	invalid int                            // invalid answers so far
	last    typed.Violations               // the last invalid answer's
	max     int                            // the most calls it may make (Chain.TypedCalls)
	mender  *config.Route                  // the one route repairs are asked of, once chosen
	capped  bool                           // the walk stopped at max calls

	mu       sync.Mutex       // guards repairOf
	repairOf map[*outcome]int // which repair an attempt is
}

// typeCheck reads what the walk's request asks of its answer. A request
// that asks for nothing to check leaves w.typed nil. The error is a
// *typed.RequestError: the caller's response_format or tools cannot be
// checked as sent.
func (w *walk) typeCheck() error {
	spec, err := typed.Parse(w.req)
	if err != nil || spec == nil || w.stream {
		return err
	}
	w.typed = &typing{
		spec: spec, repairs: map[*config.Route]int{}, sent: map[*config.Route]*llm.Request{},
		unable: map[*config.Route]string{}, gaps: map[string][]string{}, repairOf: map[*outcome]int{},
		max: w.ch.TypedCalls,
	}
	if w.typed.max <= 0 {
		w.typed.max = config.DefaultTypedCalls
	}
	return nil
}

// typedSpent reports whether a typed walk has made all the calls it may,
// and notes once, for the error, that it stopped for that.
func (w *walk) typedSpent() bool {
	t := w.typed
	if t == nil || w.started < t.max {
		return false
	}
	if !t.capped {
		t.capped = true
		w.failures = append(w.failures, Skip{Reason: fmt.Sprintf("a typed request spends at most %d calls (typed_calls), and %d were spent", t.max, w.started)})
	}
	return true
}

// canType reports whether rt may take the typed request: on a chain that
// requires enforcement, only a route that can enforce what the request
// asks may (a schema, or for JSON mode, JSON mode).
func (w *walk) canType(rt *config.Route) (Skip, bool) {
	t := w.typed
	if t == nil || !w.ch.RequireSchema || t.spec.Format == typed.FormatNone || rt.Disabled {
		return Skip{}, true
	}
	why := ""
	switch {
	case t.spec.Format == typed.FormatJSON && rt.Schema == config.SchemaNone:
		why = "cannot enforce JSON (schema: none)"
	case t.spec.Format == typed.FormatJSON:
	case rt.Schema != config.SchemaEnforce:
		why = "cannot enforce a JSON schema (schema: " + rt.Schema.String() + ")"
	default:
		if gaps := w.schemaGaps(rt); len(gaps) > 0 {
			why = "cannot enforce the schema's " + strings.Join(gaps, ", ")
		}
	}
	if why == "" {
		return Skip{}, true
	}
	t.unable[rt] = why
	return Skip{Route: rt.ID, Reason: why}, false
}

// schemaGaps asks rt's adapter which keywords of the schema it cannot
// take, once per provider and request.
func (w *walk) schemaGaps(rt *config.Route) []string {
	t := w.typed
	name := rt.Provider.Name
	if gaps, ok := t.gaps[name]; ok {
		return gaps
	}
	var gaps []string
	if g, ok := w.r.ups[name].(schemaGapper); ok {
		gaps = g.SchemaGaps(t.spec.Schema)
	}
	t.gaps[name] = gaps
	return gaps
}

// fitFor is fit after the chain's Shaper (a site assistant's content per
// route, issue 14), and for a typed request: the walk's request is put as
// rt can take it (typed.Spec.For), and what rt is then asked is noted, for
// a repair to go on from.
func (w *walk) fitFor(rt *config.Route, req *llm.Request, est int) (*llm.Request, string, bool) {
	if w.embed != nil {
		return w.fitEmbed(rt, req) // embed.go (issue 33)
	}
	t := w.typed
	shapeCut := ""
	if w.r.shaper != nil && req == w.req {
		var shaped *llm.Request
		if shaped, shapeCut = w.r.shaper.Shape(w.ch, rt, req); shaped != req {
			req, est = shaped, quota.Estimate(shaped)
		}
	}
	if t != nil && (req == w.req || shapeCut != "") {
		if shaped := t.spec.For(req, rt.Schema); shaped != req {
			req, est = shaped, quota.Estimate(shaped)
		}
	}
	fitted, cut, fits := fit(req, est, rt, w.ch)
	cut = joinCut(shapeCut, cut)
	if t != nil && fits {
		t.sent[rt] = fitted
	}
	return fitted, cut, fits
}

// accept judges the answer of o for a typed request: a valid one wins,
// its JSON unwrapped; an invalid one is settled (invalid), and its route
// asked again when it has repairs left (repair). It reports whether o
// wins.
func (w *walk) accept(o *outcome) bool {
	t := w.typed
	if t == nil {
		return true
	}
	content, vs := t.spec.Check(o.resp)
	if len(vs) == 0 {
		o.resp.Content = content
		return true
	}
	w.invalid(o, vs)
	w.repair(o, vs)
	return false
}

// rejected is what landed makes of an invalid answer: the round goes on
// (a repair in flight, or the next route), unless the caller went away.
func (w *walk) rejected() (*outcome, bool, error) {
	if w.parent.Err() != nil {
		w.abandon(context.Canceled)
		return nil, true, fmt.Errorf("route: %w", w.parent.Err())
	}
	return nil, false, nil
}

// invalid settles an attempt whose answer broke the request's schema: its
// call-log line (class invalid, the violations' paths and keywords), its
// tokens, its latency as a failure's; nothing rests.
func (w *walk) invalid(o *outcome, vs typed.Violations) {
	r, rt := w.r, o.route
	o.cancel(context.Canceled)
	u := o.resp.Usage
	a := &Attempt{
		RequestID: w.id, Chain: w.ch.Name, Route: rt.ID, Provider: rt.Provider.Name, Model: rt.Model,
		Start: o.start, Latency: o.latency, Status: http.StatusOK, Class: failure.Invalid,
		TokensIn: u.PromptTokens, TokensOut: u.CompletionTokens,
		Error: "the answer does not match the request's schema: " + vs.String(),
		Hedge: o.hedge, Stream: w.stream, Part: o.part, Cut: o.cut, Retry: o.retry, Method: o.method, EdgeProbe: o.probe,
		Repair: w.repairOf(o),
	}
	if r.budget != nil {
		ctx := w.background()
		if o.res != nil {
			_ = r.budget.Settle(ctx, o.res, o.res.Charged(u.PromptTokens, u.CompletionTokens), o.resp.UsageKnown)
		}
		if o.resp.Header != nil {
			_ = r.budget.Observe(ctx, rt, o.resp.Header)
		}
	}
	r.noteLatency(rt.ID, attemptTimeout(rt, w.ch))
	r.record(a)
	w.typed.invalid++
	w.typed.last = vs
	w.failures = append(w.failures, Skip{Route: rt.ID, Reason: "invalid answer (" + vs.String() + ")", Class: failure.Invalid})
}

// repair asks o's route again, shown its invalid answer and what was
// wrong, when it has repairs left and may still be called.
func (w *walk) repair(o *outcome, vs typed.Violations) {
	t, rt := w.typed, o.route
	if t.repairs[rt] >= w.ch.SchemaRepairs || w.parent.Err() != nil || (t.mender != nil && t.mender != rt) || w.typedSpent() {
		return
	}
	if t.mender == nil {
		if !w.hedgeable(rt) {
			// Scarce: its calls are kept for first tries. The next route,
			// which may be the same scarce kind, still gets its one try.
			return
		}
		t.mender = rt
	}
	sent := t.sent[rt]
	if sent == nil {
		sent = w.req
	}
	req := t.spec.Repair(sent, o.resp, vs)
	tk, skip, why := w.pick(rt, req, quota.Estimate(req), false)
	if why != picked {
		w.skips = append(w.skips, skip)
		return
	}
	t.repairs[rt]++
	w.launch(tk, false)
	if next := w.inflight[rt]; next != nil {
		t.mu.Lock()
		t.repairOf[next] = t.repairs[rt]
		t.mu.Unlock()
	}
}

// repairOf says which repair the attempt o is: 0 for none.
func (w *walk) repairOf(o *outcome) int {
	t := w.typed
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.repairOf[o]
}

// typedError is the error of a typed walk that found no answer: an
// *InvalidAnswerError when a route answered but not validly, a
// *CallerError when every route the chain could call was skipped for not
// enforcing the schema (and the rest for the request itself), else nil.
func (w *walk) typedError() error {
	t := w.typed
	if t == nil {
		return nil
	}
	if t.invalid > 0 {
		return &InvalidAnswerError{Chain: w.ch.Name, Invalid: t.invalid, Violations: t.last, Calls: w.started, MaxCalls: t.max}
	}
	if n := len(t.unable); n == 0 || n+w.tooLarge+w.unsup.n < len(w.order)-w.countDisabled() {
		return nil
	}
	for _, rt := range w.order {
		if why, ok := t.unable[rt]; ok {
			return &CallerError{Route: rt.ID, Class: failure.Unsupported, Status: http.StatusBadRequest, Param: "response_format",
				Message: why + "; the chain requires what the request asks to be enforced (require_schema), and no route of it can"}
		}
	}
	return nil
}

// InvalidAnswerError says that routes answered a typed request, but no
// answer matched what it asked (its response_format schema, JSON, or its
// tools' parameters), repairs included. Violations are the last invalid
// answer's, paths and keywords only: no answer text.
type InvalidAnswerError struct {
	Chain string
	// Invalid counts the invalid answers.
	Invalid int
	// Violations are what the last invalid answer broke.
	Violations typed.Violations
	// Calls counts the upstream calls the request spent, of at most
	// MaxCalls (the chain's TypedCalls).
	Calls, MaxCalls int
}

func (e *InvalidAnswerError) Error() string {
	return fmt.Sprintf("no answer from chain %q matched the request's schema (%d invalid answers in %d calls, of at most %d); the last broke it at %s",
		e.Chain, e.Invalid, e.Calls, e.MaxCalls, e.Violations)
}
