package caller

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
)

// The reasons Identify refuses a request; both are answered 401.
var (
	// ErrNoKey: keys are configured and the request sent none.
	ErrNoKey = errors.New("this gateway needs a key: send Authorization: Bearer <key>")
	// ErrUnknownKey: the request's bearer token is no key of this gateway.
	ErrUnknownKey = errors.New("unknown key: the bearer token is not a key of this gateway")
)

// ErrChainNotAllowed is wrapped by the error for a caller asking for a
// chain its key may not use (config gateway_keys chains); answered 403.
var ErrChainNotAllowed = errors.New("this key may not use the chain")

// Source says how a caller was identified.
type Source int

// The sources.
const (
	// FromAddress: a visitor, by its address.
	FromAddress Source = iota
	// FromVisitorID: a visitor, by the id the gateway signed.
	FromVisitorID
	// FromKey: a gateway key.
	FromKey
	// FromAdminToken: the admin token, the owner.
	FromAdminToken
)

var sourceNames = [...]string{"address", "visitor id", "key", "admin token"}

// String names the source for logs and metrics.
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "unknown"
}

// AdminKey is Identity.Key for the admin token: not a key name (names hold
// no space), so no key can pass for it.
const AdminKey = "admin token"

// Identity is who is calling.
type Identity struct {
	// Key names the gateway key the request came with (its configured
	// name), AdminKey for the admin token, "" for a visitor.
	Key string
	// ID is what the caller's limits count: "key:team", "key:bot" and a
	// user, "ip:203.0.113.7", "ip:2001:db8:1:2::/64", "visitor:<hex>". It may
	// hold an address or a user's id: never log it. quota hashes it before
	// it names a counter.
	ID string
	// Owner skips the caller limits and may use the site's reserve.
	Owner bool
	// Source says how the caller was identified.
	Source Source
	// Chains are the chains the caller may use; nil means every chain.
	// Shared with the Resolver: read only.
	Chains []string
	// Limits are the caller's, counted on ID.
	Limits config.CallerLimits
	// KeyLimits, for a key that narrows, count all the key's users
	// together; zero otherwise.
	KeyLimits config.CallerLimits
	// Also is, for a visitor id issued less than NewVisitor ago, the
	// address it comes from ("ip:..."), whose counters Limits spend too
	// (issue 32: an address that threw each id away after a request got
	// a fresh set of limits with every one, N + N² answers for a limit of
	// N). An older id counts on its own: a visitor behind a shared
	// address is told apart once it has come back.
	Also string

	narrow bool // a key that narrows, not yet narrowed
}

// Allows reports whether the caller may use chain.
func (id Identity) Allows(chain string) bool {
	return id.Chains == nil || slices.Contains(id.Chains, chain)
}

// Narrow names the end user of a key that narrows: the request's user
// field. Any other identity, and an empty user, is returned as it is (a
// key that narrows then counts its requests without a user as one user).
// A user longer than maxUser bytes is hashed, so that an ID stays small.
func (id Identity) Narrow(user string) Identity {
	if !id.narrow || user == "" {
		return id
	}
	if len(user) > maxUser {
		sum := sha256.Sum256([]byte(user))
		user = "sha256:" + hex.EncodeToString(sum[:])
	}
	id.ID += user
	id.narrow = false
	return id
}

// userSep ends the ID of a key that narrows; the user follows it.
const userSep = "\x00user:"

// maxUser is the longest user kept as it is in an ID.
const maxUser = 256

// Resolver works out Identities from requests. It is immutable after New
// and safe for concurrent use.
type Resolver struct {
	keys     map[[sha256.Size]byte]*entry
	byName   map[string]*entry // the same entries, by Identity.Key
	open     bool              // no keys: visitors may call
	proxies  []netip.Prefix
	header   string
	visitor  *signer // nil: visitor ids are off
	cookie   string
	vheader  string
	limits   config.CallerLimits // each visitor's
	siteDay  int
	reserve  int
	clock    clock.Clock
	maxLease time.Duration
}

