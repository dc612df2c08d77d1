package typed

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
)

const grade = `{"type":"object","properties":{"finding":{"type":"string"},"grade":{"enum":["document_supported","unsupported"]}},"required":["finding","grade"],"additionalProperties":false}`

func schemaRF(schema string) json.RawMessage {
	return json.RawMessage(`{"type":"json_schema","json_schema":{"name":"g","strict":true,"schema":` + schema + `}}`)
}

func mustParse(t *testing.T, req *llm.Request) *Spec {
	t.Helper()
	s, err := Parse(req)
	if err != nil || s == nil {
		t.Fatalf("Parse: %v, %v", s, err)
	}
	return s
}

// TestParse: what a request asks of its answer, and the precise 400 for
// what cannot be checked.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		rf   string
		want Format
	}{
		{"none", ``, FormatNone},
		{"null", `null`, FormatNone},
		{"text", `{"type":"text"}`, FormatNone},
		{"json mode", `{"type":"json_object"}`, FormatJSON},
		{"json_schema without a schema", `{"type":"json_schema","json_schema":{"name":"x"}}`, FormatJSON},
		{"json_schema", string(schemaRF(grade)), FormatSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(&llm.Request{ResponseFormat: json.RawMessage(tc.rf)})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == FormatNone {
				if s != nil {
					t.Errorf("got a spec %+v, want nil: nothing to check", s)
				}
				return
			}
			if s.Format != tc.want {
				t.Errorf("format %v, want %v", s.Format, tc.want)
			}
		})
	}
	deep := `{"type":"object","properties":{"a":` + strings.Repeat(`{"properties":{"a":`, MaxSchemaDepth) + `{}` + strings.Repeat(`}}`, MaxSchemaDepth) + `}}`
	var bomb strings.Builder // each level refers twice to the next: 2^16 checks
	bomb.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range 16 {
		bomb.WriteString(`"d` + strconv.Itoa(i) + `":{"anyOf":[{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"},{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"}]},`)
	}
	bomb.WriteString(`"d16":{"type":"string"}}}`)
	for _, tc := range []struct {
		name, rf, tools, param, msg string
	}{
		{"not an object", `"json"`, ``, "response_format", "must be an object"},
		{"unknown type", `{"type":"xml"}`, ``, "response_format.type", `"xml" is not a response format`},
		{"json_schema missing", `{"type":"json_schema"}`, ``, "response_format.json_schema", "is required"},
		{"not a schema", string(schemaRF(`{"type":"tomato"}`)), ``, "response_format.json_schema.schema", "is not a valid JSON Schema"},
		{"a file", string(schemaRF(`{"$ref":"file:///etc/passwd"}`)), ``, "response_format.json_schema.schema", "loads no schema from a file or the network"},
		{"the network", string(schemaRF(`{"$ref":"https://example.com/s.json"}`)), ``, "response_format.json_schema.schema", "loads no schema"},
		{"a meta-schema elsewhere", string(schemaRF(`{"$schema":"https://example.com/meta","type":"object"}`)), ``, "response_format.json_schema.schema", "loads no schema"},
		{"too big", string(schemaRF(`{"description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`)), ``, "response_format.json_schema.schema", "bytes; at most"},
		{"too deep", string(schemaRF(deep)), ``, "response_format.json_schema.schema", "nests deeper than"},
		{"too complex", string(schemaRF(bomb.String())), ``, "response_format.json_schema.schema", "is too complex"},
		{"tools not a list", ``, `{"type":"function"}`, "tools", "must be an array"},
		{"a tool's bad parameters", ``, `[{"type":"function","function":{"name":"f","parameters":{"type":"x"}}}]`, "tools[0].function.parameters", "is not a valid JSON Schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &llm.Request{ResponseFormat: json.RawMessage(tc.rf)}
			if tc.tools != "" {
				req.Extra = map[string]json.RawMessage{"tools": json.RawMessage(tc.tools)}
			}
			_, err := Parse(req)
			var re *RequestError
			if !errors.As(err, &re) || re.Param != tc.param || !strings.Contains(re.Message, tc.msg) {
				t.Errorf("err %v, want a RequestError on %s saying %q", err, tc.param, tc.msg)
			}
			if err != nil && strings.Contains(err.Error(), schemaURL) {
				t.Errorf("err %q names the compiler's internal URL", err)
			}
		})
	}
}

