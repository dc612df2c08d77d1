package route

import (
	"fmt"
	"strings"
	"time"

	"github.com/tollfree/tollfree/failure"
)

// CallerError is a failure the request itself caused (a bad parameter, a
// refused topic, a parameter no route of the chain takes): the caller gets
// the provider's reason, and nothing rests.
type CallerError struct {
	Route  string
	Class  failure.Class
	Status int
	// Message is the provider's reason, redacted.
	Message string
	// Param is the refused parameter of a failure.Unsupported error, as
	// the provider named it ("" when it named none).
	Param string
}

func (e *CallerError) Error() string {
	return fmt.Sprintf("route: %s refused the request (%s): %s", e.Route, e.Class, e.Message)
}

// ExhaustedError says that no route of a chain answered: each was resting,
// out of budget, disabled, or failed.
type ExhaustedError struct {
	Chain string
	// RetryAt is the soonest time a route comes back; zero if unknown.
	RetryAt time.Time
	// Skips says what happened to each route, in order.
	Skips []Skip
	// OverWaitCap is set on a waiting chain whose soonest route is further
	// away than its wait cap.
	OverWaitCap time.Duration
}

func (e *ExhaustedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no route of chain %q could answer", e.Chain)
	if e.OverWaitCap > 0 && !e.RetryAt.IsZero() {
		fmt.Fprintf(&b, "; the soonest comes back %s, past the chain's wait cap of %s", fmtUntil(e.RetryAt)[6:], e.OverWaitCap)
	}
	for i, s := range e.Skips {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if s.Route != "" {
			b.WriteString(s.Route)
			b.WriteString(" ")
		}
		b.WriteString(s.Reason)
		if !s.Until.IsZero() {
			b.WriteString(" ")
			b.WriteString(fmtUntil(s.Until))
		}
	}
	return b.String()
}

// TooLargeError says that a request is too long for every route of a chain:
// for its context, or for its per-minute or per-day token limit.
type TooLargeError struct {
	Chain   string
	Tokens  int
	Largest int
	// MaxTokens is the caller's max_tokens, 0 when not set: the answer it
	// asks room for counts against every context and token limit.
	MaxTokens int
}

func (e *TooLargeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the request (about %d tokens", e.Tokens)
	if e.MaxTokens > 0 {
		fmt.Fprintf(&b, ", and max_tokens %d for the answer", e.MaxTokens)
	}
	fmt.Fprintf(&b, ") is too long for every route of chain %q", e.Chain)
	if e.Largest > 0 {
		fmt.Fprintf(&b, "; the largest context is %d tokens", e.Largest)
	}
	if e.MaxTokens > 0 {
		b.WriteString(": lower max_tokens, or shorten the conversation or the system prompt")
	} else {
		b.WriteString(": shorten the conversation or the system prompt")
	}
	return b.String()
}

// fmtUntil formats a time for error messages.
func fmtUntil(t time.Time) string {
	if t.IsZero() {
		return "until lifted"
	}
	return "until " + t.UTC().Format(time.RFC3339)
}
