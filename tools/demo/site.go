package demo

import (
	"bytes"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	portfolio "github.com/tollfree/tollfree/examples/content"
	"github.com/tollfree/tollfree/examples/site"
)

// SitePath is where the demo serves its sample site: the page with the
// widget at SitePath, each content page at SitePath+<name> (the links the
// assistant gives, base_url being SitePath).
const SitePath = "/site/"

// siteHandler serves the sample page and its style sheet from the embedded
// demo site, and each content page <name>.html of dir at SitePath+<name>.
func siteHandler(dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, SitePath)
		var b []byte
		var err error
		switch {
		case name == "" || name == "index.html":
			b, err = site.Files.ReadFile("index.html")
		case name == "style.css":
			b, err = site.Files.ReadFile("style.css")
		case validPageName(name):
			b, err = os.ReadFile(filepath.Join(dir, name+".html"))
		default:
			err = fs.ErrNotExist
		}
		if err != nil {
			http.Error(w, "no such page on the demo site", http.StatusNotFound)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, path(name), time.Time{}, bytes.NewReader(b))
	})
}

// path gives ServeContent a name whose extension sets the content type.
func path(name string) string {
	if name == "style.css" {
		return name
	}
	return "page.html"
}

// validPageName accepts a plain file name: letters, digits, '-' and '_'.
func validPageName(name string) bool {
	if name == "" || len(name) > 100 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// copyContent writes the embedded demo content into a new folder under
// parent and returns its path: the assistant reads (and watches) a folder
// on disk.
func copyContent(parent string) (string, error) {
	sub, err := fs.Sub(site.Files, "content")
	if err != nil {
		return "", err
	}
	return writeFolder(parent, sub)
}

// copyPortfolio writes the sample portfolio's pages (examples/content),
// which the demo's search fallback answers from, into a new folder under
// parent.
func copyPortfolio(parent string) (string, error) {
	return writeFolder(parent, portfolio.Pages)
}

// writeFolder copies fsys into parent/content.
func writeFolder(parent string, fsys fs.FS) (string, error) {
	dir := filepath.Join(parent, "content")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, os.CopyFS(dir, fsys)
}
