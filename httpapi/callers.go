package httpapi

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"

	"github.com/tollfree/tollfree/llm"
)

// HeaderCaller names the caller when the request's "user" field does not.
const HeaderCaller = "X-Tollfree-Caller"

// caller works out who asks, for the caller limits the Gateway applies
// (seed 000: per-visitor limits; seed 004: the owner gets through): the
// request's "user" field, else the X-Tollfree-Caller header, else the
// client's address; the owner is whoever sends the admin token. Without
// caller limits in the plan nobody needs to know, and nothing is worked
// out.
func (s *Server) caller(r *http.Request, req *llm.Request) llm.Caller {
	if !s.limits {
		return llm.Caller{}
	}
	c := llm.Caller{ID: req.User}
	if c.ID == "" {
		c.ID = r.Header.Get(HeaderCaller)
	}
	if c.ID == "" {
		c.ID, _, _ = net.SplitHostPort(r.RemoteAddr)
	}
	if tok := s.plan.AdminToken; tok != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		c.Owner = ok && subtle.ConstantTimeCompare([]byte(got), []byte(tok)) == 1
	}
	return c
}
