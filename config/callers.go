package config

import (
	"net/netip"
	"reflect"
	"time"
)

// This file holds who may call and with which limits (issue 12): the
// schema of gateway keys, visitor ids and caller limits, and the compiled
// values they become.

// GatewayKeyConfig is one gateway key. Written as a bare reference
// (gateway_keys: [${TOLLFREE_KEY}]) it is a key named key1, key2... by its
// place in the list, with every chain and the callers: limits.
type GatewayKeyConfig struct {
	// Name names the key in `check`, the call log and the limits' counters:
	// letters, digits, '.', '_' and '-', at most 64. Required in the
	// mapping form.
	Name string `yaml:"name"`
	// Key must be a reference, ${TEAM_KEY}: a key written in the file is
	// refused. At least MinKeyLength bytes.
	Key Secret `yaml:"key"`
	// KeyFile is a file holding the key (a container secret); set Key or
	// KeyFile.
	KeyFile string `yaml:"key_file"`
	// Chains are the chains the key may use. Default every chain.
	Chains []string `yaml:"chains"`
	// Limits are the key's own: all its requests together. Default, for a
	// key that does not narrow, the callers: limits (the key is one
	// caller); for a key that narrows, none.
	Limits *CallerLimitsConfig `yaml:"limits"`
	// UserLimits are each end user's, for a key that narrows. Default the
	// callers: limits.
	UserLimits *CallerLimitsConfig `yaml:"user_limits"`
	// Owner marks the owner's key: no caller limits, and the site's
	// reserve (seed 004: "so the owner can always get through").
	Owner bool `yaml:"owner"`
	// Narrow lets the request's user field name an end user of the key, so
	// that one key serves many users, each counted apart (a bot's backend).
	// Default false: the user field is ignored, so changing it dodges
	// nothing.
	Narrow bool `yaml:"narrow"`

	short bool // written as a bare reference
}

func (k *GatewayKeyConfig) decodeNode(dec *decoder, n *node, path string) {
	switch n.kind {
	case scalarNode, nullNode:
		k.short = true
		k.Key.decodeNode(dec, n, path)
	case mapNode:
		type plain GatewayKeyConfig // no decodeNode: decode field by field
		var p plain
		dec.decodeStruct(n, path, reflect.ValueOf(&p).Elem())
		*k = GatewayKeyConfig(p)
	default:
		dec.probs.addf(path, "want ${NAME} or {name: team, key: ${TEAM_KEY}}, not %s", n.kind)
	}
}

// CallerLimitsConfig limits one caller, or one key's callers together.
// Zero means no limit.
type CallerLimitsConfig struct {
	PerHour    int          `yaml:"per_hour"`   // requests per sliding hour
	PerDay     int          `yaml:"per_day"`    // requests per rolling day
	TokensDay  int          `yaml:"tokens_day"` // tokens (prompt and answer) per rolling day
	Concurrent int          `yaml:"concurrent"` // requests in flight at once
	Burst      *BurstConfig `yaml:"burst"`
}

// BurstConfig mutes a caller that asks too fast (seed 004: "everyone has
// cooldowns and a burst mute"): more than Count requests within Within
// mutes the caller for Mute.
type BurstConfig struct {
	// Count is the most requests allowed within Within; the next one is
	// refused and starts the mute. Required.
	Count int `yaml:"count"`
	// Within is the window Count is counted over, at least 1s. Required.
	Within Duration `yaml:"within"`
	// Mute is how long the caller is then refused. Default 0: refused only
	// until the window has room again.
	Mute Duration `yaml:"mute"`
}

