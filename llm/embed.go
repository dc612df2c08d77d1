package llm

import "net/http"

// Embeddings (issue 33): a chain of embedding routes turns texts into
// vectors, through the same flow as chat (the caller check, the cache, the
// routes' budgets, rests and retries). The HTTP API takes OpenAI's
// /v1/embeddings; Gemini's embedContent and batchEmbedContents are its
// adapter's business.

// EmbedRequest is one request for embeddings: one vector per input.
type EmbedRequest struct {
	// Input are the texts to embed, in order.
	Input []string
	// Dimensions asks for vectors of that length (OpenAI's dimensions,
	// Gemini's outputDimensionality), 0 for the model's default.
	Dimensions int
	// User is the caller's end-user id, passed through.
	User string
}

// TextLen returns the bytes of text to embed.
func (r *EmbedRequest) TextLen() int {
	n := 0
	for _, s := range r.Input {
		n += len(s)
	}
	return n
}

// Embeddings are the vectors of an EmbedRequest, one per input, in order.
type Embeddings struct {
	Vectors [][]float32
	// Model is the model id the upstream says answered, "" if it said none.
	Model string
	// Usage is the reported usage (prompt tokens only); UsageKnown is false
	// when none came back.
	Usage      Usage
	UsageKnown bool
	// Header is the upstream's HTTP response header.
	Header http.Header
}

// EmbedCall is one embeddings request handed to the gateway.
type EmbedCall struct {
	Request *EmbedRequest
	Caller  Caller
	// NoCache skips the chain's response cache for this request.
	NoCache bool
	// ID is the request id written to the call log; "" makes one.
	ID string
}

// EmbedAnswer is the gateway's answer to an EmbedCall.
type EmbedAnswer struct {
	Embeddings
	// ServedBy says which step answered: a route, the cache or a shared
	// call (an embeddings chain has no fallback).
	ServedBy ServedBy
	// Route is the id of the route whose vectors these are.
	Route     string
	RequestID string
	CacheMiss bool
}
