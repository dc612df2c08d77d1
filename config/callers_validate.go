package config

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// callerState is who may call, resolved during validation: the keys read
// from the environment and from files, the proxies parsed. Compile copies
// it into the Plan.
type callerState struct {
	adminToken  string
	adminSource string
	keys        []GatewayKey
	// limitsSet marks the keys (same index as keys) that wrote limits:.
	limitsSet   []bool
	userSet     []bool
	proxies     []netip.Prefix
	visitor     VisitorIDs
	callers     Callers
	chainLimits map[string]CallerLimits
}

// validateCallers checks who may call and with which limits (issue 12). It
// refuses what would start a gateway open, or easier to get into, than the
// file says: a key whose variable is unset (a list of such keys resolves
// to nothing, and no keys means no check), a key too short to be safe,
// and admin actions turned on with an empty token.
func (l *loader) validateCallers() {
	f := &l.f
	st := &l.callers
	st.adminToken, st.adminSource = l.secret("admin_token", f.AdminToken, "", "", secretRule{
		what: "admin token", minLen: MinKeyLength,
		unset: "admin actions are on (admin_token is written) but ${%[1]s} is unset or empty: set %[1]s (say, to the output of openssl rand -hex 20), or write ${%[1]s:-} to run without admin actions",
		fix:   "write admin_token: ${TOLLFREE_ADMIN_TOKEN}",
	})
	l.validateKeys()
	l.validateClientAddress()
	l.validateVisitorIDs()
	st.callers = l.validateCallersLimits()
	st.chainLimits = map[string]CallerLimits{}
	for _, name := range l.chainOrder {
		if c := f.Chains[name]; c != nil && c.Callers != nil {
			st.chainLimits[name] = l.callerLimits(joinPath("chains", name)+".callers", c.Callers)
		}
	}
}

// secretRule says how a required secret is checked.
type secretRule struct {
	what   string // "gateway key"
	minLen int
	// unset is the message for a reference whose variable is empty, with
	// %[1]s for the variable's name.
	unset string
	// fix says how to write the value instead of inline.
	fix string
}

// secret resolves a secret written as a reference (s) or read from a file
// (file, at filePath), and checks it against rule. It returns the value and
// where it came from; "" when it is absent, optional and unset, or wrong
// (reported). Messages never quote the value.
func (l *loader) secret(path string, s Secret, file, filePath string, rule secretRule) (value, source string) {
	written := s.Literal || len(s.Vars) > 0
	switch {
	case written && file != "":
		l.probs.addf(filePath, "set %s or %s, not both", lastField(path), lastField(filePath))
		return "", ""
	case s.Literal:
		l.probs.addf(path, "a secret written in the file is refused: %s (any variable name)%s", rule.fix, fileHint(filePath))
		return "", ""
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			l.probs.addf(filePath, "cannot read %s: %v", file, pathErr(err))
			return "", ""
		}
		value, source = strings.TrimSpace(string(b)), "file "+file
		if value == "" {
			l.probs.addf(filePath, "%s is empty; write the %s into it", file, rule.what)
			return "", ""
		}
	case len(s.Vars) > 0:
		for _, v := range s.Vars {
			if !keyVarName(v) {
				// Not quoted: what sits between ${ and } may be a pasted key.
				l.probs.addf(path, "${...} must name an environment variable in capitals, such as ${TOLLFREE_KEY}")
				return "", ""
			}
		}
		value, source = strings.TrimSpace(s.Value), "env "+s.Vars[0]
		if value == "" {
			if !s.Optional {
				l.probs.addf(path, rule.unset, s.Vars[0])
			}
			return "", ""
		}
	default:
		return "", "" // left out, or written empty: off
	}
	if strings.ContainsFunc(value, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		l.probs.addf(path, "the %s from %s holds a space or a control character, which a bearer token cannot carry", rule.what, source)
		return "", ""
	}
	if len(value) < rule.minLen {
		l.probs.addf(path, "the %s from %s is shorter than %d bytes, short enough to be guessed: use a random one (openssl rand -hex 20)", rule.what, source, rule.minLen)
		return "", ""
	}
	return value, source
}

