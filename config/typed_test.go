package config

import (
	"strings"
	"testing"
)

// keyEnv sets every provider's key variable, nothing else.
func keyEnv(name string) string {
	if strings.HasSuffix(name, "_API_KEY") {
		return "a-key-long-enough-1234"
	}
	return ""
}

// TestSchemaSupport: what each route can do for a typed answer comes from
// the presets (the providers' docs), overridable per model; chains require
// enforcement and bound repairs as configured, with defaults (issue 15).
func TestSchemaSupport(t *testing.T) {
	p, err := Parse("t.yaml", []byte(`
providers:
  groq:
    models:
      llama-3.1-8b-instant: {schema: none}
  gemini: {}
  cerebras: {}
  local: {base_url: "http://localhost:8000/v1"}
chains:
  a:
    routes: [groq/openai/gpt-oss-120b, groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant, gemini/gemini-2.5-flash, gemini/gemma-3-27b-it, cerebras/llama3.1-8b, local/any-model]
  b:
    routes: [groq/openai/gpt-oss-120b]
    require_schema: true
    schema_repairs: 3
`), keyEnv)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]SchemaSupport{
		"groq/openai/gpt-oss-120b":     SchemaEnforce,
		"groq/llama-3.3-70b-versatile": SchemaJSON,
		"groq/llama-3.1-8b-instant":    SchemaNone, // overridden
		"gemini/gemini-2.5-flash":      SchemaEnforce,
		"gemini/gemma-3-27b-it":        SchemaNone,
		"cerebras/llama3.1-8b":         SchemaEnforce,
		"local/any-model":              SchemaNone, // no preset: asked in words
	} {
		if got := p.Routes[id].Schema; got != want {
			t.Errorf("%s: schema %v, want %v", id, got, want)
		}
	}
	if a, b := p.Chains["a"], p.Chains["b"]; a.RequireSchema || a.SchemaRepairs != 1 || !b.RequireSchema || b.SchemaRepairs != 3 {
		t.Errorf("chains: a %v/%d, b %v/%d; want false/1 and true/3", a.RequireSchema, a.SchemaRepairs, b.RequireSchema, b.SchemaRepairs)
	}
	_, err = Parse("t.yaml", []byte(`
providers:
  groq:
    models:
      llama-3.1-8b-instant: {schema: strict}
chains:
  a: {routes: [groq/llama-3.1-8b-instant], schema_repairs: 9}
`), keyEnv)
	for _, want := range []string{
		`providers.groq.models["llama-3.1-8b-instant"].schema: "strict" is not a schema support (write enforce, json or none)`,
		`chains.a.schema_repairs: 9 is outside 0..5`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
}
