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

// TestBinaryHasNoTextTemplate: text/template (which html/template uses)
// looks methods up by name at run time, so once it is in a program the
// linker keeps every exported method of every type that is ever an
// interface value. With go-redis in the binary that made it 25.0 MB
// instead of 16.5 MB, and its resident pages under load 3-4 MB more
// (issue 18, item 7). The status page is written without it
// (internal/statuspage); this keeps it out of the command.
func TestBinaryHasNoTextTemplate(t *testing.T) {
	checkLeaks(t)
	out, err := exec.Command("go", "list", "-deps", "./cmd/tollfree").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "text/template" {
			t.Error("cmd/tollfree imports text/template (through html/template?): write the page by hand, see internal/statuspage's doc")
		}
	}
}
