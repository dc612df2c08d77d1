package config

import "fmt"

// SchemaSupport is what a route can do for a request that asks for a typed
// answer (response_format json_schema or json_object; issue 15): enforce a
// JSON schema (structured outputs: the provider constrains the answer to
// the schema), only JSON mode (the answer is JSON, of no particular shape),
// or neither. Whatever a route can do, its answer is validated by the
// gateway all the same; what it cannot enforce is asked in the prompt: a
// route with SchemaJSON is asked in JSON mode with the schema in a system
// message, a route with SchemaNone gets the schema in a system message and
// no response_format. The zero value is SchemaNone: a route nobody
// described is asked in words only, which any model takes.
type SchemaSupport uint8

// The schema supports, from least to most.
const (
	SchemaNone    SchemaSupport = iota // neither: the schema goes in the prompt
	SchemaJSON                         // JSON mode only ({"type":"json_object"})
	SchemaEnforce                      // a JSON schema, enforced (response_format json_schema)
)

// The words a config file uses for each SchemaSupport.
const (
	schemaNoneWord    = "none"
	schemaJSONWord    = "json"
	schemaEnforceWord = "enforce"
)

// String returns the config word: "none", "json" or "enforce".
func (s SchemaSupport) String() string {
	switch s {
	case SchemaJSON:
		return schemaJSONWord
	case SchemaEnforce:
		return schemaEnforceWord
	}
	return schemaNoneWord
}

// parseSchemaSupport reads a model's schema: word.
func parseSchemaSupport(s string) (SchemaSupport, error) {
	switch s {
	case schemaNoneWord:
		return SchemaNone, nil
	case schemaJSONWord:
		return SchemaJSON, nil
	case schemaEnforceWord:
		return SchemaEnforce, nil
	}
	return SchemaNone, fmt.Errorf("%q is not a schema support (write enforce, json or none)", s)
}

// DefaultSchemaRepairs is how many times a chain asks a route again with
// the violations of its invalid answer before the next route is tried.
const DefaultSchemaRepairs = 1

// maxSchemaRepairs bounds schema_repairs: every repair is a call that
// counts against the route's quota, while the caller waits.
const maxSchemaRepairs = 5

// DefaultTypedCalls is the most upstream calls a typed request spends by
// default: a try and a repair on the first route that answers invalidly,
// then one try on each of up to four more routes. A model that cannot
// produce the schema on six tries is unlikely to on the seventh, and each
// call may be one of a route's twenty a day.
const DefaultTypedCalls = 6

// maxTypedCalls bounds typed_calls.
const maxTypedCalls = 20
