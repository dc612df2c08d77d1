// Package openai owns the JSON shapes of the OpenAI-compatible chat API and
// their translation to and from the provider-neutral llm types: the client's
// request (DecodeRequest), the body sent to an OpenAI-shaped upstream
// (AppendRequest), the upstream's answer and stream chunks (DecodeResponse,
// DecodeChunk), and what the gateway writes back to its client
// (AppendResponse, AppendChunk, AppendUsageChunk, AppendError,
// AppendErrorEvent).
//
// Everything here is on every request's path, so the client's request, the
// upstream's answer and its stream chunks are decoded in one pass of plain
// loops that checks the grammar and reads the fields together
// (requestfast.go, responsefast.go, chunkfast.go); anything unusual falls
// back to encoding/json into small structs, the reference that fuzz tests
// hold each fast path to. Encoding appends to a caller's []byte by hand,
// with a JSON string escaper that writes invalid UTF-8 as U+FFFD.
//
// Text hygiene (seed 004's emoji bug): a string truncated inside an emoji
// leaves a lone UTF-16 surrogate, and some upstreams reject a body that
// carries one. No lone surrogate and no invalid UTF-8 leaves this package:
// decoded strings get U+FFFD in their place (encoding/json already does this
// for "\ud83d" escapes and bad bytes; the fast path matches it, tested in
// TestDecodeRequestTextHygiene), raw JSON kept verbatim (content parts,
// tool_calls, extra fields) is re-encoded when it holds a surrogate escape
// or invalid UTF-8, and the encoder writes U+FFFD for invalid UTF-8 in any
// string, so text the router trimmed mid-rune is safe too.
//
// ThinkFilter separates <think>…</think> reasoning from streamed content.
package openai