// VisitorIDsConfig turns on visitor ids signed by the gateway: an id it
// issues in a cookie (or a header, for an app) and recognises by its
// HMAC-SHA256 signature, so that visitors who share an address (an
// office, a mobile carrier's NAT) are counted apart, and a visitor cannot
// make one up.
type VisitorIDsConfig struct {
	// Secret signs the ids; ${NAME}, at least 32 bytes. Changing it retires
	// every id issued.
	Secret Secret `yaml:"secret"`
	// SecretFile is a file holding the secret; set Secret or SecretFile.
	SecretFile string `yaml:"secret_file"`
	// TTL is how long an id is good for. Default 720h (30 days).
	TTL Duration `yaml:"ttl"`
	// Cookie is the cookie's name. Default tollfree_visitor.
	Cookie string `yaml:"cookie"`
	// Header is the request header an app sends the id in. Default
	// X-Tollfree-Visitor.
	Header string `yaml:"header"`
}

// MinKeyLength is the shortest gateway key or admin token accepted, in
// bytes. A bearer key can be guessed by anyone who can reach the gateway,
// as fast as it answers: 20 random characters (`openssl rand -hex 20`
// gives 40) are beyond any such guessing even drawn from hex (80 bits),
// while what is shorter is most often a word or a placeholder ("changeme",
// "secret123") that is first in every list. It also keeps the scrubbing of
// secrets by value (package secret) exact.
const MinKeyLength = 20

// MinVisitorSecretLength is the shortest visitor-id secret accepted, in
// bytes: an HMAC-SHA256 key shorter than the hash's 32 bytes weakens it
// (RFC 2104, section 3).
const MinVisitorSecretLength = 32

// The defaults of visitor ids.
const (
	DefaultVisitorTTL    = 30 * 24 * time.Hour
	DefaultVisitorCookie = "tollfree_visitor"
	DefaultVisitorHeader = "X-Tollfree-Visitor"
)

// The values of forwarded_header.
const (
	HeaderXForwardedFor = "X-Forwarded-For"
	HeaderForwarded     = "Forwarded"
)

// CallerLimits limit one caller, or one key's callers together. Zero
// fields: no limit.
type CallerLimits struct {
	// PerHour caps requests in a sliding hour.
	PerHour int
	// PerDay caps requests in a rolling day (the last 24 hours).
	PerDay int
	// TokensDay caps tokens, prompt and answer, in a rolling day.
	TokensDay int
	// Concurrent caps requests in flight at once.
	Concurrent int
	// Burst mutes a caller that asks too fast.
	Burst Burst
}

// IsZero reports whether l limits nothing.
func (l CallerLimits) IsZero() bool { return l == CallerLimits{} }

// Burst mutes a caller that asks too fast: more than Count requests within
// Within mutes it for Mute. Count 0: off.
type Burst struct {
	Count  int
	Within time.Duration
	// Mute 0: the caller is refused only until Within has room again.
	Mute time.Duration
}

// GatewayKey is one compiled gateway key.
type GatewayKey struct {
	// Name names the key ("team", or "key1" for a bare reference).
	Name string
	// Value is the key, from the environment or a file; never logged.
	Value string
	// Source says where the key came from ("env TEAM_KEY", "file
	// /run/secrets/team"), for `check`.
	Source string
	// Chains are the chains the key may use; nil means every chain.
	Chains []string
	// Limits are the key's: for a key that does not narrow, those of its
	// one caller; for a key that does, those of all its users together.
	Limits CallerLimits
	// UserLimits are each end user's, for a key that narrows.
	UserLimits CallerLimits
	// Owner marks the owner: no caller limits, and the site's reserve.
	Owner bool
	// Narrow lets the request's user field name an end user of the key.
	Narrow bool
}

// VisitorIDs are the compiled visitor-id settings. An empty Secret means
// visitor ids are off.
type VisitorIDs struct {
	// Secret is the HMAC-SHA256 key; never logged.
	Secret string
	// Source says where it came from ("env VISITOR_SECRET"), for `check`.
	Source string
	// TTL is how long an issued id is good for.
	TTL time.Duration
	// Cookie and Header name where a visitor sends its id.
	Cookie string
	Header string
}

// ClientAddress says where a visitor's address comes from.
type ClientAddress struct {
	// TrustedProxies are the proxies whose Header is believed; empty: the
	// connection's address is the visitor's.
	TrustedProxies []netip.Prefix
	// Header is HeaderXForwardedFor or HeaderForwarded.
	Header string
}
