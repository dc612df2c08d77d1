package metrics

// Every metric name, label and label value tollfree exports is in this
// file. Label values are a closed vocabulary: chain and route names come
// from the plan, failure classes from failure.Class.String, and the rest
// from the constants below. A value outside the vocabulary is exported as
// Other, so no caller input can ever become a label.

import "github.com/tollfree/tollfree/rest"

// Metric names.
const (
	NameRequests       = "tollfree_requests_total"
	NameRequestSeconds = "tollfree_request_duration_seconds"
	NameAttempts       = "tollfree_attempts_total"
	NameAttemptSeconds = "tollfree_attempt_duration_seconds"
	NameTokens         = "tollfree_tokens_total"
	NameRests          = "tollfree_rests_total"
	NameCacheHits      = "tollfree_cache_hits_total"
	NameFallbacks      = "tollfree_fallbacks_served_total"
	NameBudgetUsed     = "tollfree_budget_used"
	NameBudgetLeft     = "tollfree_budget_left"
	NameBudgetLimit    = "tollfree_budget_limit"
	NameResting        = "tollfree_resting"
	NameRouteState     = "tollfree_route_state"
	NameScrapeErrors   = "tollfree_metrics_store_errors_total"
	NameStreamRescues  = "tollfree_stream_rescues_total"
	NamePoliteRetries  = "tollfree_polite_retries_total"
	NameEdgeProbes     = "tollfree_edge_probes_total"
)

// Label names.
const (
	LabelChain     = "chain"     // a chain of the plan
	LabelRoute     = "route"     // a route ID of the plan
	LabelOutcome   = "outcome"   // a request outcome (below), a failure class, or a polite retry's outcome
	LabelDirection = "direction" // DirectionIn or DirectionOut
	LabelKey       = "key"       // a route ID or "provider:<name>" of the plan
	LabelClass     = "class"     // a failure class, or ClassPaused
	LabelKind      = "kind"      // a fallback kind (below)
	LabelWindow    = "window"    // rpm, rpd, tpm, tpd, rph, tph, tpmo, rpmo
	LabelState     = "state"     // a route state (below)
	LabelMethod    = "method"    // a rescue method (below)
)

// Request outcomes, the values of outcome on NameRequests.
const (
	OutcomeAnswered  = "answered"  // a route answered
	OutcomeCached    = "cached"    // answered from the cache
	OutcomeFallback  = "fallback"  // no route answered; the chain's fallback did
	OutcomeFailed    = "failed"    // no route answered; the caller got an error
	OutcomeRejected  = "rejected"  // the request's own fault (bad request, refusal, too large)
	OutcomeCancelled = "cancelled" // the caller went away
)

// A polite retry's outcome, the values of outcome on NamePoliteRetries:
// OutcomeAnswered (the retry answered), OutcomeFailed (it failed too; the
// chain went on) or OutcomeCancelled (the caller went away, or a hedge won).
// A probe at the edge's outcome, on NameEdgeProbes, takes the same values.

// Rescue methods, the values of method on NameStreamRescues: how the route
// that finished a broken stream continued it (Other: a method this build
// does not know).
const (
	MethodPrefix   = "prefix"   // it continued the answer given as a trailing assistant message
	MethodInstruct = "instruct" // it was handed the partial answer with a request to continue it
	MethodAfresh   = "afresh"   // nothing had been streamed yet: it took the request up afresh
)

// Fallback kinds, the values of kind on NameFallbacks.
const (
	FallbackMessage = "message"
	FallbackSearch  = "search"
	FallbackError   = "error"
)

// Token directions.
const (
	DirectionIn  = "in"
	DirectionOut = "out"
)

// Route states, the values of state on NameRouteState: rest.State's
// labels, and failing (nothing rests the route but most of its latest
// attempts failed), as the status page shows them.
const (
	StateReady     = string(rest.Ready)
	StateResting   = string(rest.Resting)
	StatePaused    = string(rest.Paused)
	StateExhausted = string(rest.Exhausted)
	StateDisabled  = string(rest.Disabled)
	StateFailing   = "failing"
)

// ClassPaused is the class of a pause set by hand (rest.Rest.Label).
const ClassPaused = "paused"

// Other stands for any label value outside the vocabulary.
const Other = "other"

// Windows, the values of window.
var windows = [...]string{"rpm", "rpd", "tpm", "tpd", "rph", "tph", "tpmo", "rpmo"}

var outcomes = [...]string{OutcomeAnswered, OutcomeCached, OutcomeFallback, OutcomeFailed, OutcomeRejected, OutcomeCancelled}

var fallbackKinds = [...]string{FallbackMessage, FallbackSearch, FallbackError}

var states = [...]string{StateReady, StateFailing, StateResting, StatePaused, StateExhausted, StateDisabled}

// methods are the rescue methods in figures.Methods' order, which indexes
// them.
var methods = [...]string{MethodPrefix, MethodInstruct, MethodAfresh, Other}

// retryOutcomes are the outcomes of a polite retry, indexed by retryOutcome.
var retryOutcomes = [...]string{OutcomeAnswered, OutcomeFailed, OutcomeCancelled}