// entry is one key's prebuilt Identity, and its digest.
type entry struct {
	digest [sha256.Size]byte
	id     Identity
}

// New returns a Resolver for plan p: its keys (and admin token), client
// address rules, visitor ids and limits. clk tells the time for visitor
// ids; nil is the real clock.
func New(p *config.Plan, clk clock.Clock) *Resolver {
	if clk == nil {
		clk = clock.Real{}
	}
	r := &Resolver{
		keys:    make(map[[sha256.Size]byte]*entry, len(p.Keys)+1),
		byName:  make(map[string]*entry, len(p.Keys)+1),
		open:    len(p.Keys) == 0,
		proxies: slices.Clone(p.ClientAddress.TrustedProxies),
		header:  p.ClientAddress.Header,
		limits:  p.Callers.Each(),
		siteDay: p.Callers.SiteDay,
		reserve: p.Callers.Reserve,
		clock:   clk,
	}
	if r.header == "" {
		r.header = config.HeaderXForwardedFor
	}
	if v := p.VisitorIDs; v.Secret != "" {
		r.visitor = newSigner(v.Secret, v.TTL)
		r.cookie, r.vheader = v.Cookie, v.Header
	}
	for _, k := range p.Keys {
		id := Identity{Key: k.Name, ID: "key:" + k.Name, Owner: k.Owner, Source: FromKey, Chains: slices.Clone(k.Chains), Limits: k.Limits}
		if k.Narrow {
			id.ID += userSep
			id.Limits, id.KeyLimits, id.narrow = k.UserLimits, k.Limits, true
		}
		r.add(k.Value, id)
	}
	if p.AdminToken != "" {
		r.add(p.AdminToken, Identity{Key: AdminKey, ID: "owner:admin token", Owner: true, Source: FromAdminToken})
	}
	for _, ch := range p.Chains {
		r.maxLease = max(r.maxLease, ch.Deadline)
	}
	return r
}

func (r *Resolver) add(value string, id Identity) {
	d := sha256.Sum256([]byte(value))
	e := &entry{digest: d, id: id}
	r.keys[d], r.byName[id.Key] = e, e
}

// Identify returns who sent req: the key or admin token it bears, else a
// visitor by signed id or address. It fails with ErrNoKey or
// ErrUnknownKey (401) when keys are configured and req bears none of
// them. It reads only headers and the connection's address; a key is
// found with one hash and one map lookup.
func (r *Resolver) Identify(req *http.Request) (Identity, error) {
	if tok, ok := Bearer(req.Header.Get("Authorization")); ok {
		d := sha256.Sum256([]byte(tok))
		if e := r.keys[d]; e != nil && subtle.ConstantTimeCompare(d[:], e.digest[:]) == 1 {
			return e.id, nil
		}
		if !r.open {
			return Identity{}, ErrUnknownKey
		}
	} else if !r.open {
		return Identity{}, ErrNoKey
	}
	return r.visitorOf(req), nil
}

// Caller is the llm.Caller the gateway is handed for id: its ID, key name
// and whether it is the owner. Of turns it back into id.
func (id Identity) Caller() llm.Caller {
	return llm.Caller{ID: id.ID, Key: id.Key, Owner: id.Owner, Also: id.Also}
}

// Of returns the Identity of a caller as the gateway is handed it (the
// HTTP API's Identity.Caller, or a Go program's own llm.Caller): for a
// Key, that key's chains and limits (AdminKey is the owner), counted on
// c.ID when set, else on the key's own ID; without a Key, a visitor with
// the callers: limits, or, without an ID either, held to the site's cap
// alone. c.Owner makes any caller the owner. A Key that names no key of
// the plan is an error wrapping ErrUnknownKey.
func (r *Resolver) Of(c llm.Caller) (Identity, error) {
	if c.Key == "" {
		id := Identity{ID: c.ID, Owner: c.Owner, Source: FromAddress}
		if c.ID != "" {
			id.Limits, id.Also = r.limits, c.Also
		}
		return id, nil
	}
	e := r.byName[c.Key]
	if e == nil {
		if c.Key != AdminKey {
			return Identity{}, fmt.Errorf("caller: no gateway key is named %q: %w", c.Key, ErrUnknownKey)
		}
		// A program names the owner without an admin token configured.
		e = &entry{id: Identity{Key: AdminKey, ID: "owner:admin token", Owner: true, Source: FromAdminToken}}
	}
	id := e.id
	if c.ID != "" {
		id.ID = c.ID
	}
	id.Owner = id.Owner || c.Owner
	id.narrow = false
	return id, nil
}

