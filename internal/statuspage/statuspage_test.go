package statuspage

import "testing"

// TestTemplateParses parses page.html, which the first render would
// otherwise be the first to do (pageTemplate), and checks the templates
// render looks up are there.
func TestTemplateParses(t *testing.T) {
	tmpl := pageTemplate()
	for _, name := range []string{"page", "live"} {
		if tmpl.Lookup(name) == nil {
			t.Errorf("page.html defines no template %q", name)
		}
	}
	if again := pageTemplate(); again != tmpl {
		t.Errorf("pageTemplate() = %p, then %p; want one parsed template", tmpl, again)
	}
}
