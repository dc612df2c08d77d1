package config

import (
	"errors"
	"strings"
	"testing"
)

// TestNewcomerProblems: the YAML slips and near-miss route names a
// newcomer makes get one problem each, on the right line, saying what to
// change (issue 16).
func TestNewcomerProblems(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{{
		name: "a tab in the indentation",
		yaml: "providers:\n  groq: {}\nchains:\n\tanswer: {routes: [groq/llama-3.3-70b-versatile]}\n",
		want: []string{"t.yaml:4: cannot parse YAML: line 4 is indented with a tab; YAML indents with spaces only: replace the tab with spaces (2 a level, as the lines above)"},
	}, {
		name: "field under-indented by one",
		yaml: `providers:
  groq: {}
chains:
  answer:
    routes:
      - groq/llama-3.3-70b-versatile
   deadline: 30s
`,
		want: []string{"t.yaml:7: cannot parse YAML: `deadline:` is indented 3 spaces, which lines up with no key above it; indent it 1 more space (4 in all) to line up with `routes:` on line 5"},
	}, {
		name: "chain fields level with the chain's name",
		yaml: `providers:
  groq: {}
chains:
  answer:
  routes:
    - groq/llama-3.3-70b-versatile
  deadline: 30s
  attempt_timeout: 10s
  fallback: {message: hi}
`,
		want: []string{"t.yaml:5: chains.answer: `routes:` and the 3 fields after it are level with `answer:`, so they are read as chains of their own; indent `routes:` under `answer:` (2 more spaces), and the 3 fields after it too"},
	}, {
		name: "provider field level with the provider's name",
		yaml: `providers:
  lab:
  base_url: http://127.0.0.1:9/v1
chains:
  answer:
    routes: [lab/m]
`,
		want: []string{"t.yaml:3: providers.lab: `base_url:` is level with `lab:`, so it is read as a provider of its own; indent `base_url:` under `lab:` (2 more spaces)"},
	}, {
		name: "route missing its suffix",
		yaml: `providers:
  groq: {}
chains:
  answer:
    routes: [groq/llama-3.3-70b]
`,
		want: []string{`t.yaml:5: chains.answer.routes[0]: unknown route "groq/llama-3.3-70b" (did you mean "groq/llama-3.3-70b-versatile"?); groq's models are: llama-3.1-8b-instant, llama-3.3-70b-versatile, openai/gpt-oss-120b, openai/gpt-oss-20b, qwen/qwen3-32b, meta-llama/llama-4-scout-17b-16e-instruct, moonshotai/kimi-k2-instruct-0905, groq/compound, groq/compound-mini, allam-2-7b, qwen/qwen3.6-27b (add others under providers.groq.models)`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.yaml), nil)
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("Parse: %v, want an *Error", err)
			}
			var got []string
			for _, p := range cerr.Problems {
				got = append(got, p.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestServesNeedsChains: an empty file, or one with providers and no
// chains, parses (a library may add chains of its own) but is refused
// for serving, with the fix in the message.
func TestServesNeedsChains(t *testing.T) {
	for _, src := range []string{"", "# nothing yet\n", "providers:\n  groq: {}\n"} {
		p, err := Parse("t.yaml", []byte(src), nil)
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		err = p.Serves("t.yaml")
		if !errors.Is(err, ErrNoChains) || !strings.Contains(err.Error(), "routes: [groq/llama-3.3-70b-versatile]") {
			t.Errorf("Serves(%q) = %v, want ErrNoChains with an example chain", src, err)
		}
	}
}

// TestReadiness: each chain's line counts its enabled routes and names
// the variable that enables the others, with the routes it enables.
func TestReadiness(t *testing.T) {
	env := map[string]string{"GROQ_API_KEY": "gsk_test_key_1234567890"}
	p, err := Parse("t.yaml", []byte(`providers:
  groq: {}
  gemini: {}
  cerebras: {}
chains:
  answer:
    routes: [groq/llama-3.3-70b-versatile, gemini/gemini-2.5-flash, gemini/gemma-3-27b-it, cerebras/llama3.1-8b]
  quick:
    routes: [cerebras/llama3.1-8b]
`), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range p.Readiness() {
		got = append(got, r.String())
	}
	want := []string{
		"chain answer: 1 of 4 routes enabled; set GEMINI_API_KEY (gemini: 2 routes), CEREBRAS_API_KEY (cerebras/llama3.1-8b)",
		"chain quick: 0 of 1 route enabled, so every request gets its fallback; set CEREBRAS_API_KEY (cerebras/llama3.1-8b)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("readiness:\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
