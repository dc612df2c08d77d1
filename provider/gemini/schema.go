package gemini

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Gemini takes a caller's JSON Schema as generationConfig.responseJsonSchema
// (with responseMimeType application/json), but only part of it. Its API
// reference (ai.google.dev/api/generate-content, GenerationConfig,
// _responseJsonSchema) lists what it supports: $id, $defs, $ref, $anchor,
// type, format, title, description, enum (for strings and numbers),
// items, prefixItems, minItems, maxItems, minimum, maximum, anyOf, oneOf
// (read as anyOf), properties, additionalProperties, required, and the
// non-standard propertyOrdering; a sub-schema with $ref may hold nothing
// else but $-keywords. The older responseSchema (an OpenAPI 3.0 subset:
// uppercase types, nullable, no $ref) takes less, so responseJsonSchema is
// what is sent.
//
// jsonSchema converts a schema to that subset: const becomes a one-value
// enum, draft-07's definitions become $defs (their $refs follow),
// annotations Gemini has no use for are dropped, and every assertion it
// cannot enforce is dropped too and reported as a gap. The gateway
// validates every answer against the caller's whole schema anyway
// (package typed): a gap is only a check Gemini leaves to it, except on a
// chain that requires schemas to be enforced, where a route with a gap is
// skipped (route.schemaGapper).

// geminiKeeps are the keywords responseJsonSchema takes, and that are kept.
var geminiKeeps = map[string]bool{
	"$id": true, "$defs": true, "$ref": true, "$anchor": true, "type": true, "format": true,
	"title": true, "description": true, "enum": true, "items": true, "prefixItems": true,
	"minItems": true, "maxItems": true, "minimum": true, "maximum": true, "anyOf": true,
	"oneOf": true, "properties": true, "additionalProperties": true, "required": true,
	"propertyOrdering": true,
}

// geminiDrops are annotations that say nothing about what is valid: they
// are dropped without a gap.
var geminiDrops = map[string]bool{
	"$schema": true, "$comment": true, "default": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "contentEncoding": true, "contentMediaType": true,
	"$vocabulary": true,
}

// assertions are the JSON Schema keywords that constrain a value, for
// telling an unknown keyword (an annotation, dropped quietly) from one
// Gemini cannot enforce (a gap).
var assertions = map[string]bool{
	"const": true, "enum": true, "pattern": true, "minLength": true, "maxLength": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true, "patternProperties": true, "propertyNames": true,
	"dependentRequired": true, "dependentSchemas": true, "dependencies": true, "allOf": true,
	"not": true, "if": true, "then": true, "else": true, "contains": true, "minContains": true,
	"maxContains": true, "unevaluatedProperties": true, "unevaluatedItems": true,
	"additionalItems": true, "$dynamicRef": true, "$dynamicAnchor": true, "$recursiveRef": true,
	"$recursiveAnchor": true, "contentSchema": true, "type": true, "minimum": true, "maximum": true,
	"minItems": true, "maxItems": true, "required": true, "format": true,
}

// jsonSchema returns raw converted for responseJsonSchema, and the gaps:
// "pattern at /properties/code" for each assertion dropped. A schema that
// does not parse is returned as it is, for Gemini to judge.
func jsonSchema(raw json.RawMessage) (json.RawMessage, []string) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return raw, nil
	}
	cv := &converter{}
	out, err := json.Marshal(cv.schema(doc, ""))
	if err != nil {
		return raw, nil
	}
	slices.Sort(cv.gaps)
	return out, cv.gaps
}

// SchemaGaps names the keywords of a JSON schema Gemini cannot enforce
// ("pattern at /properties/code"), none when it takes them all. The router
// asks it on a chain that requires enforced schemas.
func (c *Client) SchemaGaps(schema json.RawMessage) []string {
	_, gaps := jsonSchema(schema)
	return gaps
}

// converter converts one schema, noting its gaps.
type converter struct {
	gaps []string
}

func (cv *converter) gap(keyword, at string) {
	if at == "" {
		at = "/"
	}
	g := keyword + " at " + at
	if !slices.Contains(cv.gaps, g) {
		cv.gaps = append(cv.gaps, g)
	}
}

// schema converts the schema v found at the JSON pointer at.
func (cv *converter) schema(v any, at string) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v // true, false
	}
	_, hasRef := obj["$ref"]
	out := make(map[string]any, len(obj))
	for k, e := range obj {
		switch {
		case k == "definitions":
			k = "$defs"
		case k == "items":
			if _, tuple := e.([]any); tuple {
				k = "prefixItems" // draft-07's tuple form
			}
		case k == "const":
			if scalar(e) {
				out["enum"] = []any{e}
				continue
			}
		case k == "$ref":
			if s, ok := e.(string); ok {
				e = strings.Replace(s, "#/definitions/", "#/$defs/", 1)
			}
		}
		switch {
		case hasRef && !strings.HasPrefix(k, "$"):
			// Beside a $ref Gemini takes only $-keywords.
			if assertions[k] {
				cv.gap(k+" beside $ref", at)
			}
		case k == "enum" && !allScalar(e):
			cv.gap("enum of other than strings and numbers", at)
		case geminiKeeps[k]:
			out[k] = cv.keep(k, e, at)
		case assertions[k] || k == "const":
			cv.gap(k, at)
		case geminiDrops[k]:
		}
	}
	return out
}

// keep converts the value of a kept keyword: the sub-schemas inside it.
func (cv *converter) keep(k string, e any, at string) any {
	at += "/" + pointerToken(k)
	switch k {
	case "properties", "$defs":
		m, ok := e.(map[string]any)
		if !ok {
			return e
		}
		out := make(map[string]any, len(m))
		for name, sub := range m {
			out[name] = cv.schema(sub, at+"/"+pointerToken(name))
		}
		return out
	case "items", "additionalProperties":
		return cv.schema(e, at)
	case "anyOf", "oneOf", "prefixItems":
		if list, ok := e.([]any); ok {
			return cv.list(list, at)
		}
	}
	return e
}

func (cv *converter) list(list []any, at string) []any {
	out := make([]any, len(list))
	for i, sub := range list {
		out[i] = cv.schema(sub, at+"/"+strconv.Itoa(i))
	}
	return out
}

// scalar reports whether v is a string or a number: what Gemini's enum
// takes.
func scalar(v any) bool {
	switch v.(type) {
	case string, json.Number:
		return true
	}
	return false
}

func allScalar(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range list {
		if !scalar(e) {
			return false
		}
	}
	return true
}

func pointerToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
