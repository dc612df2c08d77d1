package config

import (
	"net"
	"net/netip"
	"strings"
)

// Who may read /status, /status.json and /metrics, which name every
// route, budget and provider error (issue 10), so that a chain's
// hide_route holds there too and a gateway reachable from outside does
// not show them to anyone by default (issue 32). The rule, first match:
//
//   - status: public or private, as written;
//   - a chain hides its routes (hide_route, or a site assistant): private,
//     for the admin token only, since a gateway key is what that chain's
//     callers hold;
//   - gateway keys are set: private, for a gateway key or the admin token;
//   - it listens beyond loopback (0.0.0.0, a LAN address, a host name):
//     private, for the admin token;
//   - otherwise (loopback, no key): public.

// decideStatus works out StatusPrivate, StatusAdminOnly and StatusWhy from
// the file's status (p.statusSetting), the chains, the keys and Listen.
func (p *Plan) decideStatus() {
	hidden := p.hidingChains()
	p.StatusPrivate, p.StatusAdminOnly = true, len(hidden) > 0
	switch {
	case p.statusSetting == StatusPublic:
		p.StatusPrivate, p.StatusAdminOnly = false, false
		p.StatusWhy = "status: public"
		if len(hidden) > 0 {
			p.StatusWhy += ", which shows the routes of chains that hide them (" + strings.Join(hidden, ", ") + ")"
		}
	case p.statusSetting == StatusPrivate:
		p.StatusWhy = "status: private"
	case len(hidden) == 1:
		p.StatusWhy = "chain " + hidden[0] + " hides its routes"
	case len(hidden) > 1:
		p.StatusWhy = "chains " + strings.Join(hidden, ", ") + " hide their routes"
	case len(p.GatewayKeys) > 0:
		p.StatusWhy = "gateway keys are set"
	case !loopbackOnly(p.Listen):
		p.StatusWhy = "it listens on " + p.Listen + ", beyond loopback, with no gateway key"
	default:
		p.StatusPrivate = false
		p.StatusWhy = "it listens on loopback only, with no gateway key"
	}
}

// ListenOn sets the address the gateway listens on (the -listen flag) and
// works out again who may read the status, which depends on it.
func (p *Plan) ListenOn(addr string) {
	p.Listen = addr
	p.decideStatus()
}

// StatusTokens are the bearer tokens that read a private status: the
// admin token, and the gateway keys unless a chain hides its routes.
func (p *Plan) StatusTokens() []string {
	tokens := []string{p.AdminToken}
	if !p.StatusAdminOnly {
		tokens = append(tokens, p.GatewayKeys...)
	}
	return tokens
}

// hidingChains names the chains that hide their routes, in config order.
func (p *Plan) hidingChains() []string {
	var names []string
	for _, n := range p.ChainOrder {
		if c := p.Chains[n]; c != nil && c.HideRoute {
			names = append(names, n)
		}
	}
	return names
}

// loopbackOnly reports whether addr (host:port) is reachable from this
// machine only: a loopback address or "localhost". An empty host (every
// interface), a LAN address or another name is not.
func loopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}
