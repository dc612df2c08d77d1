// Package reqid makes request ids: a random prefix per Source and a
// counter, so that ids are unique across restarts and instances without a
// syscall per request. The HTTP API names each request it receives with
// one (X-Request-Id); the gateway names the requests a Go program hands it.
package reqid

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

// Source makes ids. Its zero value is not usable: call New. It is safe for
// concurrent use.
type Source struct {
	prefix string
	n      atomic.Uint64
}

// New returns a Source with a fresh random prefix.
func New() *Source {
	var b [6]byte
	rand.Read(b[:])
	return &Source{prefix: "req_" + hex.EncodeToString(b[:])}
}

// Next returns a new id ("req_" and 12 hex digits, then a base-36 count).
func (s *Source) Next() string {
	return s.prefix + strconv.FormatUint(s.n.Add(1), 36)
}
