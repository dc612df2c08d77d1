package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/caller/gate"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/quota"
)

// Who is calling is decided by the operator, never by the caller (issue
// 12): the Resolver (package caller) reads the gateway key or admin token
// the request bears, a visitor id the gateway signed, or the client's
// address (from X-Forwarded-For or Forwarded only when the connection comes
// from a trusted proxy). The request's user field narrows the caller only
// for a key marked narrow: true; for any other caller it counts for
// nothing, and so does every header a client writes freely (tollfree no
// longer reads X-Tollfree-Caller: a caller that names itself can name
// itself anew at every request).

// Response headers of a request refused by a caller limit. The
// X-RateLimit-* names and forms are OpenAI's and Groq's (docs/PROVIDERS.md): a
// limit, what is left of it, and when it resets as a Go duration ("59m0s");
// -Requests for a count of requests (an hour, a day, a burst, requests at
// once), -Tokens for tokens per day. HeaderLimit names the limit that
// refused, as scope and kind ("caller hour", "key day", "site day",
// "chain burst").
const (
	HeaderLimit              = "X-Tollfree-Limit"
	HeaderRateLimitRequests  = "X-RateLimit-Limit-Requests"
	HeaderRateRemainRequests = "X-RateLimit-Remaining-Requests"
	HeaderRateResetRequests  = "X-RateLimit-Reset-Requests"
	HeaderRateLimitTokens    = "X-RateLimit-Limit-Tokens"
	HeaderRateResetTokens    = "X-RateLimit-Reset-Tokens"
)

// identify works out who sent r. A request refused (keys are set and it
// bears none of them) is answered 401 here, and ok is false.
func (s *Server) identify(w http.ResponseWriter, r *http.Request) (who caller.Identity, ok bool) {
	who, err := s.callers.Identify(r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tollfree"`)
		writeError(w, http.StatusUnauthorized, err.Error(), "invalid_request_error", "", "invalid_api_key")
		return who, false
	}
	return who, true
}

// issueVisitor gives a visitor counted by its address, and let through, a
// visitor id signed by the gateway (config visitor_ids): a cookie for a
// browser, and the same token in the visitor header (visitor_ids.header,
// X-Tollfree-Visitor by default) for an app to send back in it. Only such a request gets one, so that an address
// mints ids no faster than its own limits let it ask.
func (s *Server) issueVisitor(w http.ResponseWriter, r *http.Request, who caller.Identity) {
	if who.Source != caller.FromAddress || !s.callers.VisitorIDs() {
		return
	}
	c := s.callers.IssueVisitor(r.TLS != nil)
	http.SetCookie(w, c)
	w.Header().Set(s.callers.VisitorHeader(), c.Value)
}

// limitRefused answers a request refused by a caller limit: 429 in OpenAI's
// format, Retry-After, the X-RateLimit-* headers of the limit and
// X-Tollfree-Limit naming it.
func (s *Server) limitRefused(w http.ResponseWriter, le *quota.LimitError) {
	now := s.clock.Now()
	h := w.Header()
	h.Set("Retry-After", retryAfter(now, le.RetryAt))
	h.Set(HeaderLimit, le.Name())
	reset := caller.ResetIn(now, le.RetryAt)
	limit := strconv.FormatInt(le.Limit, 10)
	if le.Kind == quota.KindTokens {
		// Tokens are refused when what is left cannot hold the request's
		// estimate; what is left is not known here, so it is not said.
		h.Set(HeaderRateLimitTokens, limit)
		h.Set(HeaderRateResetTokens, reset)
	} else {
		h.Set(HeaderRateLimitRequests, limit)
		h.Set(HeaderRateRemainRequests, "0")
		h.Set(HeaderRateResetRequests, reset)
	}
	writeError(w, http.StatusTooManyRequests, caller.LimitMessage(le, now), "rate_limit_error", "", "caller_limit")
}

// chainList names the chains who may use, for an error message.
func chainList(p *config.Plan, who caller.Identity) string {
	var names []string
	for _, name := range p.ChainOrder {
		if who.Allows(name) {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// callerRefused answers the caller check's other refusals: a chain the
// key may not use (403), and a gateway at its cap (503 with Retry-After:
// a turn frees up as soon as any request ends). It reports false for any
// other error.
func (s *Server) callerRefused(w http.ResponseWriter, who caller.Identity, ch *config.Chain, err error) bool {
	switch {
	case errors.Is(err, caller.ErrChainNotAllowed):
		writeError(w, http.StatusForbidden, "this key may not use the model "+strconv.Quote(ch.Name)+"; it may use: "+chainList(s.plan, who), "invalid_request_error", "model", "model_not_allowed")
	case errors.Is(err, gate.ErrBusy):
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "the gateway is working on as many requests as it takes at once; try again in a moment", "server_error", "", "gateway_busy")
	default:
		return false
	}
	return true
}
