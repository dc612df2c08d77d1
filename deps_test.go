package tollfree_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryDependencies: embedding tollfree does not pull in Redis or
// Prometheus (STYLE.md: a heavy dependency gets its own package). They
// enter only through state/redisstore, cache/rediscache and metrics, which
// cmd/tollfree wires.
func TestLibraryDependencies(t *testing.T) {
	checkLeaks(t)
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/redis/", "github.com/prometheus/"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("the library imports %s", dep)
			}
		}
	}
}