// TestCheck: an answer's JSON is unwrapped from prose or a fence, then
// validated; a violation's String holds paths and keywords, never the
// answer's text.
func TestCheck(t *testing.T) {
	s := mustParse(t, &llm.Request{ResponseFormat: schemaRF(grade)})
	for _, tc := range []struct {
		name, answer, content, violations string
	}{
		{"valid", `{"finding":"F1","grade":"unsupported"}`, `{"finding":"F1","grade":"unsupported"}`, ""},
		{"spaces", "\n  {\"finding\":\"F1\",\"grade\":\"unsupported\"}  \n", `{"finding":"F1","grade":"unsupported"}`, ""},
		{"fenced", "```json\n{\"finding\":\"F1\",\"grade\":\"unsupported\"}\n```", `{"finding":"F1","grade":"unsupported"}`, ""},
		{"fenced without a language", "Sure:\n```\n{\"finding\":\"F1\",\"grade\":\"unsupported\"}\n```", `{"finding":"F1","grade":"unsupported"}`, ""},
		{"prose", `I think {"finding": "F1", "grade": "unsupported"} is right.`, `{"finding": "F1", "grade": "unsupported"}`, ""},
		{"prose with braces first", `The set {a, b} gives {"finding":"F1","grade":"unsupported"}`, `{"finding":"F1","grade":"unsupported"}`, ""},
		{"enum", `{"finding":"F1","grade":"secret-grade"}`, `{"finding":"F1","grade":"secret-grade"}`, "/grade: enum"},
		{"required", `{"grade":"unsupported"}`, `{"grade":"unsupported"}`, "(root): required"},
		{"undeclared property", `{"finding":"F1","grade":"unsupported","my private note":1}`, `{"finding":"F1","grade":"unsupported","my private note":1}`, "(root): additionalProperties"},
		{"not JSON", `Unsupported, I'd say.`, `Unsupported, I'd say.`, "(root): json"},
		{"cut", `{"finding":"F1","gra`, `{"finding":"F1","gra`, "(root): json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content, vs := s.Check(&llm.Response{Content: tc.answer})
			if content != tc.content || vs.String() != tc.violations {
				t.Errorf("got %q, %q; want %q, %q", content, vs.String(), tc.content, tc.violations)
			}
			if strings.Contains(vs.String(), "secret") || strings.Contains(vs.String(), "private") {
				t.Errorf("violations %q quote the answer", vs)
			}
		})
	}
	// A property name the schema does not declare is "*" in a path.
	open := mustParse(t, &llm.Request{ResponseFormat: schemaRF(`{"type":"object","additionalProperties":{"type":"integer"}}`)})
	if _, vs := open.Check(&llm.Response{Content: `{"my secret key":"x"}`}); vs.String() != "/*: type" {
		t.Errorf("violations %q, want /*: type", vs)
	}
	jm := mustParse(t, &llm.Request{ResponseFormat: json.RawMessage(`{"type":"json_object"}`)})
	if _, vs := jm.Check(&llm.Response{Content: `[1, 2]`}); vs.String() != "(root): type" {
		t.Errorf("JSON mode with an array: %q, want (root): type", vs)
	}
	if c, vs := jm.Check(&llm.Response{Content: "Here: {\"a\": [1]}"}); c != `{"a": [1]}` || vs != nil {
		t.Errorf("JSON mode: %q %q, want the object unwrapped", c, vs)
	}
}

