package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics and that every failure is a
// list of problems.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/plans/*.yaml")
	seeds = append(seeds, "../examples/tollfree.yaml")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(defaultYAML))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("a: &a {x: 1}\nb: {<<: [*a, *a]}\n"))
	f.Add([]byte("providers: {groq: {api_key: ${X:-}}}\nchains: {a: {routes: [{route: groq/x, rank: -1}]}}"))
	f.Add([]byte("chains: {a: {routes: [groq/x], margin: .nan, fallback: {error: true}}}"))
	env := func(k string) string {
		if k == "PLANNER_MODEL" {
			return "openai-compatible:groq:openai/gpt-oss-120b | x"
		}
		return ""
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.yaml", data, env)
		if err == nil && p == nil {
			t.Fatal("nil plan without an error")
		}
	})
}
