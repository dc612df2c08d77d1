package caller

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
)

// TestVisitorAddress: the visitor is the connection's address, unless the
// connection comes from a trusted proxy, whose header is read from the
// right, skipping trusted hops. A spoofed header from anyone else changes
// nothing; behind a trusted proxy two visitors are counted apart; IPv6 is
// counted by /64.
func TestVisitorAddress(t *testing.T) {
	const proxies = "trusted_proxies: [10.0.0.0/8, 2001:db8:ffff::/48]\n"
	for _, tc := range []struct {
		name    string
		config  string
		remote  string
		headers map[string][]string
		want    string
	}{
		{"no proxies, no header", "", "203.0.113.7:5555", nil, "ip:203.0.113.7"},
		{"no proxies: a header changes nothing", "", "203.0.113.7:5555",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "ip:203.0.113.7"},
		{"spoofed header from an untrusted address", proxies, "203.0.113.7:5555",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}, "Forwarded": {"for=198.51.100.2"}}, "ip:203.0.113.7"},
		{"trusted proxy, one visitor", proxies, "10.0.0.2:443",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "ip:198.51.100.1"},
		{"trusted proxy, another visitor", proxies, "10.0.0.2:443",
			map[string][]string{"X-Forwarded-For": {"198.51.100.2"}}, "ip:198.51.100.2"},
		{"the client's own entries stay left of the proxy's", proxies, "10.0.0.2:443",
			map[string][]string{"X-Forwarded-For": {"1.1.1.1, 10.9.9.9, 198.51.100.1"}}, "ip:198.51.100.1"},
		{"two trusted hops", proxies, "10.0.0.2:443",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1, 10.0.0.3"}}, "ip:198.51.100.1"},
		{"several header lines, in order", proxies, "10.0.0.2:443",
			map[string][]string{"X-Forwarded-For": {"1.1.1.1", "198.51.100.1, 10.0.0.3"}}, "ip:198.51.100.1"},
		{"trusted proxy without a header", proxies, "10.0.0.2:443", nil, "ip:10.0.0.2"},
		{"every hop trusted", proxies, "10.0.0.2:443",
			map[string][]string{"X-Forwarded-For": {"10.1.1.1, 10.0.0.3"}}, "ip:10.1.1.1"},
		{"unknown entry stops at the trusted hop", proxies, "10.0.0.2:443",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1, unknown"}}, "ip:10.0.0.2"},
		{"entries with ports", proxies, "10.0.0.2:443",
			map[string][]string{"X-Forwarded-For": {"[2001:db8:1:2::9]:4711, 10.0.0.3:80"}}, "ip:2001:db8:1:2::/64"},
		{"IPv6 by /64", "", "[2001:db8:1:2:aaaa::1]:5555", nil, "ip:2001:db8:1:2::/64"},
		{"the same /64, another address", "", "[2001:db8:1:2:bbbb::7]:5555", nil, "ip:2001:db8:1:2::/64"},
		{"another /64", "", "[2001:db8:1:3::1]:5555", nil, "ip:2001:db8:1:3::/64"},
		{"IPv4 in IPv6 form", "", "[::ffff:203.0.113.7]:5555", nil, "ip:203.0.113.7"},
		{"IPv6 trusted proxy", proxies, "[2001:db8:ffff::1]:443",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "ip:198.51.100.1"},
		{"Forwarded configured", proxies + "forwarded_header: Forwarded\n", "10.0.0.2:443",
			map[string][]string{"Forwarded": {`for=198.51.100.1;proto=https, for="[2001:db8:cafe::17]:4711";by=10.0.0.3`}, "X-Forwarded-For": {"1.2.3.4"}},
			"ip:2001:db8:cafe::/64"},
		{"Forwarded: X-Forwarded-For is not read", proxies + "forwarded_header: Forwarded\n", "10.0.0.2:443",
			map[string][]string{"X-Forwarded-For": {"1.2.3.4"}}, "ip:10.0.0.2"},
		{"Forwarded obfuscated", proxies + "forwarded_header: Forwarded\n", "10.0.0.2:443",
			map[string][]string{"Forwarded": {"for=198.51.100.1, for=_hidden"}}, "ip:10.0.0.2"},
		{"Forwarded in any case", proxies + "forwarded_header: Forwarded\n", "10.0.0.2:443",
			map[string][]string{"Forwarded": {"For=198.51.100.1"}}, "ip:198.51.100.1"},
		{"X-Forwarded-For configured: Forwarded is not read", proxies, "10.0.0.2:443",
			map[string][]string{"Forwarded": {"for=1.2.3.4"}}, "ip:10.0.0.2"},
		{"a socket address", "", "@", nil, "ip:unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(plan(t, tc.config), clock.NewFake(t0))
			req := request(tc.remote, "")
			for k, vs := range tc.headers {
				for _, v := range vs {
					req.Header.Add(k, v)
				}
			}
			v, err := r.Identify(req)
			if err != nil {
				t.Fatal(err)
			}
			if v.ID != tc.want || v.Source != FromAddress {
				t.Errorf("visitor = %q (%s), want %q", v.ID, v.Source, tc.want)
			}
		})
	}
}

// TestVisitorAddressHops: a header longer than any chain of proxies is not
// walked to its end.
func TestVisitorAddressHops(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	req := request("10.0.0.2:443", "")
	req.Header.Set("X-Forwarded-For", "198.51.100.1,"+strings.Repeat("10.0.0.1,", 100)+"10.0.0.1")
	if a := clientAddr(req, trusted, config.HeaderXForwardedFor); a != netip.MustParseAddr("10.0.0.1") {
		t.Errorf("clientAddr = %v, want the last trusted hop walked", a)
	}
}

func TestForwardedFor(t *testing.T) {
	for in, want := range map[string]string{
		"for=192.0.2.60;proto=http;by=203.0.113.43": "192.0.2.60",
		`for="[2001:db8:cafe::17]:4711"`:            "[2001:db8:cafe::17]:4711",
		"proto=https; for = 192.0.2.1":              "192.0.2.1",
		"by=203.0.113.43":                           "",
		"for=unknown":                               "unknown",
		`for="\"quoted\""`:                          `"quoted"`,
		"":                                          "",
	} {
		if got := forwardedFor(in); got != want {
			t.Errorf("forwardedFor(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzClientAddr: whatever the headers hold, reading them neither panics
// nor returns a trusted proxy's address while an untrusted one was named
// to its right.
func FuzzClientAddr(f *testing.F) {
	f.Add("10.0.0.2:443", "198.51.100.1, 10.0.0.3", `for=198.51.100.1;proto=https, for="[2001:db8::17]:4711"`)
	f.Add("203.0.113.7:1", "", "")
	f.Add("[::1]:1", ",,,", "for=;;;==")
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	f.Fuzz(func(t *testing.T, remote, xff, fwd string) {
		req := &http.Request{RemoteAddr: remote, Header: http.Header{"X-Forwarded-For": {xff}, "Forwarded": {fwd}}}
		for _, h := range []string{config.HeaderXForwardedFor, config.HeaderForwarded} {
			a := clientAddr(req, trusted, h)
			if !isTrusted(parseAddr(remote), trusted) && a != parseAddr(remote) {
				t.Fatalf("from untrusted %q, the header was believed: %v", remote, a)
			}
			_ = addressID(a)
		}
	})
}
