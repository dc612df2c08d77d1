package typed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tollfree/tollfree/llm"
)

// Format is what a request's response_format asks of the answer's text.
type Format uint8

// The formats.
const (
	// FormatNone: plain text (no response_format, or {"type": "text"}).
	FormatNone Format = iota
	// FormatJSON: a JSON object ({"type": "json_object"}), or any JSON
	// value for a json_schema without a schema.
	FormatJSON
	// FormatSchema: JSON matching the json_schema's schema.
	FormatSchema
)

// The bounds on a caller's schema (one response_format schema, or one
// tool's parameters). They keep what a stranger sends from costing more
// than a request should: its size, its nesting, and how many schema checks
// one JSON value of the answer can cause once every anyOf, oneOf, allOf
// and $ref is followed (MaxSchemaCost; a schema that refers to the same
// definition twice in each of twenty levels would otherwise cost a million
// checks per value).
const (
	MaxSchemaBytes = 64 << 10
	MaxSchemaDepth = 64
	MaxSchemaCost  = 10000
	// MaxTools caps the tools whose parameters are compiled, OpenAI's own
	// cap.
	MaxTools = 128
)

// RequestError is a typed request that cannot be served as it is: a
// response_format or tool the gateway cannot read, or a schema that is not
// one or is over a bound. The HTTP API answers it 400 with Param and
// Message. It never quotes the request's text.
type RequestError struct {
	// Param is the offending parameter ("response_format.json_schema.schema",
	// "tools[2].function.parameters").
	Param string
	// Message says what is wrong and what to do.
	Message string
}

func (e *RequestError) Error() string { return e.Param + ": " + e.Message }

// Spec is what one request asks of its answer. Parse builds it; it is
// read-only afterwards and safe for concurrent use.
type Spec struct {
	// Format is what response_format asks.
	Format Format
	// Schema is the caller's schema, verbatim (FormatSchema only).
	Schema json.RawMessage

	schema *jsonschema.Schema
	object bool            // the schema's root asks for an object: JSON is looked for at a "{" only
	names  map[string]bool // property names the schemas declare (safe to log)
	tools  map[string]*tool
	// forced: tool_choice "required" or naming a function (force, "" for
	// any): an answer without that call is invalid.
	forced bool
	force  string
}

// tool is one function tool of the request.
type tool struct {
	schema *jsonschema.Schema // nil: any JSON object
}

// Parse reads what req asks of its answer: its response_format and its
// function tools' parameters. It returns nil, nil when the request asks for
// nothing to check (no response_format but text, no tools). Every error is
// a *RequestError.
func Parse(req *llm.Request) (*Spec, error) {
	if !asksJSON(req.ResponseFormat) && len(req.Extra["tools"]) == 0 {
		return nil, nil // the common case, without an allocation
	}
	s := &Spec{names: map[string]bool{}}
	if err := s.parseFormat(req.ResponseFormat); err != nil {
		return nil, err
	}
	if err := s.parseTools(req.Extra["tools"]); err != nil {
		return nil, err
	}
	if err := s.parseChoice(req.Extra["tool_choice"]); err != nil {
		return nil, err
	}
	if s.Format == FormatNone && s.tools == nil {
		return nil, nil
	}
	return s, nil
}

// asksJSON reports whether a response_format may ask for more than text:
// anything but nothing, null, or {"type":"text"} (which Parse then reads).
func asksJSON(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	switch {
	case len(t) == 0, bytes.Equal(t, []byte("null")):
		return false
	case bytes.Equal(t, []byte(`{"type":"text"}`)):
		return false
	}
	return true
}

// parseFormat reads response_format.
func (s *Spec) parseFormat(raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 || isNull(raw) {
		return nil
	}
	var rf struct {
		Type       string          `json:"type"`
		JSONSchema json.RawMessage `json:"json_schema"`
	}
	if err := json.Unmarshal(raw, &rf); err != nil {
		return &RequestError{Param: "response_format", Message: `must be an object such as {"type": "json_object"} or {"type": "json_schema", "json_schema": {"name": "...", "schema": {...}}}`}
	}
	switch rf.Type {
	case "", "text":
		return nil
	case "json_object":
		s.Format = FormatJSON
		return nil
	case "json_schema":
	default:
		return &RequestError{Param: "response_format.type", Message: strconv.Quote(rf.Type) + " is not a response format; use text, json_object or json_schema"}
	}
	var js struct {
		Schema json.RawMessage `json:"schema"`
	}
	if len(rf.JSONSchema) == 0 || isNull(rf.JSONSchema) || json.Unmarshal(rf.JSONSchema, &js) != nil {
		return &RequestError{Param: "response_format.json_schema", Message: `is required with type json_schema, as an object: {"name": "...", "schema": {...}}`}
	}
	if len(js.Schema) == 0 || isNull(js.Schema) {
		s.Format = FormatJSON // OpenAI's schema is optional: any JSON then
		return nil
	}
	sch, err := s.compile(js.Schema, "response_format.json_schema.schema")
	if err != nil {
		return err
	}
	s.Format, s.Schema, s.schema = FormatSchema, js.Schema, sch
	var root struct {
		Type json.RawMessage `json:"type"`
	}
	s.object = json.Unmarshal(js.Schema, &root) == nil && string(bytes.TrimSpace(root.Type)) == `"object"`
	return nil
}

