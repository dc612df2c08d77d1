package tollfree_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmbedExample builds and runs examples/embed, a Go program outside
// this module that embeds the Gateway, offline, and wants the chain's
// fallback answer from it when every route is down (issue 11). It runs a
// copy, its replace directive pointed at this checkout, so that the
// example's own go.mod and go.sum are never rewritten; the module cache
// already holds every dependency (GOPROXY=off).
func TestEmbedExample(t *testing.T) {
	checkLeaks(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the example: %v", err)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	src, dir := filepath.Join(root, "examples", "embed"), t.TempDir()
	files, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.IsDir() || !(strings.HasSuffix(f.Name(), ".go") || f.Name() == "go.mod" || f.Name() == "go.sum") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("mod", "edit", "-replace", "github.com/tollfree/tollfree="+root)
	out := goCmd("run", ".")
	const fallback = "The assistant is resting; please try again in a minute."
	for _, want := range []string{
		"chat: served by fallback message (request req_",
		"): " + fallback + "\n",
		"stream: served by fallback message: " + fallback + "\n",
		"strict: no answer; a route comes back in about",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the example's output lacks %q:\n%s", want, out)
		}
	}
}
