package emulator

import "time"

// Kind is one behaviour of an emulated route. Its value is the name written
// to Record.Behaviour.
type Kind string

// The behaviours. Error kinds answer the flavor's real status, headers and
// body (docs/PROVIDERS.md); stream kinds change how an answer is streamed and
// fall back to a plain answer (or the nearest non-stream failure) when the
// request did not ask for a stream.
const (
	// Answer answers with content, usage and the flavor's rate-limit headers.
	Answer Kind = "answer"
	// RateMinute is the flavor's 429 for a per-minute limit.
	RateMinute Kind = "rate_minute"
	// RateDay is the flavor's 429 for a per-day limit.
	RateDay Kind = "rate_day"
	// HighDemand is the flavor's 503 (Gemini: "high demand", UNAVAILABLE).
	HighDemand Kind = "high_demand"
	// ServerError is the flavor's bare server error, naming no overload:
	// a 500 (Gemini: INTERNAL), OpenRouter's 502 (see serverFailure).
	ServerError Kind = "server_error"
	// Hang accepts the request and sends nothing until the client goes
	// away, or until Step.Delay (default 10 minutes) passes on the clock,
	// when the connection is dropped.
	Hang Kind = "hang"
	// Unauthorized is a bad key: 401, or Gemini's 400 API_KEY_INVALID.
	Unauthorized Kind = "unauthorized"
	// Forbidden is the flavor's 403.
	Forbidden Kind = "forbidden"
	// NotFound is the flavor's 404 for an unknown or ungranted model.
	NotFound Kind = "not_found"
	// Decommissioned is Groq's 400 model_decommissioned (NVIDIA: 410; others
	// their 404).
	Decommissioned Kind = "decommissioned"
	// TooLarge is a request over the per-request token cap: Groq's 413
	// "Request too large", GitHub's 413 tokens_limit_reached.
	TooLarge Kind = "too_large"
	// ContextLength is the 400 for a prompt over the context window.
	ContextLength Kind = "context_length"
	// BadThinking is Gemini's 400 "Thinking level is not supported for this
	// model." (others: a 400 about reasoning_effort).
	BadThinking Kind = "bad_thinking"
	// BadRequest is a 400 caused by the caller; Step.Text is its message.
	BadRequest Kind = "bad_request"
	// Refused is a safety refusal: Gemini 200 with promptFeedback.blockReason
	// and no candidates; OpenAI flavors 400 content_filter.
	Refused Kind = "refused"
	// Empty answers 200 with empty content.
	Empty Kind = "empty"
	// Malformed answers 200 with a body that is not JSON.
	Malformed Kind = "malformed"
	// StreamCut sends Step.After content chunks, then ends the response
	// without a finish reason or [DONE]. Not streamed: the JSON body is cut
	// halfway and the connection dropped.
	StreamCut Kind = "stream_cut"
	// StreamStall sends Step.After content chunks, then goes silent without
	// closing until the client leaves (or Step.Delay, default 10 minutes,
	// passes). Not streamed: the headers and half the body, then silence
	// until the client leaves or Step.Delay passes (a stall after the
	// headers), then the connection drops.
	StreamStall Kind = "stream_stall"
	// StreamErrorEvent sends Step.After content chunks, then OpenRouter's
	// mid-stream error event with finish_reason "error", and ends. Not
	// streamed: 200 with the error in the body.
	StreamErrorEvent Kind = "stream_error_event"
	// StreamNoDone streams the whole answer with its finish reason but no
	// [DONE].
	StreamNoDone Kind = "stream_no_done"
	// StreamCRLF frames every event with CRLF line ends.
	StreamCRLF Kind = "stream_crlf"
	// StreamKeepAlive writes ": OPENROUTER PROCESSING" comments before and
	// between the chunks.
	StreamKeepAlive Kind = "stream_keep_alive"
	// StreamMalformedEvent puts one event that is not JSON in the middle of
	// a good stream.
	StreamMalformedEvent Kind = "stream_malformed_event"
	// StreamLongLine sends one content chunk longer than 64 KiB.
	StreamLongLine Kind = "stream_long_line"
	// StreamSplitLines writes every event in pieces of 5 bytes, each
	// flushed on its own, so that lines and line ends arrive split across
	// reads.
	StreamSplitLines Kind = "stream_split_lines"
)

// Step is one scripted behaviour, consumed by one call.
type Step struct {
	Kind Kind
	// Text is the answer of an Answer-like step (default: the model's
	// Answer), or the message of a BadRequest.
	Text string
	// Delay, when positive, replaces the model's Latency before this step
	// answers; for Hang and StreamStall it is how long they last.
	Delay time.Duration
	// After is how many content chunks StreamCut, StreamStall and
	// StreamErrorEvent send before failing.
	After int
	// RetryAfter is the wait a scripted RateMinute or RateDay names; zero
	// means the flavor's usual value.
	RetryAfter time.Duration
	// Reasoning, when set, is thinking text a streamed answer sends before
	// its content, one word per chunk: as delta.reasoning on OpenAI flavors
	// (Groq's parsed reasoning_format, OpenRouter, Cerebras), as parts
	// marked "thought": true on Gemini's alt=sse stream. A whole answer on
	// an OpenAI flavor carries it as message.reasoning.
	Reasoning string
	// ChunkBytes, when positive, streams the answer in pieces of at most
	// that many bytes, cut on character boundaries, instead of one word per
	// chunk: a <think> tag or a word can then be split across chunks.
	ChunkBytes int
	// ToolCalls, when set, is the tool_calls array the answer carries, as
	// an OpenAI provider writes it: each call's "id", "type": "function",
	// and "function" with its "name" and "arguments" (a JSON string). The
	// answer then has no content unless Text is set, and finishes with
	// "tool_calls". A stream sends each call's head, then its arguments in
	// pieces; Gemini sends the calls as functionCall parts (their ids are
	// not Gemini's to send), with the last event.
	ToolCalls string
}

// answers reports whether the kind produces model text (and so completion
// tokens).
func (k Kind) answers() bool {
	switch k {
	case Answer, Empty, StreamCut, StreamStall, StreamErrorEvent, StreamNoDone,
		StreamCRLF, StreamKeepAlive, StreamMalformedEvent, StreamLongLine, StreamSplitLines:
		return true
	}
	return false
}
