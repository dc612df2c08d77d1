package config

import (
	"slices"
	"strings"
	"testing"
)

// TestPatternExpands (issue 35): a chain's "openrouter/*:free" is no
// route until a list is read; Expand puts in its place the free models
// the list offers, largest context first, leaving out the paid ones and
// the route the chain names itself; a changed list expands again, and an
// unchanged one gives the same plan back.
func TestPatternExpands(t *testing.T) {
	yaml := `
providers:
  openrouter: {preset: openrouter, api_key: ${OR_KEY}}
chains:
  free: {routes: ["openrouter/openai/gpt-oss-120b:free", "openrouter/*:free"]}
`
	p, err := Parse("t.yaml", []byte(yaml), orEnv)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(p *Plan) []string {
		var out []string
		for _, r := range p.Chains["free"].Routes {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(p); !slices.Equal(got, []string{"openrouter/openai/gpt-oss-120b:free"}) {
		t.Errorf("before a list: routes %v, want the named one alone", got)
	}
	list := []Listed{
		{ID: "openai/gpt-oss-120b:free", Priced: true, Free: true, Context: 131072},
		{ID: "a/small:free", Priced: true, Free: true, Context: 32768},
		{ID: "b/large:free", Priced: true, Free: true, Context: 262144},
		{ID: "c/paid:free", Priced: true, Context: 1 << 20},
		{ID: "d/plain", Priced: true, Free: true, Context: 1 << 20},
	}
	e, changed := p.Expand(map[string][]Listed{"openrouter": list})
	want := []string{"openrouter/openai/gpt-oss-120b:free", "openrouter/b/large:free", "openrouter/a/small:free"}
	if got := ids(e); !changed || !slices.Equal(got, want) {
		t.Errorf("expanded (changed %v): %v, want %v", changed, got, want)
	}
	if e.Model("openrouter/b/large:free") == nil {
		t.Error("an expanded route cannot be named as a model")
	}
	if again, changed := e.Expand(map[string][]Listed{"openrouter": list}); changed || again != e {
		t.Error("the same list expanded again made a new plan")
	}
	list[1].Free = false // a/small turned paid
	e2, changed := e.Expand(map[string][]Listed{"openrouter": list})
	if got := ids(e2); !changed || slices.Contains(got, "openrouter/a/small:free") {
		t.Errorf("after a model turned paid (changed %v): %v", changed, got)
	}
	if got := ids(p); len(got) != 1 {
		t.Errorf("Expand changed the plan it was called on: %v", got)
	}
}

// TestPatternChecked: a pattern must name a configured provider, and a
// same_model chain takes none.
func TestPatternChecked(t *testing.T) {
	for _, tc := range []struct{ chain, want string }{
		{`{routes: ["openrooter/*:free"]}`, `unknown provider "openrooter" in pattern "openrooter/*:free"`},
		{`{same_model: true, routes: ["openrouter/*:free"]}`, `same_model chain: pattern "openrouter/*:free" may match many models`},
	} {
		yaml := "providers:\n  openrouter: {preset: openrouter, api_key: ${OR_KEY}}\nchains:\n  c: " + tc.chain + "\n"
		_, err := Parse("t.yaml", []byte(yaml), orEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.chain, err, tc.want)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		glob, s string
		want    bool
	}{
		{"*:free", "qwen/qwen3-coder:free", true},
		{"*:free", "qwen/qwen3-coder", false},
		{"qwen/*", "qwen/qwen3-coder:free", true},
		{"*", "x", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
		{"*:free", ":free", true},
		{"a*a", "a", false},
	} {
		if got := globMatch(tc.glob, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v", tc.glob, tc.s, got)
		}
	}
}

func orEnv(k string) string {
	if k == "OR_KEY" {
		return "or-key-1234"
	}
	return ""
}

// TestPatternReadiness: check's line for a chain of a pattern alone says
// where its routes will come from.
func TestPatternReadiness(t *testing.T) {
	yaml := "providers:\n  openrouter: {preset: openrouter, api_key: ${OR_KEY}}\nchains:\n  free: {routes: [\"openrouter/*:free\"]}\n"
	p, err := Parse("t.yaml", []byte(yaml), orEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := "chain free: 0 of 0 routes enabled, so every request gets its fallback; openrouter/*:free: expanded at serve time from openrouter's model list"
	if got := p.Readiness()[0].String(); got != want {
		t.Errorf("readiness %q, want %q", got, want)
	}
}
