package assistant

import (
	"strings"
	"testing"

	"github.com/tollfree/tollfree/config"
)

// TestLanguage: the visitor's language is the Accept-Language entry of
// highest weight that has a resting sentence, else the question's words
// tell it, else English. A stranger's header cannot break it: entries that
// do not parse are left out, and only the first 16 are read.
func TestLanguage(t *testing.T) {
	a := New(&config.Assistant{Resting: config.DefaultResting()})
	many := strings.Repeat("xx,", 16) + "fr"
	for _, tc := range []struct{ header, question, want string }{
		{"fr-FR,fr;q=0.9,en;q=0.5", "How do I export?", "fr"},
		{"de;q=0.2, es;q=0.8", "", "es"},
		{"ja, de-CH;q=0.7", "", "de"},
		{"en-GB", "comment exporter mes données ?", "en"},
		{"", "comment exporter mes données ?", "fr"},
		{"", "wie kann ich das exportieren", "de"},
		{"", "", "en"},
		{"fr;q=0", "how do I export", "en"},
		{"@@@, es;q=0.5", "", "es"},
		{many, "how do I export", "en"},
		{strings.Repeat("a", 100000), "", "en"},
	} {
		if got := a.Language(tc.header, tc.question); got != tc.want {
			t.Errorf("Language(%.40q, %q) = %q, want %q", tc.header, tc.question, got, tc.want)
		}
	}
}
