// Package typed owns typed answers (issue 15): what a request asks its
// answer to be, and whether an answer is it. A request asks for a typed
// answer with OpenAI's response_format, {"type": "json_object"} (any JSON
// object) or {"type": "json_schema", "json_schema": {"schema": ...}} (JSON
// that matches a JSON Schema), and with tools, whose calls' arguments must
// match each tool's parameters schema; a tool_choice of "required", or
// naming a function, forces a call (issue 32: LangChain's
// withStructuredOutput sends one), and an answer without it is invalid too.
// Seed 002's extractor and judge
// roles and seed 003's routing call need such answers, and a model that
// returns prose, a cut object or a grade outside an enum must not reach the
// program as a success, or the cache.
//
// Parse reads a request once: it compiles the caller's schemas with
// github.com/santhosh-tekuri/jsonschema/v6, a well-kept, spec-complete
// validator (drafts 4, 6, 7, 2019-09 and 2020-12, with $ref, $defs,
// $dynamicRef and the unevaluated* keywords; 2020-12 unless the schema's
// $schema says otherwise) whose errors say which keyword failed where.
// A stranger sends the schema, so it is bounded before it is compiled
// (MaxSchemaBytes, MaxSchemaDepth, MaxSchemaCost: a schema whose
// anyOf/allOf/$ref branches multiply past the bound is refused, since
// validation would take as long), no $ref is ever loaded from a file or
// the network, and a schema that is not one is a *RequestError naming the
// problem, never a panic. Patterns are Go regular expressions (RE2, linear
// in the text); a pattern RE2 cannot compile (lookaround, backreferences)
// is not checked. format is an annotation, as 2020-12 says.
//
// Spec.Check judges an answer: the JSON is first unwrapped from prose or a
// ```json fenced block (the unwrapped JSON is what the caller then gets),
// then validated. An invalid answer's Violations say where and which
// keyword failed; their String holds only JSON paths (a property name the
// schema does not declare reads "*") and keywords, never answer text, so
// that it may go in a log line or an error. Spec.Repair builds the request
// that asks the same route again: the conversation, the invalid answer,
// and a short message listing the violations (or, for tool calls, a tool
// result per call saying what was wrong).
//
// Spec.For shapes a request for what a route can do (config.SchemaSupport):
// a route that enforces schemas is asked as the caller asked; a route with
// JSON mode only is asked {"type": "json_object"} with the schema in a
// system message ("Answer with JSON matching this schema: ..."); a route
// with neither gets the schema in a system message and no response_format.
// JSON mode is always asked in a conversation that says "JSON", as
// OpenAI-style JSON mode wants.
package typed