// TestCheckToolCalls: each call's arguments are checked against its
// tool's parameters; a call of an undeclared tool is a violation whose
// String does not name it (the name is the answer's).
func TestCheckToolCalls(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},` +
		`{"type":"function","function":{"name":"now"}},{"type":"web_search"}]`
	s := mustParse(t, &llm.Request{Extra: map[string]json.RawMessage{"tools": json.RawMessage(tools)}})
	call := func(name, args string) json.RawMessage {
		b, _ := json.Marshal(args)
		return json.RawMessage(`[{"id":"c1","type":"function","function":{"name":"` + name + `","arguments":` + string(b) + `}}]`)
	}
	for _, tc := range []struct{ name, tool, args, want string }{
		{"valid", "get_weather", `{"city":"Paris"}`, ""},
		{"missing", "get_weather", `{}`, "get_weather (root): required"},
		{"not JSON", "get_weather", `{"city":`, "get_weather (root): json"},
		{"no parameters", "now", ``, ""},
		{"undeclared", "rm_rf", `{}`, "(root): tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &llm.Response{ToolCalls: call(tc.tool, tc.args), Content: "prose is not checked beside tool calls"}
			content, vs := s.Check(resp)
			if vs.String() != tc.want || content != resp.Content {
				t.Errorf("violations %q (content %q), want %q", vs, content, tc.want)
			}
			if strings.Contains(vs.String(), "rm_rf") {
				t.Errorf("violations %q name an undeclared tool", vs)
			}
		})
	}
}

// TestFor: a route is asked what it can do.
func TestFor(t *testing.T) {
	base := &llm.Request{
		Messages:       []llm.Message{{Role: "system", Content: "Be terse."}, {Role: "user", Content: "Grade it."}},
		ResponseFormat: schemaRF(grade),
	}
	s := mustParse(t, base)
	if got := s.For(base, config.SchemaEnforce); got != base {
		t.Errorf("an enforcing route is not asked as the caller asked")
	}
	for _, tc := range []struct {
		sup    config.SchemaSupport
		format string
	}{{config.SchemaJSON, `{"type":"json_object"}`}, {config.SchemaNone, ``}} {
		got := s.For(base, tc.sup)
		if string(got.ResponseFormat) != tc.format {
			t.Errorf("%v: response_format %s, want %s", tc.sup, got.ResponseFormat, tc.format)
		}
		if len(got.Messages) != 3 || got.Messages[0].Content != "Be terse." || got.Messages[1].Role != "system" ||
			!strings.HasPrefix(got.Messages[1].Content, "Answer with JSON matching this schema, and nothing else: {") || got.Messages[2].Role != "user" {
			t.Errorf("%v: messages %+v, want the schema in words after the caller's system message", tc.sup, got.Messages)
		}
	}
	if len(base.Messages) != 2 || string(base.ResponseFormat) != string(schemaRF(grade)) {
		t.Errorf("For modified the caller's request")
	}
	jm := mustParse(t, &llm.Request{ResponseFormat: json.RawMessage(`{"type":"json_object"}`), Messages: []llm.Message{{Role: "user", Content: "json please"}}})
	req := &llm.Request{ResponseFormat: json.RawMessage(`{"type":"json_object"}`), Messages: []llm.Message{{Role: "user", Content: "json please"}}}
	if jm.For(req, config.SchemaJSON) != req {
		t.Errorf("JSON mode is not asked as it is of a route that has it")
	}
	if got := jm.For(req, config.SchemaNone); got.ResponseFormat != nil || got.Messages[0].Content != "Answer with a JSON object, and nothing else." {
		t.Errorf("JSON mode for a route without it: %+v", got)
	}
	// OpenAI-style JSON mode wants the conversation to say "JSON": when it
	// does not, the gateway says it.
	quiet := &llm.Request{ResponseFormat: json.RawMessage(`{"type":"json_object"}`), Messages: []llm.Message{{Role: "user", Content: "Grade it."}}}
	if got := jm.For(quiet, config.SchemaEnforce); string(got.ResponseFormat) != `{"type":"json_object"}` || len(got.Messages) != 2 || got.Messages[0].Role != "system" {
		t.Errorf("JSON mode in a conversation without the word: %+v", got)
	}
}

// TestRepair: the re-ask holds the conversation, the invalid answer and
// what was wrong; for tool calls, one tool result per call.
func TestRepair(t *testing.T) {
	sent := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "Grade it."}}, ResponseFormat: schemaRF(grade)}
	s := mustParse(t, sent)
	resp := &llm.Response{Content: `{"finding":"F1","grade":"great"}`}
	_, vs := s.Check(resp)
	got := s.Repair(sent, resp, vs)
	if len(got.Messages) != 3 || got.Messages[1].Role != "assistant" || got.Messages[1].Content != resp.Content || got.Messages[2].Role != "user" {
		t.Fatalf("messages %+v", got.Messages)
	}
	if want := "Your answer does not match the JSON schema it must follow:\n- at /grade: value must be one of 'document_supported', 'unsupported'\nAnswer again with only the corrected JSON."; got.Messages[2].Content != want {
		t.Errorf("repair message %q, want %q", got.Messages[2].Content, want)
	}
	if len(sent.Messages) != 1 {
		t.Errorf("Repair modified the request sent")
	}

	tools := `[{"type":"function","function":{"name":"f","parameters":{"type":"object","required":["x"]}}}]`
	ts := mustParse(t, &llm.Request{Extra: map[string]json.RawMessage{"tools": json.RawMessage(tools)}})
	calls := json.RawMessage(`[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"id":"b","type":"function","function":{"name":"f","arguments":"{}"}}]`)
	tresp := &llm.Response{ToolCalls: calls}
	_, tvs := ts.Check(tresp)
	tr := ts.Repair(sent, tresp, tvs)
	if len(tr.Messages) != 4 || string(tr.Messages[1].ToolCalls) != string(calls) || tr.Messages[2].ToolCallID != "a" || tr.Messages[3].ToolCallID != "b" {
		t.Fatalf("messages %+v", tr.Messages)
	}
	if !strings.HasPrefix(tr.Messages[2].Content, "Not run: another call") || !strings.Contains(tr.Messages[3].Content, "missing property 'x'") {
		t.Errorf("tool results %q, %q", tr.Messages[2].Content, tr.Messages[3].Content)
	}
}

// TestParseNothingAllocates: a request that asks for no typed answer costs
// the router no allocation.
func TestParseNothingAllocates(t *testing.T) {
	req := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}, ResponseFormat: json.RawMessage(`{"type":"text"}`)}
	if n := testing.AllocsPerRun(100, func() { _, _ = Parse(req) }); n != 0 {
		t.Errorf("Parse allocates %v times for a plain request", n)
	}
}

// TestRefLoop: a $ref that leads back to itself through keywords that stay
// on the same value is refused; a recursive schema that goes down into the
// value (a tree) is not.
func TestRefLoop(t *testing.T) {
	for _, tc := range []struct {
		schema string
		loops  bool
	}{
		{`{"$ref":"#"}`, true},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, true},
		{`{"anyOf":[{"type":"string"},{"not":{"$ref":"#"}}]}`, true},
		{`{"definitions":{"x~y":{"oneOf":[{"$ref":"#/definitions/x~0y"}]}},"$ref":"#/definitions/x~0y"}`, true},
		{`{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}}}`, false},
		{`{"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}},"$ref":"#/$defs/node"}`, false},
		{`{"type":"object","properties":{"if":{"type":"string"}}}`, false},
	} {
		req := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}},
			ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"x","schema":` + tc.schema + `}}`)}
		_, err := Parse(req)
		var re *RequestError
		if got := errors.As(err, &re) && strings.Contains(re.Message, "loops back"); got != tc.loops {
			t.Errorf("%s: err %v, want a loop refused: %v", tc.schema, err, tc.loops)
		}
	}
}
