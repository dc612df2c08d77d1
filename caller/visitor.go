package caller

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"
)

// A visitor id token is "v1." and the base64url (unpadded) of 40 bytes: a
// random id (16), its expiry in Unix seconds (8, big-endian), and the first
// 16 bytes of HMAC-SHA256(secret, "tollfree visitor v1" || id || expiry).
// 128 bits of MAC are beyond forging; the id is random, so a visitor
// cannot pick one that collides with another's.
const (
	tokenPrefix = "v1."
	idLen       = 16
	expLen      = 8
	macLen      = 16
	rawLen      = idLen + expLen + macLen
	macContext  = "tollfree visitor v1"
)

var tokenLen = len(tokenPrefix) + base64.RawURLEncoding.EncodedLen(rawLen)

// signer issues and checks visitor id tokens. It is immutable.
type signer struct {
	key []byte
	ttl time.Duration
}

func newSigner(secret string, ttl time.Duration) *signer {
	return &signer{key: []byte(secret), ttl: ttl}
}

func (s *signer) mac(idExp []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(macContext))
	m.Write(idExp)
	return m.Sum(nil)[:macLen]
}

// issue returns a new token and when it expires.
func (s *signer) issue(now time.Time) (string, time.Time) {
	var id [idLen]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails
	return s.issueID(now, id)
}

// issueID returns the token of id and when it expires.
func (s *signer) issueID(now time.Time, id [idLen]byte) (string, time.Time) {
	var raw [rawLen]byte
	copy(raw[:idLen], id[:])
	exp := now.Add(s.ttl).Truncate(time.Second)
	binary.BigEndian.PutUint64(raw[idLen:idLen+expLen], uint64(exp.Unix()))
	copy(raw[idLen+expLen:], s.mac(raw[:idLen+expLen]))
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:]), exp
}

// verify returns the id of a token the signer issued that has not expired
// at now, in hex, and when it expires; false for anything else
// (malformed, tampered, expired, signed with another secret).
func (s *signer) verify(tok string, now time.Time) (string, time.Time, bool) {
	if len(tok) != tokenLen || !strings.HasPrefix(tok, tokenPrefix) {
		return "", time.Time{}, false
	}
	var raw [rawLen]byte
	n, err := base64.RawURLEncoding.Strict().Decode(raw[:], []byte(tok[len(tokenPrefix):]))
	if err != nil || n != rawLen {
		return "", time.Time{}, false
	}
	if !hmac.Equal(raw[idLen+expLen:], s.mac(raw[:idLen+expLen])) {
		return "", time.Time{}, false
	}
	exp := int64(binary.BigEndian.Uint64(raw[idLen : idLen+expLen]))
	if now.Unix() >= exp {
		return "", time.Time{}, false
	}
	return hex.EncodeToString(raw[:idLen]), time.Unix(exp, 0), true
}
