package demo

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/emulator"
)

// TestGroundedReply: the emulated model quotes the section of its prompt
// that matches the question, with that section's link, whether the
// content comes in the system message or in the question's own message.
func TestGroundedReply(t *testing.T) {
	content := "Answer only from the content below.\n\n" +
		"## Pricing — Team (https://demo.test/site/pricing#team)\nThe Team plan costs 6 euros per member per month. It has no member limit.\n\n" +
		"## Export — How to export (https://demo.test/site/export#how-to-export)\nTo export your data, open Settings, then Data, and choose Export. Pick a notebook. Large exports take time.\n"
	for name, turns := range map[string][]emulator.Turn{
		"system":   {{Role: "system", Text: content}, {Role: "user", Text: "How do I export my data?"}},
		"together": {{Role: "system", Text: "Be helpful."}, {Role: "user", Text: content + "\n\nQuestion: How do I export my data?"}},
		"history": {{Role: "system", Text: content}, {Role: "user", Text: "How much is it?"}, {Role: "assistant", Text: "See https://demo.test/site/pricing#team"},
			{Role: "user", Text: "How do I export my data?"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := groundedReply(turns)
			want := "To export your data, open Settings, then Data, and choose Export. Pick a notebook. [Export — How to export](https://demo.test/site/export#how-to-export)"
			if got != want {
				t.Errorf("reply\n got %q\nwant %q", got, want)
			}
		})
	}
	if got := groundedReply([]emulator.Turn{{Role: "user", Text: "hello"}}); !strings.Contains(got, "contact") {
		t.Errorf("with no content, the reply %q does not point to the contact page", got)
	}
}

// TestSiteHandler: the sample page carries the widget's script tag, each
// content page is served at its link, and nothing outside the folder is.
func TestSiteHandler(t *testing.T) {
	dir, err := copyContent(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(siteHandler(dir))
	defer srv.Close()
	for _, c := range []struct {
		path, status, typ, has string
	}{
		{"/site/", "200", "text/html; charset=utf-8", `<script src="/widget.js" data-chain="site" defer></script>`},
		{"/site/style.css", "200", "text/css; charset=utf-8", "shadow root"},
		{"/site/export", "200", "text/html; charset=utf-8", `<h2 id="how-to-export">`},
		{"/site/contact", "200", "text/html; charset=utf-8", "support@driftwood.example"},
		{"/site/export.html", "404", "", ""},
		{"/site/..%2fsite.go", "404", "", ""},
		{"/site/nope", "404", "", ""},
	} {
		resp, err := srv.Client().Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Status[:3]; got != c.status {
			t.Errorf("GET %s: %s, want %s", c.path, got, c.status)
			continue
		}
		if c.typ != "" && resp.Header.Get("Content-Type") != c.typ {
			t.Errorf("GET %s: Content-Type %q, want %q", c.path, resp.Header.Get("Content-Type"), c.typ)
		}
		if !strings.Contains(string(b), c.has) {
			t.Errorf("GET %s: the page lacks %q", c.path, c.has)
		}
	}
	if resp, _ := srv.Client().Post(srv.URL+"/site/", "text/plain", nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /site/: %d, want 405", resp.StatusCode)
	}
}
