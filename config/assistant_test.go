package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const assistantSrc = "providers:\n  groq: {}\nchains:\n  site:\n    routes: [groq/llama-3.1-8b-instant]\n    assistant:\n"

// TestAssistantDefaults checks what an assistant: block compiles to when it
// says little: a week's cache, two exchanges, the base URL's origin, the
// contact joined to it, the four default resting sentences.
func TestAssistantDefaults(t *testing.T) {
	src := assistantSrc + "      content: ./content\n      base_url: https://example.com/docs/\n      contact: /contact\n      resting: {fr: Pause.}\n      rules:\n        - {match: [hi], answer: Hello}\n        - {pattern: \"(?i)where.*contact\", answer: There}\n"
	p, err := Parse("t.yaml", []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	ch := p.Chains["site"]
	a := ch.Assistant
	if a == nil {
		t.Fatal("no assistant compiled")
	}
	if ch.CacheTTL != 168*time.Hour {
		t.Errorf("cache ttl = %s, want 168h", ch.CacheTTL)
	}
	if a.History != 2 {
		t.Errorf("history = %d, want 2", a.History)
	}
	if len(a.Origins) != 1 || a.Origins[0] != "https://example.com" {
		t.Errorf("origins = %q, want [https://example.com]", a.Origins)
	}
	if a.Contact != "https://example.com/contact" {
		t.Errorf("contact = %q", a.Contact)
	}
	if a.Resting["fr"] != "Pause." || a.Resting["de"] == "" || a.Resting["es"] == "" || a.Resting["en"] == "" {
		t.Errorf("resting = %q", a.Resting)
	}
	if len(a.Rules) != 2 || a.Rules[1].Pattern == nil || !a.Rules[1].Pattern.MatchString("Where is the contact?") {
		t.Errorf("rules = %+v", a.Rules)
	}
	if p.Chains["site"].Assistant.Prompt != "" {
		t.Errorf("prompt set by default")
	}
}

// TestAssistantProblems checks that a bad assistant: block is refused with
// the line of the field at fault.
func TestAssistantProblems(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"no content", "      base_url: https://example.com/\n",
			[]string{"t.yaml:6: chains.site.assistant.content: an assistant needs its content: a folder of .md, .html or .txt pages (write, say, content: ./content)"}},
		{"bad regexp", "      content: ./c\n      rules:\n        - {pattern: \"(unclosed\", answer: x}\n",
			[]string{"t.yaml:9: chains.site.assistant.rules[0].pattern: \"(unclosed\" is not a valid regexp: error parsing regexp: missing closing ): `(unclosed`"}},
		{"rule without answer", "      content: ./c\n      rules:\n        - {match: [hi]}\n",
			[]string{"t.yaml:9: chains.site.assistant.rules[0].answer: a rule needs the answer it gives"}},
		{"star origin", "      content: ./c\n      origins: [\"*\"]\n",
			[]string{"t.yaml:8: chains.site.assistant.origins[0]: \"*\" is not an origin (write, say, https://example.com; * is not allowed)"}},
		{"negative history", "      content: ./c\n      history: -1\n",
			[]string{"t.yaml:8: chains.site.assistant.history: -1 is negative; 0 sends no history"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(assistantSrc+tc.body), func(string) string { return "" })
			var cfgErr *Error
			if !errors.As(err, &cfgErr) {
				t.Fatalf("Parse error = %v, want a *config.Error", err)
			}
			var got []string
			for _, p := range cfgErr.Problems {
				got = append(got, p.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
