package main

import (
	"github.com/tollfree/tollfree/config"

	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// writeCallers writes who may call and with which limits, for `tollfree
// check` (issue 12): each key by name with where it comes from (never its
// value), the chains it may use and its limits; how visitors are told
// apart; the site's cap and reserve; the gateway's queue; and each chain's
// own caller limits.
func writeCallers(w io.Writer, p *config.Plan) {
	fmt.Fprintln(w)
	if len(p.Keys) > 0 {
		fmt.Fprintf(w, "callers: keys only (a request without one of these keys gets 401)\n")
	} else {
		fmt.Fprintf(w, "callers: open (no gateway keys: anyone may call, counted as a visitor)\n")
	}
	if len(p.Keys) > 0 || p.AdminToken != "" {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tFROM\tCHAINS\tLIMITS")
		if p.AdminToken != "" {
			fmt.Fprintf(tw, "admin token\t%s\tall\towner: no caller limits, uses the reserve; admin actions\n", orDash(p.AdminTokenSource))
		}
		for _, k := range p.Keys {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.Name, orDash(k.Source), chainsString(k.Chains), keyLimits(k))
		}
		tw.Flush()
	}
	if len(p.Keys) == 0 {
		fmt.Fprintf(w, "visitors: each %s\n", limitsString(p.Callers.Each()))
		writeVisitors(w, p)
	}
	site := "site: no daily cap"
	if c := p.Callers; c.SiteDay > 0 {
		site = fmt.Sprintf("site: %d a day", c.SiteDay)
		if c.Reserve > 0 {
			site += fmt.Sprintf(", %d of them kept for the owner", c.Reserve)
		}
	}
	fmt.Fprintln(w, site)
	fmt.Fprintf(w, "gateway: %d requests at once, %d more wait up to %s\n", p.Server.MaxRequests, p.Server.QueueLength, shortDuration(p.Server.QueueWait))
	writeConnections(w, p)
	writeStatusRule(w, p)
	for _, name := range p.ChainOrder {
		if c := p.Chains[name]; !c.Callers.IsZero() {
			fmt.Fprintf(w, "chain %s: each caller %s\n", name, limitsString(c.Callers))
		}
	}
}

func chainsString(chains []string) string {
	if chains == nil {
		return "all"
	}
	return strings.Join(chains, ",")
}

func keyLimits(k config.GatewayKey) string {
	switch {
	case k.Owner:
		return "owner: no caller limits, uses the reserve"
	case k.Narrow:
		return "all users together: " + limitsString(k.Limits) + "; each user (the user field): " + limitsString(k.UserLimits)
	}
	return limitsString(k.Limits)
}

// writeVisitors says how visitors are told apart.
func writeVisitors(w io.Writer, p *config.Plan) {
	if v := p.VisitorIDs; v.Secret != "" {
		fmt.Fprintf(w, "  told apart by a signed visitor id (cookie %s or header %s, good for %s, secret from %s), else by address\n",
			v.Cookie, v.Header, shortDuration(v.TTL), v.Source)
	} else {
		fmt.Fprintln(w, "  told apart by address")
	}
	addr := "the connection's"
	if ca := p.ClientAddress; len(ca.TrustedProxies) > 0 {
		nets := make([]string, len(ca.TrustedProxies))
		for i, n := range ca.TrustedProxies {
			nets[i] = n.String()
		}
		addr = ca.Header + " when the connection is from " + strings.Join(nets, ", ") + ", else the connection's"
	}
	fmt.Fprintf(w, "  address: %s; IPv6 by /64\n", addr)
}

// shortDuration writes d without trailing zero units: 720h, 2m, 1m30s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// limitsString writes limits as "15/hour, 40/day, 2 at once".
func limitsString(l config.CallerLimits) string {
	var parts []string
	if l.PerHour > 0 {
		parts = append(parts, strconv.Itoa(l.PerHour)+"/hour")
	}
	if l.PerDay > 0 {
		parts = append(parts, strconv.Itoa(l.PerDay)+"/day")
	}
	if l.TokensDay > 0 {
		parts = append(parts, strconv.Itoa(l.TokensDay)+" tokens/day")
	}
	if l.Concurrent > 0 {
		parts = append(parts, strconv.Itoa(l.Concurrent)+" at once")
	}
	if b := l.Burst; b.Count > 0 {
		s := fmt.Sprintf("more than %d in %s", b.Count, shortDuration(b.Within))
		if b.Mute > 0 {
			s += " mutes for " + shortDuration(b.Mute)
		} else {
			s += " waits"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "no limit"
	}
	return strings.Join(parts, ", ")
}

// writeConnections says how `tollfree serve` shares its connections
// (issue 32).
func writeConnections(w io.Writer, p *config.Plan) {
	sv := p.Server
	if sv.MaxConnections <= 0 {
		fmt.Fprintln(w, "connections: no cap")
		return
	}
	per := fmt.Sprintf("%d from one address", sv.MaxConnectionsPerAddress)
	if sv.MaxConnectionsPerAddress >= sv.MaxConnections {
		per = "no cap per address"
	} else if len(p.ClientAddress.TrustedProxies) > 0 {
		per += " (a trusted proxy's not capped)"
	}
	fmt.Fprintf(w, "connections: %d at once, %s; a new one takes the slot of the idlest, else it gets 503 too_many_connections\n", sv.MaxConnections, per)
}

// writeStatusRule says who may read /status, /status.json and /metrics,
// and why (config/status.go).
func writeStatusRule(w io.Writer, p *config.Plan) {
	const pages = "/status, /status.json and /metrics"
	if !p.StatusPrivate {
		fmt.Fprintf(w, "status: public (%s): anyone who reaches the gateway reads %s\n", p.StatusWhy, pages)
		return
	}
	who := "the admin token"
	if !p.StatusAdminOnly && len(p.GatewayKeys) > 0 {
		who = "a gateway key or the admin token"
	}
	fmt.Fprintf(w, "status: private (%s): %s need %s\n", p.StatusWhy, pages, who)
	if p.AdminToken == "" && (p.StatusAdminOnly || len(p.GatewayKeys) == 0) {
		fmt.Fprintln(w, "  no admin token is set, so nobody reads them: set admin_token, or write status: public")
	}
}
