package typed

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
)

// jsonObject is JSON mode's response_format.
var jsonObject = json.RawMessage(`{"type":"json_object"}`)

// For returns req as a route that can do sup is to be asked it: req itself
// when the route can do what req asks (a schema to a route that enforces
// schemas; JSON mode, asked in a conversation that says "JSON" as
// OpenAI-style JSON mode wants, to one that has it), else a copy with the
// request put in words in a system message, after the caller's own system
// messages: a route with JSON mode only is asked {"type": "json_object"}
// with "Answer with JSON matching this schema: ...", a route with neither
// gets that message and no response_format. Tools are sent as they are.
// req is never modified.
func (s *Spec) For(req *llm.Request, sup config.SchemaSupport) *llm.Request {
	jsonMode := s.Format == FormatJSON && sup >= config.SchemaJSON
	switch {
	case s.Format == FormatNone,
		s.Format == FormatSchema && sup == config.SchemaEnforce,
		jsonMode && isJSONObject(req.ResponseFormat) && saysJSON(req.Messages):
		return req
	}
	out := *req
	out.ResponseFormat = nil
	if jsonMode || sup == config.SchemaJSON {
		out.ResponseFormat = jsonObject
	}
	out.Messages = withSystem(req.Messages, s.instruction())
	return &out
}

// saysJSON reports whether a conversation says "JSON", in any case.
func saysJSON(msgs []llm.Message) bool {
	for i := range msgs {
		if strings.Contains(strings.ToLower(msgs[i].Content), "json") {
			return true
		}
	}
	return false
}

// isJSONObject reports whether a response_format is JSON mode's.
func isJSONObject(raw json.RawMessage) bool {
	var rf struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(raw, &rf) == nil && rf.Type == "json_object"
}

// instruction is the request in words, for a route that cannot enforce it.
// It names JSON: OpenAI-style JSON mode refuses messages that do not.
func (s *Spec) instruction() string {
	if s.Format != FormatSchema {
		return "Answer with a JSON object, and nothing else."
	}
	var b bytes.Buffer
	if json.Compact(&b, s.Schema) != nil {
		b.Reset()
		b.Write(s.Schema)
	}
	return "Answer with JSON matching this schema, and nothing else: " + b.String()
}

// withSystem returns msgs with a system message of text after the leading
// system (or developer) messages.
func withSystem(msgs []llm.Message, text string) []llm.Message {
	i := 0
	for i < len(msgs) && (msgs[i].Role == "system" || msgs[i].Role == "developer") {
		i++
	}
	out := make([]llm.Message, 0, len(msgs)+1)
	out = append(out, msgs[:i]...)
	out = append(out, llm.Message{Role: "system", Content: text})
	return append(out, msgs[i:]...)
}

// Repair returns the request that asks a route again after its answer
// resp, to sent, broke vs: the conversation, resp as the assistant's turn,
// and what was wrong: a user message listing the violations, or, for tool
// calls, one tool result per call (what was wrong with its arguments, or
// that it was not run). sent is never modified.
func (s *Spec) Repair(sent *llm.Request, resp *llm.Response, vs Violations) *llm.Request {
	out := *sent
	msgs := make([]llm.Message, 0, len(sent.Messages)+4)
	msgs = append(msgs, sent.Messages...)
	if len(resp.ToolCalls) > 0 {
		if results, ok := toolResults(resp.ToolCalls, vs); ok {
			msgs = append(msgs, llm.Message{Role: "assistant", Content: resp.Content, ToolCalls: resp.ToolCalls})
			out.Messages = append(msgs, results...)
			return &out
		}
	}
	msgs = append(msgs, llm.Message{Role: "assistant", Content: resp.Content})
	if vs.unforced() {
		out.Messages = append(msgs, llm.Message{Role: "user", Content: vs.prompt("Your answer does not call the tool it must call:", "Answer again with the tool call.")})
		return &out
	}
	out.Messages = append(msgs, llm.Message{Role: "user", Content: vs.prompt("Your answer does not match the JSON schema it must follow:", "Answer again with only the corrected JSON.")})
	return &out
}

// unforced reports whether the violations include the missing call that
// tool_choice forces.
func (vs Violations) unforced() bool {
	for _, v := range vs {
		if v.Keyword == "tool_choice" {
			return true
		}
	}
	return false
}

// toolResults answers each call of a tool_calls array: the violations of
// its arguments, or that it was not run. ok is false when a call has no
// id to answer.
func toolResults(raw json.RawMessage, vs Violations) ([]llm.Message, bool) {
	var calls []struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &calls) != nil || len(calls) == 0 {
		return nil, false
	}
	out := make([]llm.Message, 0, len(calls))
	for i, c := range calls {
		if c.ID == "" {
			return nil, false
		}
		var mine Violations
		for _, v := range vs {
			if v.call == i {
				mine = append(mine, v)
			}
		}
		text := "Not run: another call of this turn had invalid arguments. Make the calls again."
		for _, v := range vs {
			if v.Keyword == "tool_choice" {
				text = "Not run: " + v.detail + "."
			}
		}
		if len(mine) > 0 {
			text = mine.prompt("Not run: the arguments do not match the tool's parameters:", "Call the tool again with arguments that match its parameters.")
		}
		out = append(out, llm.Message{Role: "tool", ToolCallID: c.ID, Content: text})
	}
	return out, true
}

// prompt lists the violations for the model, in the validator's words,
// between a head and a tail line.
func (vs Violations) prompt(head, tail string) string {
	var b strings.Builder
	b.WriteString(head)
	for i, v := range vs {
		if i == maxListed {
			b.WriteString("\n- and more")
			break
		}
		b.WriteString("\n- at ")
		b.WriteString(v.rawWhere())
		b.WriteString(": ")
		b.WriteString(v.detail)
	}
	b.WriteString("\n")
	b.WriteString(tail)
	return b.String()
}

// rawWhere is where a violation is, for the model: "(root)" for the whole
// value.
func (v Violation) rawWhere() string {
	if v.Path == "" {
		return "(root)"
	}
	return v.Path
}
