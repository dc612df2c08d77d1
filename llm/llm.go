// Package llm holds the provider-neutral shape of one chat call: the request
// the router hands to a provider adapter, the answer it gets back, and the
// chunks of a streamed answer. It is a leaf: it imports nothing of tollfree,
// and every other package speaks it. Wire formats (OpenAI's JSON, Gemini's)
// live in the packages that own them and translate to and from these types.
package llm

import (
	"encoding/json"
	"errors"
	"net/http"
)

// Message is one turn of a conversation.
type Message struct {
	// Role is system, user, assistant or tool (and developer, kept as sent).
	Role string
	// Content is the text of the message. For a message whose content was an
	// array of parts, it is the text parts joined with "\n", and Parts keeps
	// the original array.
	Content string
	// Parts is the original JSON array of content parts (images, audio...),
	// nil when the content was a plain string. OpenAI-compatible upstreams get
	// it verbatim; Gemini gets each part translated (ParseParts), and a
	// route that cannot take a part is skipped for the request.
	Parts json.RawMessage
	// Name is the optional participant name.
	Name string
	// ToolCalls is the assistant's tool_calls array, verbatim.
	ToolCalls json.RawMessage
	// ToolCallID names the call a tool message answers.
	ToolCallID string
	// Prefix marks an assistant message the model must continue rather than
	// answer (used to continue a stream cut short on another route).
	Prefix bool
}

// Request is one chat completion request, after the caller's JSON has been
// decoded and checked. The router may copy and trim it per route; adapters
// must not modify it.
type Request struct {
	Messages []Message
	// MaxTokens caps the answer's tokens; 0 means unset (the route's default).
	MaxTokens int
	// Temperature and TopP are nil when unset.
	Temperature *float64
	TopP        *float64
	// Stop sequences, nil when unset.
	Stop []string
	// Seed is nil when unset.
	Seed *int64
	// ResponseFormat is the response_format object, verbatim; nil when unset.
	// A json_object or json_schema one is checked: every answer the router
	// returns is JSON (matching the schema), unwrapped from any prose
	// (package typed, issue 15).
	ResponseFormat json.RawMessage
	// ReasoningEffort is the caller's reasoning_effort, "" when unset.
	ReasoningEffort string
	// Stream asks for server-sent events.
	Stream bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
	// User is the caller's end-user id, passed through.
	User string
	// Extra holds every other top-level field of the caller's request,
	// verbatim, for OpenAI-compatible upstreams (tools, tool_choice,
	// logprobs...). Gemini translates what it has a place for; a request
	// with a field it has none for skips its routes (issue 33).
	Extra map[string]json.RawMessage
}

// Usage is the token accounting of one answer, as the provider reported it.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	// ReasoningTokens is the part of CompletionTokens spent thinking.
	ReasoningTokens int
	// CachedTokens is the part of PromptTokens served from the provider's
	// prompt cache.
	CachedTokens int
}

// Response is a whole (non-streamed) answer.
type Response struct {
	// ID is the upstream's response id.
	ID string
	// Model is the model id the upstream says answered.
	Model string
	// Created is the upstream's unix timestamp, 0 if it gave none.
	Created int64
	// Content is the answer text, with any <think> block removed.
	Content string
	// Reasoning is the model's reasoning text when the upstream returned it
	// separately (message.reasoning, reasoning_content, Gemini thoughts).
	Reasoning string
	// ToolCalls is the assistant's tool_calls array, verbatim.
	ToolCalls json.RawMessage
	// FinishReason is stop, length, tool_calls or content_filter.
	FinishReason string
	// Usage is the reported usage; UsageKnown is false when none came back.
	Usage      Usage
	UsageKnown bool
	// Header is the upstream's HTTP response header (rate-limit headers).
	Header http.Header
}

// Chunk is one piece of a streamed answer.
type Chunk struct {
	// Role is set on the first chunk of an answer ("assistant").
	Role string
	// Content is the next piece of answer text.
	Content string
	// Reasoning is the next piece of reasoning text.
	Reasoning string
	// ToolCalls is a tool_calls delta array, verbatim.
	ToolCalls json.RawMessage
	// FinishReason is set on the chunk that finishes the answer.
	FinishReason string
	// Usage is set when the upstream reported usage with this chunk. For
	// upstreams that repeat cumulative usage on every chunk, the adapter
	// passes only the last one.
	Usage *Usage
}

// Stream is a streamed answer being read. Next returns the chunks in order
// and io.EOF once the answer ended cleanly (a finish_reason, or [DONE], or the
// dialect's own clean end). Any other error means the stream broke: the
// answer so far is partial. Close releases the connection; it is safe to call
// more than once and from another goroutine.
type Stream interface {
	Next() (Chunk, error)
	Close() error
	// Header is the upstream's HTTP response header.
	Header() http.Header
}

// ErrNoMessages is returned by Validate for a request without messages.
var ErrNoMessages = errors.New("messages must hold at least one message")

// Text returns the concatenated text of all messages, for token estimates
// and search. It allocates; do not call it on the hot path more than once.
func (r *Request) Text() string {
	n := 0
	for i := range r.Messages {
		n += len(r.Messages[i].Content) + 1
	}
	b := make([]byte, 0, n)
	for i := range r.Messages {
		b = append(b, r.Messages[i].Content...)
		b = append(b, '\n')
	}
	return string(b)
}

// TextLen returns the number of bytes of message text, without allocating.
func (r *Request) TextLen() int {
	n := 0
	for i := range r.Messages {
		n += len(r.Messages[i].Content)
	}
	return n
}
