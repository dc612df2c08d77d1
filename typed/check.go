package typed

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/tollfree/tollfree/llm"
)

// Violation is one way an answer is not what the request asked for.
type Violation struct {
	// Tool is the declared tool whose call broke its parameters; "" for
	// the answer's text (or a call of a tool the request did not declare,
	// whose name is the answer's, not the caller's).
	Tool string
	// Path is where the violation is in the JSON, as a JSON pointer ("" is
	// the whole value). A property name the schemas do not declare reads
	// "*": it is the answer's text.
	Path string
	// Keyword is the schema keyword the value broke ("enum", "required",
	// "type"...), or "json" for an answer that holds no JSON value, "tool"
	// for a call of a tool the request did not declare, "tool_choice" for
	// an answer without the call tool_choice forces.
	Keyword string
	// detail is the validator's own words, which may quote the answer: it
	// goes only into the repair message, back to the route that answered.
	detail string
	// call is the index of the tool call, for a tool call's violation.
	call int
}

// Violations are what an invalid answer broke. Their String is safe to log.
type Violations []Violation

// maxListed bounds the violations listed in a String or a repair message.
const maxListed = 8

// String lists the violations as "/grade: enum; (root): required", the
// tool first for a tool call's ("get_weather /city: type"): paths and
// keywords only, never answer text.
func (vs Violations) String() string {
	var b strings.Builder
	for i, v := range vs {
		if i == maxListed {
			b.WriteString("; and " + strconv.Itoa(len(vs)-maxListed) + " more")
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(v.where())
		b.WriteString(": ")
		b.WriteString(v.Keyword)
	}
	return b.String()
}

// OfToolCalls reports whether the violations are of tool calls' arguments
// (or of calls of undeclared tools) rather than of the answer's text.
func (vs Violations) OfToolCalls() bool {
	for _, v := range vs {
		if v.Tool != "" || v.Keyword == "tool" || v.Keyword == "tool_choice" {
			return true
		}
	}
	return false
}

// where is a violation's tool and path, "(root)" for the whole value.
func (v Violation) where() string {
	p := v.Path
	if p == "" {
		p = "(root)"
	}
	if v.Tool != "" {
		return v.Tool + " " + p
	}
	return p
}

// Check judges an answer. For an answer with tool calls, each call's
// arguments are checked against its tool's parameters; otherwise the
// answer's text is checked against the response_format: its JSON is
// unwrapped from prose or a fenced block first, and content is that JSON,
// what the caller gets when the answer is valid (for an answer with tool
// calls, or a request with no response_format, the text as it came). It
// is safe for concurrent use.
func (s *Spec) Check(resp *llm.Response) (content string, vs Violations) {
	content = resp.Content
	if s.forced && !s.called(resp.ToolCalls) {
		vs = Violations{s.unforced()}
	}
	if len(resp.ToolCalls) > 0 {
		if s.tools != nil {
			vs = append(vs, s.checkCalls(resp.ToolCalls)...)
		}
		return content, vs
	}
	if len(vs) > 0 {
		return content, vs
	}
	if s.Format == FormatNone {
		return content, nil
	}
	found, ok := extract(content, s.Format == FormatJSON || s.object)
	if !ok {
		return content, Violations{{Keyword: "json", detail: "the answer holds no JSON value"}}
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(found))
	if err != nil {
		return content, Violations{{Keyword: "json", detail: "the answer is not valid JSON"}}
	}
	switch {
	case s.schema != nil:
		vs = s.violations(s.schema.Validate(v), "")
	default:
		if _, obj := v.(map[string]any); !obj {
			vs = Violations{{Keyword: "type", detail: "the answer must be a JSON object"}}
		}
	}
	return found, vs
}

// called reports whether a tool_calls array holds the call tool_choice
// forces: any call, or one of the function it names.
func (s *Spec) called(raw json.RawMessage) bool {
	var calls []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &calls) != nil {
		return false
	}
	for _, c := range calls {
		if s.force == "" || c.Function.Name == s.force {
			return true
		}
	}
	return false
}

// unforced is the violation of an answer without the call tool_choice
// forces.
func (s *Spec) unforced() Violation {
	if s.force == "" {
		return Violation{Keyword: "tool_choice", call: -1, detail: `tool_choice is "required": the answer must call one of the tools ` + s.toolNames()}
	}
	return Violation{Tool: s.force, Keyword: "tool_choice", call: -1, detail: "tool_choice names the function " + strconv.Quote(s.force) + ": the answer must call it"}
}

