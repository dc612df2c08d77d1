package demo

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/assistant"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/search"
)

// TestFallbackSearchesTheSite (issue 16): the demo's fallback is what it
// says, a keyword search over the sample site's pages, written to disk
// from the binary, not a fixed message promising one.
func TestFallbackSearchesTheSite(t *testing.T) {
	data := t.TempDir()
	dir, err := copyPortfolio(data)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := config.Parse("demo", []byte(gatewayYAML("http://127.0.0.1:1", "127.0.0.1:0", data)), demoEnv("demo-admin-0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	fb := plan.Chains[Chain].Fallback
	if fb.Kind != config.FallbackSearch || filepath.Clean(fb.Content) != filepath.Clean(dir) {
		t.Fatalf("fallback %+v, want a search over %s", fb, dir)
	}
	ix, err := search.Open(dir, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := assistant.New(&config.Assistant{Resting: config.DefaultResting()})
	if text, _, ok := a.Search(ix, "Where does the author live?", "en"); !ok || !strings.Contains(text, "Lisbon") {
		t.Errorf("the search fallback answers %q, %v; want the page that says Lisbon", text, ok)
	}
}
