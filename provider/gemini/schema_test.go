package gemini

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONSchema: a caller's JSON Schema is converted to the part of it
// Gemini's responseJsonSchema takes (ai.google.dev/api/generate-content,
// GenerationConfig), and what Gemini cannot enforce is named (issue 15).
func TestJSONSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
		gaps           []string
	}{
		{"taken as it is",
			`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":5,"description":"stars"}},"required":["n"],"additionalProperties":false,"propertyOrdering":["n"]}`,
			`{"additionalProperties":false,"properties":{"n":{"description":"stars","maximum":5,"minimum":1,"type":"integer"}},"propertyOrdering":["n"],"required":["n"],"type":"object"}`, nil},
		{"const becomes an enum",
			`{"type":"object","properties":{"kind":{"const":"airport"}}}`,
			`{"properties":{"kind":{"enum":["airport"]}},"type":"object"}`, nil},
		{"definitions become $defs",
			`{"definitions":{"a":{"type":"string"}},"type":"array","items":{"$ref":"#/definitions/a"}}`,
			`{"$defs":{"a":{"type":"string"}},"items":{"$ref":"#/$defs/a"},"type":"array"}`, nil},
		{"a draft-07 tuple becomes prefixItems",
			`{"type":"array","items":[{"type":"string"},{"type":"number"}]}`,
			`{"prefixItems":[{"type":"string"},{"type":"number"}],"type":"array"}`, nil},
		{"annotations dropped quietly",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"string","default":"x","examples":["y"],"x-custom":1}`,
			`{"type":"string"}`, nil},
		{"assertions Gemini cannot enforce are gaps",
			`{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}$","minLength":3},"tags":{"type":"array","uniqueItems":true}},"allOf":[{"required":["code"]}]}`,
			`{"properties":{"code":{"type":"string"},"tags":{"type":"array"}},"type":"object"}`,
			[]string{"allOf at /", "minLength at /properties/code", "pattern at /properties/code", "uniqueItems at /properties/tags"}},
		{"only $-keywords beside a $ref",
			`{"$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a","description":"d","minLength":2}}}`,
			`{"$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
			[]string{"minLength beside $ref at /properties/x"}},
		{"an enum of booleans",
			`{"enum":[true,false]}`, `{}`, []string{"enum of other than strings and numbers at /"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, gaps := jsonSchema(json.RawMessage(tt.in))
			if string(got) != tt.want {
				t.Errorf("schema:\n got %s\nwant %s", got, tt.want)
			}
			if strings.Join(gaps, "; ") != strings.Join(tt.gaps, "; ") {
				t.Errorf("gaps %q, want %q", gaps, tt.gaps)
			}
		})
	}
}

// TestJSONSchemaNotJSON: a schema that does not parse is sent as it is,
// for Gemini to judge (the gateway refuses such a request before: package
// typed).
func TestJSONSchemaNotJSON(t *testing.T) {
	if got, gaps := jsonSchema(json.RawMessage(`{"type":`)); string(got) != `{"type":` || gaps != nil {
		t.Errorf("got %s %v", got, gaps)
	}
}
