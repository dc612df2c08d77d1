package search

import (
	"testing"
)

// TestExampleContent checks the demo's sample questions (tools/demo/questions.go)
// against examples/content, the site the example config's search fallback
// reads: each finds the page that answers it.
func TestExampleContent(t *testing.T) {
	ix, err := Open("../examples/content", Options{})
	if err != nil {
		t.Fatalf("Open(examples/content) = %v", err)
	}
	tests := []struct{ query, want string }{
		{"What projects has the author worked on recently?", "projects.md#"},
		{"How can I get in touch about a consulting job?", "contact.md#consulting"},
		{"Which languages and tools does the author use most?", "stack.md#"},
		{"Has the author given any talks I can watch?", "writing.md#talks"},
		{"Where can I read the author's articles?", "writing.md#articles"},
		{"Is the author open to full-time roles right now?", "index.md#availability"},
		{"How does this assistant stay free to run?", "assistant.md#how-it-stays-free"},
		{"Which time zone does the author work in?", "index.md#where-i-work-from"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			hits := ix.Search(tt.query, 3)
			if len(hits) == 0 {
				t.Fatalf("no hits, want %s", tt.want)
			}
			if got := hits[0].Path + "#" + hits[0].Anchor; got != tt.want {
				t.Errorf("best = %s, want %s; all: %s", got, tt.want, describe(hits))
			}
		})
	}
}
