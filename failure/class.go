package failure

// Class is the outcome of one attempt: a closed set, in the decision table's
// order (docs/DECISIONS.md). Its String form is a metric label and a call-log value, so the
// names never change.
type Class uint8

// The classes. OK is the zero value.
const (
	OK          Class = iota // 2xx with a non-empty answer
	Empty                    // 2xx with no content, or a body that does not parse
	RateMinute               // 429 for a per-minute (or unnamed, short) limit
	RateDay                  // 429 for a per-day limit, or no credits (402)
	Auth                     // the key or account is refused (401, 403, Gemini's bad-key 400)
	Gone                     // the model is not there (404, 410, decommissioned)
	BadConfig                // a 4xx caused by the route's own settings
	BadRequest               // a 4xx caused by what the caller sent
	Unsupported              // a 4xx naming a parameter this route does not take (see Verdict.Param)
	Refused                  // a content-policy or safety refusal
	TooLarge                 // the request does not fit this route (413, context length)
	Overloaded               // 5xx, "high demand", connection refused or reset, a cut stream
	Timeout                  // no answer, or a stream gone silent, within its limit
	Cancelled                // the caller went away, or a hedge loser that had started answering
	// SilentLoser is a hedge loser that had sent nothing by the time it
	// lost. It rests nothing by itself; package rest counts it as a strike,
	// and strikes in a row rest the route as Timeout (see RestClass).
	SilentLoser
	// Invalid is a 2xx answer that does not match what the request asked
	// for: not JSON, JSON that breaks the caller's response_format schema,
	// or a tool call whose arguments break its tool's parameters (issue 15).
	// The route answered, badly: it is asked again with the violations
	// (a repair) or the request goes on to the next route. It rests
	// nothing: one request's schema says nothing about the route's health
	// for everyone, and a caller must never be able to rest a route with
	// a schema no model can meet. It counts as a failure of the route in
	// its success rate and its latency (see package figures and route).
	Invalid
)

// NumClasses is the number of classes: every Class is below it. Arrays
// indexed by Class are [NumClasses]T.
const NumClasses = Invalid + 1

// String returns the class's label ("rate_day"), or "unknown" for a value
// outside the set.
func (c Class) String() string {
	switch c {
	case OK:
		return "ok"
	case Empty:
		return "empty"
	case RateMinute:
		return "rate_minute"
	case RateDay:
		return "rate_day"
	case Auth:
		return "auth"
	case Gone:
		return "gone"
	case BadConfig:
		return "bad_config"
	case BadRequest:
		return "bad_request"
	case Unsupported:
		return "unsupported"
	case Refused:
		return "refused"
	case TooLarge:
		return "too_large"
	case Overloaded:
		return "overloaded"
	case Timeout:
		return "timeout"
	case Cancelled:
		return "cancelled"
	case SilentLoser:
		return "silent_loser"
	case Invalid:
		return "invalid"
	}
	return "unknown"
}

// ParseClass returns the class whose String is s.
func ParseClass(s string) (Class, bool) {
	for c := OK; c < NumClasses; c++ {
		if c.String() == s {
			return c, true
		}
	}
	return OK, false
}

// Rests reports whether a failure of class c rests anything by itself. OK,
// BadRequest, Unsupported, Refused, TooLarge, Cancelled and Invalid stay
// with their request; SilentLoser rests only as a strike in a row
// (docs/DECISIONS.md: two in a row rest the route as timeout), and then with
// its RestClass.
func (c Class) Rests() bool {
	switch c {
	case OK, BadRequest, Unsupported, Refused, TooLarge, Cancelled, SilentLoser, Invalid:
		return false
	}
	return c < NumClasses
}

// RestClass is the class a rest caused by an attempt of class c carries:
// Timeout for SilentLoser (silence that keeps losing races is a route that
// does not answer in time), c itself otherwise.
func (c Class) RestClass() Class {
	if c == SilentLoser {
		return Timeout
	}
	return c
}

// Scope is what a failure rests: nothing beyond this request, the route, or
// every route of the provider (they share the account).
type Scope uint8

// The scopes. ScopeRequest is the zero value.
const (
	ScopeRequest  Scope = iota // no rest: the failure stays with this request
	ScopeRoute                 // rest this route
	ScopeProvider              // rest every route of this provider
)

// String returns "request", "route" or "provider".
func (s Scope) String() string {
	switch s {
	case ScopeRequest:
		return "request"
	case ScopeRoute:
		return "route"
	case ScopeProvider:
		return "provider"
	}
	return "unknown"
}
