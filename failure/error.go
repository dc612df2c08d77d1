package failure

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
)

// Sentinels adapters wrap in UpstreamError.Err when the HTTP exchange itself
// succeeded but the answer is unusable.
var (
	// ErrEmptyAnswer is a 2xx with no content.
	ErrEmptyAnswer = errors.New("empty answer")
	// ErrMalformed is a 2xx whose body does not parse.
	ErrMalformed = errors.New("malformed answer")
	// ErrRefused is a safety refusal delivered as a 200 (Gemini
	// promptFeedback.blockReason, finishReason SAFETY).
	ErrRefused = errors.New("refused by the provider's safety filter")
	// ErrStreamCut is a stream that ended without finishing.
	ErrStreamCut = errors.New("stream ended before it finished")
	// ErrStreamStalled is a stream silent past its idle limit.
	ErrStreamStalled = errors.New("stream stalled")
	// ErrCannotCarry is a request the adapter cannot send as it is, with
	// nothing left out (issue 33): a part or field its dialect has no
	// place for, or media it could not fetch. No call was made; the route
	// is skipped for this request only.
	ErrCannotCarry = errors.New("the route cannot carry the request")
)

// MaxBody is how much of an error body an adapter keeps in UpstreamError.Body.
const MaxBody = 64 << 10

// UpstreamError is what provider adapters return for every failed call. Its
// Error text names the route and the status or transport failure, never body
// text; Classify reads the rest.
type UpstreamError struct {
	// Provider is the provider's name ("groq").
	Provider string
	// Flavor names the provider's quirks: groq, gemini, cerebras,
	// openrouter, nvidia, mistral, github, ollama, cloudflare, pollinations
	// or generic.
	Flavor string
	// Model is the provider's id of the model.
	Model string
	// Status is the HTTP status; 0 for a transport error.
	Status int
	// Header is the response's header, nil for a transport error.
	Header http.Header
	// Body is at most MaxBody bytes of the response body. Error never
	// prints it.
	Body []byte
	// Err is the transport error, the context error, or one of the
	// sentinels above.
	Err error
}

// Error returns "groq/llama-3.3-70b-versatile: HTTP 429", or the transport
// failure ("...: dial tcp 10.0.0.1:443: connect: connection refused") with
// the URL dropped and any key redacted.
func (e *UpstreamError) Error() string {
	s := e.Provider
	if e.Model != "" {
		if s != "" {
			s += "/"
		}
		s += e.Model
	}
	if s == "" {
		s = "upstream"
	}
	if e.Status != 0 {
		s += ": HTTP " + strconv.Itoa(e.Status)
	}
	if e.Err != nil {
		s += ": " + errText(e.Err)
	} else if e.Status == 0 {
		s += ": unknown failure"
	}
	return s
}

// Unwrap returns Err.
func (e *UpstreamError) Unwrap() error { return e.Err }

// errText is err's text without a *url.Error's method and URL (a Gemini URL
// may carry ?key=), redacted.
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	return Redact(err.Error())
}
