package httpapi

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
)

// Admitter decides whether a caller may ask now; *quota.Book implements it.
type Admitter interface {
	Admit(ctx context.Context, caller string, owner bool, l quota.CallerLimits) (quota.Admission, error)
}

// HeaderCaller names the caller when the request's "user" field does not.
const HeaderCaller = "X-Tollfree-Caller"

// admit applies the plan's caller limits (seed 000: a visitor gets 15
// questions an hour and 40 a day; past the site's daily cap it answers by
// search alone; seed 004: a reserve so the owner always gets through). It
// writes the refusal itself and returns false when the request must stop.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, ch *config.Chain, req *llm.Request) bool {
	c := s.plan.Callers
	if s.admitter == nil || c == (config.Callers{}) {
		return true
	}
	caller := req.User
	if caller == "" {
		caller = r.Header.Get(HeaderCaller)
	}
	if caller == "" {
		caller, _, _ = net.SplitHostPort(r.RemoteAddr)
	}
	owner := false
	if tok := s.plan.AdminToken; tok != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		owner = ok && subtle.ConstantTimeCompare([]byte(got), []byte(tok)) == 1
	}
	ad, err := s.admitter.Admit(r.Context(), caller, owner, quota.CallerLimits{PerHour: c.PerHour, PerDay: c.PerDay, SiteDay: c.SiteDay, Reserve: c.Reserve})
	if err != nil {
		s.log.Warn("caller limits: the state store did not answer; letting the request through", "err", err)
	}
	if ad.OK {
		return true
	}
	// Past the site's cap, a chain with a search fallback answers by search
	// alone; a caller over their own limits is told when to come back.
	if ad.Limit == "site day" {
		if ix := s.search[ch.Name]; ix != nil {
			if text, ok := ix.Answer(lastUser(req)); ok {
				s.fallbackText(w, ch, req, "search", text)
				s.obs.FallbackServed(ch.Name, "search")
				s.obs.Request(ch.Name, OutcomeFallback, 0)
				return false
			}
		}
	}
	if !ad.RetryAt.IsZero() {
		w.Header().Set("Retry-After", retryAfter(s.clock.Now(), ad.RetryAt))
	}
	msg := "this caller has asked its " + strconv.Itoa(limitOf(c, ad.Limit)) + " questions for the " + strings.TrimPrefix(ad.Limit, "caller ") + "; try again later"
	if ad.Limit == "site day" {
		msg = "the site has used today's " + strconv.Itoa(c.SiteDay) + " questions; try again later"
	}
	writeError(w, http.StatusTooManyRequests, msg, "rate_limit_error", "", "caller_limit")
	s.obs.Request(ch.Name, OutcomeRejected, 0)
	return false
}

func limitOf(c config.Callers, name string) int {
	switch name {
	case "caller hour":
		return c.PerHour
	case "caller day":
		return c.PerDay
	}
	return c.SiteDay
}