// checkCalls checks each tool call of a tool_calls array.
func (s *Spec) checkCalls(raw json.RawMessage) Violations {
	var calls []struct {
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &calls) != nil {
		return Violations{{Keyword: "tool", detail: "the tool_calls are not an array of function calls"}}
	}
	var vs Violations
	for i, c := range calls {
		vs = append(vs, s.checkCall(i, c.Function.Name, c.Function.Arguments)...)
	}
	return vs
}

// checkCall checks the arguments of call i, of the tool name.
func (s *Spec) checkCall(i int, name, args string) Violations {
	t, ok := s.tools[name]
	if !ok {
		return Violations{{Keyword: "tool", call: i, detail: "there is no tool named " + strconv.Quote(name) + "; the tools are " + s.toolNames()}}
	}
	args = strings.TrimSpace(args)
	if args == "" {
		args = "{}"
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	if err != nil {
		return Violations{{Tool: name, Keyword: "json", call: i, detail: "the arguments are not valid JSON"}}
	}
	if t.schema == nil {
		if _, obj := v.(map[string]any); !obj {
			return Violations{{Tool: name, Keyword: "type", call: i, detail: "the arguments must be a JSON object"}}
		}
		return nil
	}
	vs := s.violations(t.schema.Validate(v), name)
	for j := range vs {
		vs[j].call = i
	}
	return vs
}

// toolNames lists the declared tools, sorted.
func (s *Spec) toolNames() string {
	names := make([]string, 0, len(s.tools))
	for n := range s.tools {
		names = append(names, strconv.Quote(n))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// printer words the validator's messages.
var printer = message.NewPrinter(language.English)

// violations turns a validation error into Violations, one per failed
// keyword (an anyOf or oneOf that no branch matched is one).
func (s *Spec) violations(err error, tool string) Violations {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return Violations{{Tool: tool, Keyword: "schema", detail: "the value could not be checked"}}
	}
	var vs Violations
	s.collect(ve, tool, &vs)
	return vs
}

// maxViolations bounds the violations kept from one answer.
const maxViolations = 32

func (s *Spec) collect(e *jsonschema.ValidationError, tool string, vs *Violations) {
	if len(*vs) >= maxViolations {
		return
	}
	switch e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				s.collect(c, tool, vs)
			}
			return
		}
	}
	kw := "schema"
	if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
		kw = p[len(p)-1]
	}
	*vs = append(*vs, Violation{Tool: tool, Path: s.path(e.InstanceLocation), Keyword: kw, detail: e.ErrorKind.LocalizedString(printer)})
}

// path is an instance location as a JSON pointer, with every property
// name the schemas do not declare written "*".
func (s *Spec) path(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		if _, err := strconv.Atoi(tok); err == nil || s.names[tok] {
			b.WriteString(escape(tok))
			continue
		}
		b.WriteByte('*')
	}
	return b.String()
}

// fence finds fenced code blocks: ```json ... ``` or ``` ... ```.
var fence = regexp.MustCompile("(?s)```[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*?)```")

// maxStarts bounds the places in a prose answer where JSON is looked for.
const maxStarts = 64

// extract finds the JSON in an answer: the whole text, else the first
// fenced block that holds JSON, else the first JSON value embedded in the
// prose (starting at a "{", or a "[" unless object says only objects will
// do). It returns the JSON's exact text.
func extract(text string, object bool) (string, bool) {
	t := strings.TrimSpace(text)
	if t != "" && json.Valid([]byte(t)) {
		return t, true
	}
	for _, m := range fence.FindAllStringSubmatch(t, maxStarts) {
		if in := strings.TrimSpace(m[1]); in != "" && json.Valid([]byte(in)) {
			return in, true
		}
	}
	starts := "{["
	if object {
		starts = "{"
	}
	for i, n := 0, 0; i < len(t) && n < maxStarts; i++ {
		if strings.IndexByte(starts, t[i]) < 0 {
			continue
		}
		n++
		var raw json.RawMessage
		if json.NewDecoder(strings.NewReader(t[i:])).Decode(&raw) == nil {
			return string(raw), true
		}
	}
	return "", false
}
