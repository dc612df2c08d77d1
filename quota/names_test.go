package quota

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"
	"testing"
)

// The names are the Store's keys: counts written before this cache (in a
// state file, in Redis) must be found under the same names after it.
func TestNamesAreTheStoreKeysOfBefore(t *testing.T) {
	old := func(prefix, id string) string {
		sum := sha256.Sum256([]byte(id))
		return prefix + hex.EncodeToString(sum[:16])
	}
	c := newNameCache()
	for _, tc := range []struct {
		prefix, id, id2, base string
	}{
		{callerPrefix, "ip:203.0.113.7", "", old("caller:", "ip:203.0.113.7")},
		{chainPrefix, "support", "ip:203.0.113.7", old("chain:", "support\x00ip:203.0.113.7")},
		{keyPrefix, "partner", "", old("key:", "partner")},
	} {
		n := c.of(tc.prefix, tc.id, tc.id2)
		want := map[string]string{"base": tc.base, "mute": tc.base + "|mute", "burst": tc.base + "|burst", "conc": tc.base + "|conc", "hour": tc.base + "|hour", "day": tc.base + "|day", "tokens": tc.base + "|tokens"}
		got := map[string]string{"base": n.base, "mute": n.mute, "burst": n.burst, "conc": n.conc, "hour": n.hour, "day": n.day, "tokens": n.tokens}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s%q %q: %s name = %q, want %q", tc.prefix, tc.id, tc.id2, k, got[k], w)
			}
		}
	}
	if got, want := c.of(callerPrefix, "ip:203.0.113.7", "").hour, "caller:68368b836af7b89c2c6ef9a3ada81a8d|hour"; got != want {
		t.Errorf("a caller's hour is named %q, want %q", got, want)
	}
}

// Many callers in a cache of a few hundred slots, from several goroutines:
// each gets its own names every time, whoever took its slot meanwhile.
func TestNamesStayRightWhenTheCacheIsFull(t *testing.T) {
	c := newNameCache()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5000 {
				id := "ip:10.0." + strconv.Itoa(g) + "." + strconv.Itoa(i%3000)
				n := c.of(callerPrefix, id, "")
				if want := makeNames(callerPrefix, id, ""); *n != *want {
					t.Errorf("names of %q = %+v, want %+v", id, *n, *want)
					return
				}
				ch := c.of(chainPrefix, "support", id)
				if ch.base == n.base || ch.id2 != id {
					t.Errorf("the chain scope of %q took the caller's names: %+v", id, *ch)
					return
				}
			}
		}()
	}
	wg.Wait()
}
