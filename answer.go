package tollfree

import (
	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/caller/gate"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/typed"
)

// The request and answer types, so that a Go program needs only this
// package (and config, to load a plan). They are aliases of the types the
// HTTP API speaks too (package llm), so both hand the gateway the same
// values.
type (
	// Request is one chat completion request.
	Request = llm.Request
	// Message is one turn of a conversation.
	Message = llm.Message
	// Response is a whole answer's text, reasoning, tool calls and usage.
	Response = llm.Response
	// Chunk is one piece of a streamed answer.
	Chunk = llm.Chunk
	// Usage is the token accounting of an answer.
	Usage = llm.Usage
	// Call is a request with who asks and how: what Serve and ServeStream
	// take.
	Call = llm.Call
	// Caller is who asks, for the caller limits.
	Caller = llm.Caller
	// Answer is a whole answer and which step of the flow gave it.
	Answer = llm.Answer
	// AnswerStream is a streamed answer and which step of the flow gave
	// it. Close it when done.
	AnswerStream = llm.AnswerStream
	// ServedBy says which step of the flow answered.
	ServedBy = llm.ServedBy
)

// The steps of the flow that can answer a request (Answer.ServedBy).
const (
	ServedByRoute           = llm.ServedByRoute
	ServedByCache           = llm.ServedByCache
	ServedBySharedCall      = llm.ServedBySharedCall
	ServedByFallbackMessage = llm.ServedByFallbackMessage
	ServedByFallbackSearch  = llm.ServedByFallbackSearch
	ServedByRule            = llm.ServedByRule
)

// The errors a request can end with instead of an answer. Inspect them
// with errors.As (or errors.Is for ErrUnknownChain).
type (
	// ExhaustedError says that no route of the chain could answer and the
	// chain has no fallback that answers (fallback: error, or a search that
	// found nothing and no message). RetryAt says when a route comes back.
	ExhaustedError = route.ExhaustedError
	// CallerError is a failure the request itself caused (a parameter the
	// provider refused, a refused topic): it carries the provider's reason.
	CallerError = route.CallerError
	// TooLargeError says that the request is too long for every route of
	// the chain.
	TooLargeError = route.TooLargeError
	// BrokenError ends a stream that broke after its first token and that
	// no route could continue: the text so far is incomplete.
	BrokenError = route.BrokenError
	// InvalidAnswerError says that routes answered a typed request
	// (response_format json_object or json_schema, or tools), repairs
	// included, but no answer matched: its Violations name where and which
	// keyword, never the answer's text (issue 15).
	InvalidAnswerError = route.InvalidAnswerError
	// SchemaError is a typed request that cannot be checked as sent: a
	// response_format or tool the gateway cannot read, or a schema that is
	// not one, loads from elsewhere, or is over a bound (typed.MaxSchemaBytes...).
	SchemaError = typed.RequestError
	// CallerLimitError says that the caller (or the whole site) has asked
	// all its limits allow for now: which limit (Scope and Kind: "caller
	// hour", "site day", "chain burst"...), its value, and RetryAt, when
	// to come back. It is quota.LimitError.
	CallerLimitError = quota.LimitError
)

// ErrUnknownChain is wrapped by the error for a chain name the plan does
// not have.
var ErrUnknownChain = route.ErrUnknownChain

// ErrChainNotAllowed is wrapped by the error for a call on a chain its
// caller's gateway key may not use (config gateway_keys chains).
var ErrChainNotAllowed = caller.ErrChainNotAllowed

// ErrBusy is wrapped by the error for a call the gateway had no turn for:
// server.max_requests were in, and the queue was full or the wait ran out.
var ErrBusy = gate.ErrBusy

// Clock is what Options.Clock takes: the time every deadline, rest, hedge
// delay and budget window is measured on. A program outside this module can
// implement it (a fake clock that its tests advance); nil means the wall
// clock. Implementations must be safe for concurrent use.
type Clock = clock.Clock

// Timer is what a Clock's NewTimer and AfterFunc return.
type Timer = clock.Timer
