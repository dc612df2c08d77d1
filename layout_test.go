package tollfree_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The module's shape, as docs/ARCHITECTURE.md draws it: each folder sits on
// one floor, and an import never runs back up.

const module = "github.com/tollfree/tollfree"

// The floors, lowest first.
const (
	floorFoundation = iota // internal/: clock, sse, reqid, watch, heapfloor, testenv
	floorPart              // the gateway's parts: config, route, quota, status, httpapi...
	floorGateway           // the root package, the Gateway
	floorTool              // built on the whole gateway: tools/, cmd/, bench/, examples/
	floorTest              // e2e/: the end-to-end tests
)

var floorNames = [...]string{"foundation", "part", "gateway", "tool", "end-to-end test"}

// floorOf is the floor of a package of the module, from its folder.
func floorOf(pkg string) int {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	top, _, _ := strings.Cut(rel, "/")
	switch {
	case rel == "":
		return floorGateway
	case top == "internal":
		return floorFoundation
	case top == "tools" || top == "cmd" || top == "bench" || top == "examples":
		return floorTool
	case top == "e2e":
		return floorTest
	}
	return floorPart
}

// listed is what go list says of one package.
type listed struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// listModule lists every package of the module, tests' imports included.
func listModule(t *testing.T) []listed {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestFloors: no package, nor its tests, imports a package of a floor
// above its own (issue 30, item 3): the foundations stand on nothing of
// the module, the parts on the foundations and each other, the Gateway on
// the parts, and only the tools and the end-to-end tests on the Gateway.
func TestFloors(t *testing.T) {
	pkgs := listModule(t)
	if len(pkgs) < 30 {
		t.Fatalf("go list found %d packages: the test looks in the wrong place", len(pkgs))
	}
	for _, p := range pkgs {
		own := floorOf(p.ImportPath)
		for _, imps := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range imps {
				if !strings.HasPrefix(imp, module) || imp == p.ImportPath {
					continue
				}
				if f := floorOf(imp); f > own && !(own == floorGateway && f == floorGateway) {
					t.Errorf("%s (%s) imports %s (%s): an arrow back up", p.ImportPath, floorNames[own], imp, floorNames[f])
				}
			}
		}
	}
}

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
// enter only through state/redisstore, cache/rediscache and status/metrics,
// which cmd/tollfree wires.
func TestLibraryDependencies(t *testing.T) {
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
// (status/page); this keeps it out of the command.
func TestBinaryHasNoTextTemplate(t *testing.T) {
	for _, dep := range deps(t, "./cmd/tollfree") {
		if dep == "text/template" {
			t.Error("cmd/tollfree imports text/template (through html/template?): write the page by hand, see status/page's doc")
		}
	}
}

// TestRootTests: the root keeps the tests of its own API; end-to-end
// tests live in e2e/ (issue 30, item 2).
func TestRootTests(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) > 4 || len(files) == 0 {
		t.Errorf("the root has %d test files %v: at most four (its own API); end-to-end tests go in e2e/", len(files), files)
	}
}

// tracked lists the files git tracks, from the checkout's root.
func tracked(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): the reference check reads git's list of files", err)
	}
	return strings.Fields(string(out))
}

var (
	// mdLink is a Markdown link's target: [text](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// docName is a mention of one of the project's documents: a Markdown
	// file named in capitals (DESIGN.md, README.md), or one under docs/.
	// Lower-case names elsewhere are a test's own files (a.md, guide.md).
	docName = regexp.MustCompile(`(?:[A-Za-z0-9_.-]+/)*[A-Z][A-Z0-9_]*\.md\b|\bdocs/[A-Za-z0-9_/-]+\.md\b`)
	// outside is a reference to the folder beside the checkout (written
	// so that this line is not one).
	outside = regexp.MustCompile(`\.\./` + `shared\b`)
)

// TestReferencesResolve: the repository stands on its own (issue 30, item
// 1). Every Markdown link to a file of the checkout points at a file that
// exists, every Markdown file named in a text file or comment exists in
// the tree, and nothing cites a folder beside the checkout.
func TestReferencesResolve(t *testing.T) {
	files := tracked(t)
	exists := map[string]bool{}
	base := map[string]bool{} // names of tracked .md files, for a bare mention
	for _, f := range files {
		exists[f] = true
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			exists[d] = true
		}
		if strings.HasSuffix(f, ".md") {
			base[path.Base(f)] = true
		}
	}
	text := regexp.MustCompile(`\.(go|md|yaml|yml|sh|lua|txt|json|html|js|mod)$|^Dockerfile$|/Dockerfile$|^\.ci/run$`)
	checked := 0
	for _, f := range files {
		if !text.MatchString(f) || strings.HasPrefix(f, "bench/results/") || strings.Contains(f, "/node_modules/") || strings.HasSuffix(f, "package-lock.json") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		s := string(b)
		for _, m := range outside.FindAllStringIndex(s, -1) {
			t.Errorf("%s:%d cites the folder beside the checkout, which is not in the repository: write what it says into docs/", f, line(s, m[0]))
		}
		if strings.HasSuffix(f, ".md") {
			for _, m := range mdLink.FindAllStringSubmatchIndex(s, -1) {
				target := s[m[2]:m[3]]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				p := path.Clean(path.Join(path.Dir(f), target))
				if !exists[p] {
					t.Errorf("%s:%d links to %s, which is not in the tree", f, line(s, m[0]), target)
				}
			}
		}
		for _, m := range docName.FindAllStringIndex(s, -1) {
			name := s[m[0]:m[1]]
			if m[0] > 0 && strings.ContainsRune(":/-_.$", rune(s[m[0]-1])) || m[0] > 0 && isAlnum(s[m[0]-1]) {
				continue // part of a URL, a longer name or an absolute path: not a file of the tree
			}
			if strings.HasSuffix(f, "_test.go") && strings.Contains(name, "/") && !strings.HasPrefix(name, "docs/") {
				continue // a test's own file (guides/README.md in a fixture)
			}
			if external(s, m[0]) {
				continue // a file of another repository, named beside it
			}
			rel := path.Clean(path.Join(path.Dir(f), name))
			if exists[name] || exists[rel] || (!strings.Contains(name, "/") && base[name]) {
				continue
			}
			t.Errorf("%s:%d names %s, which is not in the tree", f, line(s, m[0]), name)
		}
	}
	if checked < 100 {
		t.Errorf("checked %d files: the check looks in the wrong place", checked)
	}
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// external reports whether the mention at i is of another repository's
// file: its line names a github.com repository before it.
func external(s string, i int) bool {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	return strings.Contains(s[start:i], "github.com/")
}

// line is the 1-based line of offset i in s.
func line(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }
