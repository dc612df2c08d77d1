package tollfree_test

import (
	"os/exec"
	"strings"
	"testing"
)

// deps lists what pkg imports, directly or not (go list -deps).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// TestLibraryDependencies: embedding tollfree does not pull in Redis or
// Prometheus (docs/STYLE.md: a heavy dependency gets its own package). They
// enter only through state/redisstore, cache/rediscache and metrics, which
// cmd/tollfree wires.
func TestLibraryDependencies(t *testing.T) {
	checkLeaks(t)
	for _, dep := range deps(t, ".") {
		for _, banned := range []string{"github.com/redis/", "github.com/prometheus/"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("the library imports %s", dep)
			}
		}
	}
}

// TestBinaryHasNoTextTemplate: text/template (which html/template uses)
// looks methods up by name at run time, so once it is in a program the
// linker keeps every exported method of every type that is ever an
// interface value. With go-redis in the binary that made it 25.0 MB
// instead of 16.5 MB, and its resident pages under load 3-4 MB more
// (issue 18, item 7). The status page is written without it
// (internal/statuspage); this keeps it out of the command.
func TestBinaryHasNoTextTemplate(t *testing.T) {
	checkLeaks(t)
	for _, dep := range deps(t, "./cmd/tollfree") {
		if dep == "text/template" {
			t.Error("cmd/tollfree imports text/template (through html/template?): write the page by hand, see internal/statuspage's doc")
		}
	}
}