// Bearer returns the token of an Authorization header "Bearer <token>"
// (the scheme in any case, RFC 7235). Every endpoint that takes a token
// reads it here, so that "bearer" is the owner everywhere or nowhere
// (issue 32: it was 401 on /admin/* and the status pages).
func Bearer(h string) (string, bool) {
	const scheme = "bearer "
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(scheme):])
	return tok, tok != ""
}

// visitorOf identifies a visitor: by a valid signed id, else by address.
func (r *Resolver) visitorOf(req *http.Request) Identity {
	v := Identity{Source: FromAddress, Limits: r.limits}
	if r.visitor != nil {
		tok := req.Header.Get(r.vheader)
		if tok == "" {
			if c, err := req.Cookie(r.cookie); err == nil {
				tok = c.Value
			}
		}
		now := r.clock.Now()
		if id, exp, ok := r.visitor.verify(tok, now); ok {
			v.ID, v.Source = "visitor:"+id, FromVisitorID
			if exp.Sub(now) > r.visitor.ttl-NewVisitor {
				v.Also = addressID(clientAddr(req, r.proxies, r.header))
			}
			return v
		}
	}
	v.ID = addressID(clientAddr(req, r.proxies, r.header))
	return v
}

// NewVisitor is how long a visitor id counts against its address's limits
// too (Identity.Also): a day, the longest window of a caller limit, so
// that within any window an address gets no more than its limits however
// many ids it has minted in it.
const NewVisitor = 24 * time.Hour

// VisitorIDs reports whether the Resolver issues signed visitor ids.
func (r *Resolver) VisitorIDs() bool { return r.visitor != nil }

// IssueVisitor issues a new signed visitor id and the cookie that carries
// it (HttpOnly, SameSite Lax, for the id's lifetime; Secure when secure).
// Issue one only to a request counted by its address (Source FromAddress)
// and let through, so that one address mints ids no faster than its own
// limits allow. It returns nil when visitor ids are off.
func (r *Resolver) IssueVisitor(secure bool) *http.Cookie {
	if r.visitor == nil {
		return nil
	}
	now := r.clock.Now()
	tok, exp := r.visitor.issue(now)
	return &http.Cookie{
		Name: r.cookie, Value: tok, Path: "/", Expires: exp, MaxAge: int(exp.Sub(now) / time.Second),
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode,
	}
}

// VisitorHeader is the request header an app sends its visitor id in.
func (r *Resolver) VisitorHeader() string { return r.vheader }

// Ask returns the quota.Ask of one request of id to chain ch (nil for
// none), estimated at tokens, with the site's cap and reserve. Its lease
// outlasts the longest chain deadline.
func (r *Resolver) Ask(id Identity, ch *config.Chain, tokens int) quota.Ask {
	a := quota.Ask{
		Caller: id.ID, Also: id.Also, Owner: id.Owner, Limits: id.Limits,
		SiteDay: r.siteDay, Reserve: r.reserve, Tokens: tokens,
		Lease: max(quota.DefaultLease, 2*r.maxLease),
	}
	if ch != nil && id.ID != "" {
		// A call without an id is held to the site's cap alone, not to
		// one chain count shared by every such call.
		a.Chain, a.ChainLimits = ch.Name, ch.Callers
	}
	if !id.KeyLimits.IsZero() {
		// Named by ID's key part: the same counters whatever the user.
		a.Key, a.KeyLimits = id.Key, id.KeyLimits
	}
	return a
}
