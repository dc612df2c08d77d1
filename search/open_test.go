package search

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		target  string // relative to the temp dir; "" is the dir
		o       Options
		wantIs  error
		wantMsg []string
	}{
		{"missing path", nil, "nope", Options{}, os.ErrNotExist, []string{"nope"}},
		{"empty folder", map[string]string{"x.json": "{}"}, "", Options{}, ErrNoContent, []string{"no .md, .txt or .html files under"}},
		{"only empty pages", map[string]string{"a.md": "# Only a title\n", "b.txt": "  \n"}, "", Options{}, ErrNoContent, []string{"every page is empty"}},
		{"single file past the cap", map[string]string{"big.md": strings.Repeat("x", 101)}, "big.md", Options{MaxFileBytes: 100}, ErrTooLarge, []string{"big.md", "101 bytes", "MaxFileBytes"}},
		{"single file not utf-8", map[string]string{"latin1.txt": "caf\xe9"}, "latin1.txt", Options{}, nil, []string{"latin1.txt", "not valid UTF-8"}},
		{"every page broken", map[string]string{"latin1.txt": "caf\xe9", "x.json": "{}"}, "", Options{}, ErrNoContent, []string{"1 skipped", "latin1.txt", "not valid UTF-8"}},
		{"unsupported single file", map[string]string{"doc.pdf": "%PDF"}, "doc.pdf", Options{}, nil, []string{"doc.pdf", "not a page"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				writeFile(t, dir, name, content)
			}
			ix, err := Open(filepath.Join(dir, tt.target), tt.o)
			if err == nil {
				t.Fatalf("Open = %d pages, want an error", ix.Pages())
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Open error = %v, want errors.Is %v", err, tt.wantIs)
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("Open error = %q, want it to name %q", err, m)
				}
			}
		})
	}
}

// TestOpenSkipsBrokenFiles: a file that cannot be indexed is skipped and
// reported, naming the file and what to fix; the rest is indexed (issue 14).
func TestOpenSkipsBrokenFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.md", "# Alpha\n\nalpha words here")
	writeFile(t, dir, "b.md", strings.Repeat("b", 60))
	writeFile(t, dir, "latin1.txt", "caf\xe9")
	writeFile(t, dir, "sub/big.md", strings.Repeat("x", 101))
	writeFile(t, dir, "z.md", strings.Repeat("z", 60))
	ix, err := Open(dir, Options{MaxFileBytes: 100, MaxTotalBytes: 120})
	if err != nil {
		t.Fatalf("Open = %v, want the good pages indexed", err)
	}
	if got := ix.Pages(); got != 2 {
		t.Errorf("Pages() = %d, want 2 (a.md, b.md)", got)
	}
	want := []struct {
		path  string
		is    error
		words []string
	}{
		{"latin1.txt", nil, []string{"latin1.txt", "not valid UTF-8", "save it as UTF-8"}},
		{"sub/big.md", ErrTooLarge, []string{filepath.Join("sub", "big.md"), "101 bytes", "MaxFileBytes"}},
		{"z.md", ErrTooLarge, []string{"z.md", "MaxTotalBytes", "trim it or raise the cap"}},
	}
	got := ix.Skipped()
	if len(got) != len(want) {
		t.Fatalf("Skipped() = %v, want %d problems", got, len(want))
	}
	for i, w := range want {
		if got[i].Path != w.path {
			t.Errorf("Skipped()[%d].Path = %q, want %q", i, got[i].Path, w.path)
		}
		if w.is != nil && !errors.Is(got[i].Err, w.is) {
			t.Errorf("Skipped()[%d] = %v, want errors.Is %v", i, got[i].Err, w.is)
		}
		for _, m := range w.words {
			if !strings.Contains(got[i].String(), m) {
				t.Errorf("Skipped()[%d] = %q, want it to name %q", i, got[i], m)
			}
		}
	}
	if hits := ix.Search("alpha", 1); len(hits) != 1 {
		t.Errorf("Search(alpha) = %v, want a.md", hits)
	}
	good, err := Open(filepath.Join(dir, "a.md"), Options{})
	if err != nil || good.Skipped() != nil {
		t.Errorf("a clean page: Skipped() = %v, err %v; want none", good.Skipped(), err)
	}
}

func TestOpenSingleFile(t *testing.T) {
	ix, err := Open(filepath.Join(site, "account.md"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ix.Pages(), 1; got != want {
		t.Errorf("Pages() = %d, want %d", got, want)
	}
	hits := ix.Search("password", 1)
	if len(hits) != 1 || hits[0].Path != "account.md" {
		t.Errorf("Search on a single file = %+v, want account.md", hits)
	}
	// A BOM is not text.
	dir := t.TempDir()
	writeFile(t, dir, "bom.md", "\ufeff# Bommed\n\nbody")
	ix, err = Open(filepath.Join(dir, "bom.md"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hits := ix.Search("body", 1); len(hits) != 1 || hits[0].Title != "Bommed" {
		t.Errorf("BOM page = %+v, want title Bommed", hits)
	}
}

// TestVersion: the version follows the content, so an edit, a new page or a
// rename retires cached answers, and nothing else does.
func TestVersion(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.md", "# A\n\nalpha")
	writeFile(t, dir, "b.md", "# B\n\nbeta")
	version := func() string {
		t.Helper()
		ix, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return ix.Version()
	}
	v1 := version()
	if v2 := version(); v2 != v1 {
		t.Errorf("same content, versions %s and %s", v1, v2)
	}
	if len(v1) != 24 {
		t.Errorf("Version() = %q, want 24 hex digits", v1)
	}
	seen := map[string]string{v1: "start"}
	steps := []struct {
		name string
		do   func()
	}{
		{"edit", func() { writeFile(t, dir, "a.md", "# A\n\nalpha!") }},
		{"add", func() { writeFile(t, dir, "c.txt", "gamma") }},
		{"rename", func() {
			if err := os.Rename(filepath.Join(dir, "c.txt"), filepath.Join(dir, "d.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{"move bytes between files", func() {
			writeFile(t, dir, "a.md", "# A\n\nalpha")
			writeFile(t, dir, "b.md", "!# B\n\nbeta")
		}},
	}
	for _, s := range steps {
		s.do()
		v := version()
		if prev, ok := seen[v]; ok {
			t.Errorf("after %s, version %s equals the one after %s", s.name, v, prev)
		}
		seen[v] = s.name
	}
	// A skipped file is not content.
	before := version()
	writeFile(t, dir, "notes.json", "{}")
	writeFile(t, dir, ".hidden/x.md", "x")
	if after := version(); after != before {
		t.Errorf("skipped files changed the version: %s to %s", before, after)
	}
}

// TestPathological opens pages built to make a naive scanner quadratic
// (unclosed brackets and tags, periods without spaces); each is 300 KB, so
// a quadratic pass would take minutes where a linear one takes milliseconds.
func TestPathological(t *testing.T) {
	dir := t.TempDir()
	const n = 300 << 10
	writeFile(t, dir, "brackets.md", strings.Repeat("[", n))
	writeFile(t, dir, "angles.md", "word "+strings.Repeat("<a", n/2))
	writeFile(t, dir, "periods.md", "word "+strings.Repeat("a.", n/2))
	writeFile(t, dir, "tags.html", "<p>word</p>"+strings.Repeat(`<a title="`, n/10))
	writeFile(t, dir, "ys.txt", strings.Repeat("y", n))
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hits := ix.Search("word", 10); len(hits) == 0 {
		t.Errorf("Search(word) = none, want the pages around the noise")
	}
}
