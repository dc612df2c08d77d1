package caller

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/tollfree/tollfree/config"
)

// maxHops bounds the forwarded addresses read from one request: a chain of
// proxies is a few hops long, and a header longer than that was written by
// a client.
const maxHops = 32

// clientAddr returns the visitor's address: the connection's, or, when the
// connection comes from one of trusted, the rightmost address in header
// (config.HeaderXForwardedFor or HeaderForwarded) that is not itself a
// trusted proxy. Each proxy appends the address it saw, so reading from
// the right reaches the client's true address before anything the client
// wrote. An entry that is not an address ("unknown", an obfuscated RFC
// 7239 identifier) stops the walk at the trusted hop that wrote it. The
// invalid Addr means the connection's address did not parse (a Unix
// socket).
func clientAddr(req *http.Request, trusted []netip.Prefix, header string) netip.Addr {
	hop := parseAddr(req.RemoteAddr)
	if !hop.IsValid() || !isTrusted(hop, trusted) {
		return hop
	}
	vals := req.Header.Values(header)
	forwarded := header == config.HeaderForwarded
	hops := 0
	for i := len(vals) - 1; i >= 0; i-- {
		v := vals[i]
		for v != "" {
			var item string
			if j := strings.LastIndexByte(v, ','); j >= 0 {
				item, v = v[j+1:], v[:j]
			} else {
				item, v = v, ""
			}
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if hops++; hops > maxHops {
				return hop
			}
			if forwarded {
				item = forwardedFor(item)
			}
			a := parseAddr(item)
			if !a.IsValid() {
				return hop
			}
			if !isTrusted(a, trusted) {
				return a
			}
			hop = a
		}
	}
	return hop // every hop is trusted: the request began inside
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseAddr parses an address as a connection or a proxy writes it:
// "203.0.113.7", "203.0.113.7:5678", "2001:db8::1", "[2001:db8::1]:443",
// with an IPv4 address in IPv6 form taken as IPv4 and any zone dropped.
func parseAddr(s string) netip.Addr {
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
			if a, err = netip.ParseAddr(s); err != nil {
				return netip.Addr{}
			}
		} else {
			a = ap.Addr()
		}
	}
	return a.Unmap().WithZone("")
}

// forwardedFor returns the for= value of one RFC 7239 forwarded-element
// ("for=192.0.2.60;proto=http;by=203.0.113.43", `for="[2001:db8::17]:47"`),
// unquoted, or "" when it has none.
func forwardedFor(elem string) string {
	for elem != "" {
		var pair string
		pair, elem, _ = strings.Cut(elem, ";")
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "for") {
			continue
		}
		value = strings.TrimSpace(value)
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = strings.ReplaceAll(value[1:len(value)-1], `\`, "")
		}
		return value
	}
	return ""
}

// addressID names a visitor by address: an IPv4 address itself, an IPv6
// address by its /64 (see the package doc).
func addressID(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "ip:unknown"
	case a.Is6():
		p, _ := a.Prefix(64)
		return "ip:" + p.String()
	}
	return "ip:" + a.String()
}
