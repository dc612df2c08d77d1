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
)

// Label names.
const (
	LabelChain     = "chain"     // a chain of the plan
	LabelRoute     = "route"     // a route ID of the plan
	LabelOutcome   = "outcome"   // a request outcome (below) or a failure class
	LabelDirection = "direction" // DirectionIn or DirectionOut
	LabelKey       = "key"       // a route ID or "provider:<name>" of the plan
	LabelClass     = "class"     // a failure class, or ClassPaused
	LabelKind      = "kind"      // a fallback kind (below)
	LabelWindow    = "window"    // rpm, rpd, tpm, tpd
	LabelState     = "state"     // a route state (below)
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
// labels, as the status page shows them.
const (
	StateReady     = string(rest.Ready)
	StateResting   = string(rest.Resting)
	StatePaused    = string(rest.Paused)
	StateExhausted = string(rest.Exhausted)
	StateDisabled  = string(rest.Disabled)
)

// ClassPaused is the class of a pause set by hand (rest.Rest.Label).
const ClassPaused = "paused"

// Other stands for any label value outside the vocabulary.
const Other = "other"

// Windows, the values of window.
var windows = [...]string{"rpm", "rpd", "tpm", "tpd"}

var outcomes = [...]string{OutcomeAnswered, OutcomeCached, OutcomeFallback, OutcomeFailed, OutcomeRejected, OutcomeCancelled}

var fallbackKinds = [...]string{FallbackMessage, FallbackSearch, FallbackError}

var states = [...]string{StateReady, StateResting, StatePaused, StateExhausted, StateDisabled}
