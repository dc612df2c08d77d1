package cache

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps heavy clients out of package cache: Redis lives in
// cache/rediscache, so a library user who caches in memory does not pull it
// in (docs/STYLE.md: a dependency test keeps Redis and Prometheus out).
func TestDependencies(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found; cannot list dependencies")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"github.com/redis/go-redis",
		"github.com/prometheus/",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("package cache depends on %s; keep it in a sub-package", dep)
			}
		}
	}
}
