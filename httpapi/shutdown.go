package httpapi

import (
	"context"
	"errors"
)

// ErrShutdown is the cause a server cancels its requests' context with
// when its shutdown grace has run out (cmd/tollfree: the BaseContext of
// its http.Server, cancelled with context.CancelCauseFunc). A request
// cancelled so is not a caller gone away: a stream gets an error event
// (never a [DONE]: the answer is cut), a request not yet answered a 503.
var ErrShutdown = errors.New("the gateway is shutting down")

// What a request cut by the shutdown is told: a stream that has begun
// (its text so far is incomplete), or a request not yet answered (nothing
// was sent: issue 32, it said "the text received so far is incomplete"
// to a request that had received none).
const (
	shutdownStreamMessage = "the gateway shut down before this answer finished; the text received so far is incomplete; ask again"
	shutdownMessage       = "the gateway shut down before this request was answered; nothing of an answer was sent; ask again"
)

// ShuttingDown reports whether ctx was cancelled by the server's shutdown.
func ShuttingDown(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrShutdown)
}
