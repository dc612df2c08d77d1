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
		{"file past the cap", map[string]string{"small.md": "hi", "sub/big.md": strings.Repeat("x", 101)}, "", Options{MaxFileBytes: 100}, ErrTooLarge, []string{filepath.Join("sub", "big.md"), "101 bytes", "MaxFileBytes"}},
		{"total past the cap", map[string]string{"a.md": strings.Repeat("a", 60), "b.md": strings.Repeat("b", 60)}, "", Options{MaxTotalBytes: 100}, ErrTooLarge, []string{"b.md", "MaxTotalBytes"}},
		{"not utf-8", map[string]string{"latin1.txt": "caf\xe9"}, "", Options{}, nil, []string{"latin1.txt", "not valid UTF-8"}},
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