func lastField(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func fileHint(filePath string) string {
	if filePath == "" {
		return ""
	}
	return " or " + lastField(filePath) + ": /run/secrets/name"
}

// pathErr drops the path from a file error: the message names the file
// already.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// validateKeys resolves every gateway key.
func (l *loader) validateKeys() {
	st := &l.callers
	names := map[string]int{}
	for i := range l.f.GatewayKeys {
		kc := &l.f.GatewayKeys[i]
		path := fmt.Sprintf("gateway_keys[%d]", i)
		keyPath := path + ".key"
		if kc.short {
			keyPath = path
		}
		value, source := l.secret(keyPath, kc.Key, kc.KeyFile, path+".key_file", secretRule{
			what: "gateway key", minLen: MinKeyLength,
			unset: "${%[1]s} is unset or empty, and a key list that resolves to nothing leaves the gateway open to anyone: set %[1]s, or write ${%[1]s:-} if the gateway may run without it",
			fix:   "write ${TEAM_KEY}",
		})
		name := kc.Name
		switch {
		case kc.short:
			name = fmt.Sprintf("key%d", i+1)
		case name == "":
			l.probs.addf(path, "a key needs a name (write, say, {name: team, key: ${TEAM_KEY}})")
		case !validKeyName(name):
			l.probs.addf(path+".name", "%q is not a key name: letters, digits, '.', '_' and '-', at most 64", name)
		default:
			if j, dup := names[name]; dup {
				l.probs.addf(path+".name", "%q is the name of gateway_keys[%d] too", name, j)
			}
			names[name] = i
		}
		if len(kc.Key.Vars) == 0 && kc.KeyFile == "" && !kc.Key.Literal {
			if kc.short {
				l.probs.addf(path, "an empty key: write ${TOLLFREE_KEY} (any variable name), or leave gateway_keys out for none")
			} else {
				l.probs.addf(path+".key", "a key needs key: ${NAME} or key_file: /run/secrets/name")
			}
		}
		k := GatewayKey{Name: name, Value: value, Source: source, Owner: kc.Owner, Narrow: kc.Narrow}
		l.validateKeyChains(path, kc, &k)
		l.validateKeyLimits(path, kc, &k)
		if value == "" {
			continue // optional and unset, or reported
		}
		for _, other := range st.keys {
			if subtle.ConstantTimeCompare([]byte(other.Value), []byte(value)) == 1 {
				l.probs.addf(keyPath, "the same key as %s (%s): one key, one name", other.Name, other.Source)
			}
		}
		if st.adminToken != "" && subtle.ConstantTimeCompare([]byte(st.adminToken), []byte(value)) == 1 {
			l.probs.addf(keyPath, "the same value as admin_token: give the owner a key marked owner: true, or use the admin token alone")
		}
		st.keys = append(st.keys, k)
		st.limitsSet = append(st.limitsSet, kc.Limits != nil)
		st.userSet = append(st.userSet, kc.UserLimits != nil)
	}
}

func validKeyName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '.' || r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func (l *loader) validateKeyChains(path string, kc *GatewayKeyConfig, k *GatewayKey) {
	if kc.Chains == nil {
		return
	}
	if len(kc.Chains) == 0 {
		l.probs.addf(path+".chains", "an empty list lets the key use no chain; name chains, or leave chains out for every chain")
		return
	}
	names := slices.Clone(l.chainOrder)
	sort.Strings(names)
	for i, c := range kc.Chains {
		c = strings.TrimSpace(c)
		if _, ok := l.f.Chains[c]; !ok {
			l.probs.addf(fmt.Sprintf("%s.chains[%d]", path, i), "no chain is named %q%s; chains: %s", c, didYouMean(c, names), quoteList(names))
			continue
		}
		if !slices.Contains(k.Chains, c) {
			k.Chains = append(k.Chains, c)
		}
	}
}

func (l *loader) validateKeyLimits(path string, kc *GatewayKeyConfig, k *GatewayKey) {
	if kc.Limits != nil {
		k.Limits = l.callerLimits(path+".limits", kc.Limits)
	}
	if kc.UserLimits != nil {
		k.UserLimits = l.callerLimits(path+".user_limits", kc.UserLimits)
	}
	switch {
	case kc.Owner && (kc.Limits != nil || kc.UserLimits != nil):
		l.probs.addf(path+".owner", "the owner skips caller limits; remove limits: and user_limits:, or owner: true")
	case kc.Owner && kc.Narrow:
		l.probs.addf(path+".narrow", "the owner is not narrowed to end users; remove narrow: or owner:")
	case kc.UserLimits != nil && !kc.Narrow:
		l.probs.addf(path+".user_limits", "user limits need narrow: true (without it the key is one caller: put its limits under limits:)")
	}
}

// callerLimits checks and compiles one set of caller limits.
func (l *loader) callerLimits(path string, c *CallerLimitsConfig) CallerLimits {
	for _, f := range []struct {
		name string
		v    int
	}{{"per_hour", c.PerHour}, {"per_day", c.PerDay}, {"tokens_day", c.TokensDay}, {"concurrent", c.Concurrent}} {
		if f.v < 0 {
			l.probs.addf(path+"."+f.name, "%d is negative; write 0 for no limit", f.v)
		}
	}
	out := CallerLimits{PerHour: c.PerHour, PerDay: c.PerDay, TokensDay: c.TokensDay, Concurrent: c.Concurrent}
	if c.Burst != nil {
		out.Burst = l.burst(path+".burst", c.Burst)
	}
	return out
}

func (l *loader) burst(path string, b *BurstConfig) Burst {
	switch {
	case b.Count < 0:
		l.probs.addf(path+".count", "%d is negative; leave burst out for no burst limit", b.Count)
	case b.Count == 0:
		l.probs.addf(path, "a burst needs count and within (write, say, {count: 5, within: 10s, mute: 2m})")
	case time.Duration(b.Within) < time.Second:
		l.probs.addf(path+".within", "must be 1s or more (write, say, within: 10s)")
	default:
		return Burst{Count: b.Count, Within: time.Duration(b.Within), Mute: time.Duration(b.Mute)}
	}
	return Burst{}
}

// validateCallersLimits checks callers: the limits of each caller and the
// site's.
func (l *loader) validateCallersLimits() Callers {
	c := l.f.Callers
	each := l.callerLimits("callers", &CallerLimitsConfig{PerHour: c.PerHour, PerDay: c.PerDay, TokensDay: c.TokensDay, Concurrent: c.Concurrent, Burst: c.Burst})
	switch {
	case c.SiteDay < 0:
		l.probs.addf("callers.site_day", "%d is negative; write 0 for no limit", c.SiteDay)
	case c.Reserve < 0:
		l.probs.addf("callers.reserve", "%d is negative; write 0 for no reserve", c.Reserve)
	case c.Reserve > 0 && c.Reserve >= c.SiteDay:
		l.probs.addf("callers.reserve", "%d must be less than site_day %d", c.Reserve, c.SiteDay)
	}
	return Callers{
		PerHour: each.PerHour, PerDay: each.PerDay, TokensDay: each.TokensDay,
		Concurrent: each.Concurrent, Burst: each.Burst,
		SiteDay: max(c.SiteDay, 0), Reserve: max(c.Reserve, 0),
	}
}

// validateClientAddress parses trusted_proxies and forwarded_header.
func (l *loader) validateClientAddress() {
	f := &l.f
	for i, s := range f.TrustedProxies {
		path := fmt.Sprintf("trusted_proxies[%d]", i)
		p, err := parseProxy(strings.TrimSpace(s))
		switch {
		case err != nil:
			l.probs.addf(path, "%s is not an address or a CIDR (write, say, 10.0.0.0/8, 127.0.0.1 or fd00::/8)", l.dec.quote(path, s))
		case p.Bits() == 0:
			l.probs.addf(path, "%s trusts every address, so any client could write its own address: list only your proxies", l.dec.quote(path, s))
		default:
			l.callers.proxies = append(l.callers.proxies, p)
		}
	}
	switch strings.ToLower(strings.TrimSpace(f.ForwardedHeader)) {
	case "x-forwarded-for":
		f.ForwardedHeader = HeaderXForwardedFor
	case "forwarded":
		f.ForwardedHeader = HeaderForwarded
	default:
		l.probs.addf("forwarded_header", "%s is neither X-Forwarded-For nor Forwarded", l.dec.quote("forwarded_header", f.ForwardedHeader))
	}
}

// parseProxy parses a CIDR or a single address (a /32 or /128); an IPv4
// address written as IPv6 (::ffff:10.0.0.1) is taken as IPv4, as the
// connection's address will be.
func parseProxy(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			return netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked(), nil
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func (l *loader) validateVisitorIDs() {
	v := l.f.VisitorIDs
	if v == nil {
		return
	}
	secret, source := l.secret("visitor_ids.secret", v.Secret, v.SecretFile, "visitor_ids.secret_file", secretRule{
		what: "visitor id secret", minLen: MinVisitorSecretLength,
		unset: "visitor ids are on but ${%[1]s} is unset or empty: set %[1]s (openssl rand -hex 32), or leave visitor_ids out",
		fix:   "write secret: ${TOLLFREE_VISITOR_SECRET}",
	})
	if len(v.Secret.Vars) == 0 && v.SecretFile == "" && !v.Secret.Literal {
		l.probs.addf("visitor_ids", "visitor ids need secret: ${NAME} or secret_file: /run/secrets/name")
	}
	if time.Duration(v.TTL) < time.Minute {
		l.probs.addf("visitor_ids.ttl", "must be 1m or more (write, say, 720h)")
	}
	if !validCookieName(v.Cookie) {
		l.probs.addf("visitor_ids.cookie", "%q is not a cookie name", v.Cookie)
	}
	if v.Header == "" || strings.ContainsAny(v.Header, " :\t\r\n") {
		l.probs.addf("visitor_ids.header", "%q is not a header name", v.Header)
	}
	l.callers.visitor = VisitorIDs{Secret: secret, Source: source, TTL: time.Duration(v.TTL), Cookie: v.Cookie, Header: v.Header}
}

// validCookieName reports whether s is an RFC 6265 cookie name (a token).
func validCookieName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`()<>@,;:\"/[]?={}`, r) {
			return false
		}
	}
	return true
}

// compileCallers copies who may call into p, with each key's default
// limits: a key that does not narrow is one caller, limited like any other
// (callers:) unless it sets its own; a key that narrows limits each of its
// users like any other caller unless it sets user_limits.
func (l *loader) compileCallers(p *Plan) {
	st := &l.callers
	p.AdminToken, p.AdminTokenSource = st.adminToken, st.adminSource
	p.Callers = st.callers
	each := st.callers.Each()
	for i, k := range st.keys {
		k.Chains = slices.Clone(k.Chains)
		switch {
		case k.Owner:
		case k.Narrow && !st.userSet[i]:
			k.UserLimits = each
		case !k.Narrow && !st.limitsSet[i]:
			k.Limits = each
		}
		p.Keys = append(p.Keys, k)
		p.GatewayKeys = append(p.GatewayKeys, k.Value)
	}
	p.ClientAddress = ClientAddress{TrustedProxies: slices.Clone(st.proxies), Header: l.f.ForwardedHeader}
	p.VisitorIDs = st.visitor
}