// parseTools reads the function tools of the request's tools field.
func (s *Spec) parseTools(raw json.RawMessage) error {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	var list []struct {
		Type     string `json:"type"`
		Function *struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return &RequestError{Param: "tools", Message: `must be an array of tools such as {"type": "function", "function": {"name": "...", "parameters": {...}}}`}
	}
	if len(list) > MaxTools {
		return &RequestError{Param: "tools", Message: fmt.Sprintf("holds %d tools; at most %d", len(list), MaxTools)}
	}
	for i, t := range list {
		if t.Type != "function" || t.Function == nil || t.Function.Name == "" {
			continue // another kind of tool: nothing to check here
		}
		if s.tools == nil {
			s.tools = map[string]*tool{}
		}
		if _, dup := s.tools[t.Function.Name]; dup {
			continue
		}
		tl := &tool{}
		if p := t.Function.Parameters; len(p) > 0 && !isNull(p) {
			sch, err := s.compile(p, "tools["+strconv.Itoa(i)+"].function.parameters")
			if err != nil {
				return err
			}
			tl.schema = sch
		}
		s.tools[t.Function.Name] = tl
	}
	return nil
}

// parseChoice reads tool_choice (issue 32): "required", or a function
// named ({"type": "function", "function": {"name": "..."}}), forces a call,
// which Check then requires. A name that is none of the request's function
// tools is the caller's error. "auto", "none" and other kinds of choice
// force nothing here.
func (s *Spec) parseChoice(raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 || isNull(raw) || s.tools == nil {
		return nil
	}
	var word string
	if json.Unmarshal(raw, &word) == nil {
		s.forced = word == "required"
		return nil
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &named) != nil {
		return &RequestError{Param: "tool_choice", Message: `must be "none", "auto", "required" or {"type": "function", "function": {"name": "..."}}`}
	}
	if named.Type != "function" {
		return nil
	}
	if _, ok := s.tools[named.Function.Name]; !ok {
		return &RequestError{Param: "tool_choice.function.name", Message: "names no function tool of the request; the tools are " + s.toolNames()}
	}
	s.forced, s.force = true, named.Function.Name
	return nil
}

// schemaURL names a caller's schema inside the compiler. It resolves
// nowhere: no $ref is ever loaded (see noLoader).
const schemaURL = "urn:tollfree:schema"

// compile bounds and compiles one caller's schema; param names it in
// errors. It notes the property names the schema declares.
func (s *Spec) compile(raw json.RawMessage, param string) (*jsonschema.Schema, error) {
	if len(raw) > MaxSchemaBytes {
		return nil, &RequestError{Param: param, Message: fmt.Sprintf("is %d bytes; at most %d", len(raw), MaxSchemaBytes)}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &RequestError{Param: param, Message: "is not JSON: " + err.Error()}
	}
	if d := depth(doc, 0); d > MaxSchemaDepth {
		return nil, &RequestError{Param: param, Message: fmt.Sprintf("nests deeper than %d levels", MaxSchemaDepth)}
	}
	if err := checkCost(doc); err != nil {
		return nil, &RequestError{Param: param, Message: err.Error()}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	c.UseRegexpEngine(lenientRegexp)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, &RequestError{Param: param, Message: "cannot be read: " + err.Error()}
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, &RequestError{Param: param, Message: "is not a valid JSON Schema: " + compileProblem(err)}
	}
	if loop := refLoop(doc); loop != nil {
		for i := range loop {
			loop[i] = "#" + loop[i]
		}
		return nil, &RequestError{Param: param, Message: "is not a valid JSON Schema: its $ref loops back to itself without going into the value (" +
			strings.Join(loop, " -> ") + "), so no answer could ever be checked against it"}
	}
	declared(doc, s.names)
	return sch, nil
}

// errNoRemote is why a $ref outside the schema fails.
var errNoRemote = errors.New("tollfree loads no schema from a file or the network: put what the $ref names in the schema's $defs")

// noLoader refuses every schema the caller's schema refers to outside
// itself (the compiler's default would read local files).
type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, errNoRemote }

// maxProblem bounds the compiler's message quoted back to the caller.
const maxProblem = 600

// compileProblem is the compiler's error, shortened, without the
// compiler's internal name for the schema.
func compileProblem(err error) string {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, strconv.Quote(schemaURL+"#"), "the schema")
	msg = strings.ReplaceAll(msg, schemaURL, "the schema")
	if len(msg) > maxProblem {
		msg = msg[:maxProblem] + "..."
	}
	return msg
}

// depth returns how deeply v nests objects and arrays.
func depth(v any, d int) int {
	if d > MaxSchemaDepth {
		return d
	}
	best := d
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			best = max(best, depth(e, d+1))
		}
	case []any:
		for _, e := range x {
			best = max(best, depth(e, d+1))
		}
	}
	return best
}

// declared adds to names every property name the schema doc declares (the
// keys of every properties object, and the entries of every required
// list): a violation's path may name them, since they are the caller's,
// not the answer's.
func declared(v any, names map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for k := range props {
				names[k] = true
			}
		}
		if req, ok := x["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					names[s] = true
				}
			}
		}
		for _, e := range x {
			declared(e, names)
		}
	case []any:
		for _, e := range x {
			declared(e, names)
		}
	}
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
