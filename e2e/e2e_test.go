package e2e_test

// Package e2e holds tollfree's end-to-end tests: the ones that need the
// whole stack, a Gateway with its state, cache, call log, status page and
// admin API, served over real HTTP in front of the provider emulator
// (harness_test.go), or the tollfree binary itself (restart_test.go,
// reload_test.go, compose_test.go), Redis (redis_test.go), a browser
// (browser_test.go), the official npm client (rescue_clients_test.go), a
// program outside the module (embed_test.go), the README and the examples
// as a reader runs them. What one package owns is tested next to it: the
// router's behaviour in package route, the HTTP mapping in httpapi, the
// status snapshot in status; the root keeps only the tests of its own API.
//
// They use the library as a program does (Gateway, Options, Chat,
// Handler) and read the checkout's files one folder up (repoPath):
// examples/content for the search fallback, examples/embed for the
// program outside the module, compose.yaml, the README.
//
// Each of them starts with checkLeaks(t): a goroutine the test started and
// left behind fails it (TestEveryEndToEndTestChecksLeaks keeps it so).

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// checkLeaks fails t if a goroutine started during the test is still
// running once the test and every cleanup it registered have ended
// (servers closed, gateways and stores closed). Call it first: its check
// is the last cleanup to run. goleak.Find retries for a while, so
// goroutines on their way out (a connection's reader seeing its server
// close) are not taken for leaks.
func checkLeaks(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		if err := goleak.Find(before); err != nil {
			t.Errorf("goroutines left behind by the test: %v", err)
		}
	})
}

// TestEveryEndToEndTestChecksLeaks: every test of this package begins
// with checkLeaks(t), so that none can leave a goroutine running unseen.
func TestEveryEndToEndTestChecksLeaks(t *testing.T) {
	checkLeaks(t)
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name != "e2e_test" {
			continue
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			n++
			if !startsWithCheckLeaks(fn) {
				t.Errorf("%s: %s does not begin with checkLeaks(t)", fset.Position(fn.Pos()), fn.Name.Name)
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d tests in %d files: the check looks in the wrong place", n, len(files))
	}
}

func startsWithCheckLeaks(fn *ast.FuncDecl) bool {
	if fn.Body == nil || len(fn.Body.List) == 0 {
		return false
	}
	es, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := call.Fun.(*ast.Ident)
	return ok && id.Name == "checkLeaks"
}
