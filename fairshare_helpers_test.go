package tollfree_test

import (
	"crypto/sha256"
	"fmt"
)

// visitorAddr is the address a named visitor calls from, as a trusted
// proxy forwards it: one address per name, in 198.18.0.0/15 (RFC 2544),
// which no test config trusts.
func visitorAddr(name string) string {
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf("198.%d.%d.%d", 18+sum[0]%2, sum[1], 1+sum[2]%254)
}
