// Package caller decides who is calling, as the operator configured it and
// never as the caller claims (issue 12): the Identity that the caller
// limits (package quota) count, the chains it may use and whether it is
// the owner.
//
// # Keys
//
// A request that sends Authorization: Bearer <token> is the gateway key
// of that value, or the owner when it is the admin token. Keys are held
// hashed (SHA-256): a request's token is hashed once and looked up in a
// map of digests. The lookup compares digests, never the key, so its
// timing can tell an attacker only how much of a digest they guessed,
// which does not help find a key (SHA-256 has no known preimage attack);
// the digest found is compared again in constant time. No key, token or
// digest is ever logged or put in an error. With keys configured, a
// request without one, or with one that is not a key, is refused (401);
// without keys, a token that is not the admin token is ignored (the
// OpenAI SDKs always send one), and the caller is a visitor.
//
// A key that narrows (config narrow: true) serves many end users: the
// request's user field, given to Identity.Narrow after the body is
// decoded, names the user, counted apart under the key's user limits,
// while the key's own limits count all its users together. Any other
// key's user field is ignored, so changing it dodges nothing.
//
// # Visitors
//
// Without keys the caller is a visitor, told apart by:
//
//   - a visitor id the gateway signed (config visitor_ids): an
//     HMAC-SHA256 token it issues in a cookie or a header, holding a
//     random id and an expiry. Tampering breaks the signature and an
//     expired one is ignored; either way the visitor is then counted by
//     address. A free-form field (the user field, a header the caller
//     writes) never names a visitor.
//   - else its address: the connection's, or, when the connection comes
//     from a trusted proxy (config trusted_proxies), the address that
//     proxy wrote in X-Forwarded-For (or Forwarded, RFC 7239). The header
//     is read from the right, skipping trusted hops: the first address
//     that is not a trusted proxy is the client; what a client wrote
//     further left is never reached, and a header from anyone but a
//     trusted proxy is ignored.
//
// An IPv6 visitor is counted by its /64. A subscriber line gets at least
// a /64 (RFC 6177), and a host on it picks any of its 2^64 addresses at
// will and rotates them for privacy (RFC 8981): counted by the full
// address, one visitor could ask afresh from a new address every time.
// The /64 is to IPv6 what one address behind a home NAT is to IPv4.
//
// Visitor ids let visitors behind one address (an office, a carrier's
// NAT) be counted apart. Each id is issued to a request counted by its
// address, so one address mints ids no faster than its own limits let it
// ask; a visitor that throws its id away and asks again gets a new one on
// that address's count. The site's daily cap bounds everyone together.
package caller
