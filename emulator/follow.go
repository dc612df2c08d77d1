package emulator

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// What a request asks beyond text (issue 33), read from either dialect:
// its function tools and tool choice, whether it ends with a tool's result,
// its JSON schema, and the images and audio it carries. A model with
// Model.Follows answers as a capable model would: a call of one of the
// tools (the named one, else the first) with arguments made from its
// parameters, or, after a tool's result, a sentence that quotes it; an
// instance of the schema; a sentence that names the image it was shown.
// That is what the end-to-end tests with real clients and the keyless demo
// need from a model, without a model. A model without Follows answers its
// text, as before; a step's Text or ToolCalls always wins.

// asked is what one call asks beyond text.
type asked struct {
	tools      []toolDecl
	choice     string // "", auto, none, required, or a function's name
	afterTool  bool   // the last message is a tool's result
	toolResult string // that result's text
	schema     any    // a JSON schema the answer must match; nil for none
	jsonObject bool   // JSON mode
	images     []string
	audio      int
}

// toolDecl is one function tool.
type toolDecl struct {
	name   string
	params any // its parameters schema, decoded; nil for none
}

// emuCall is one function call the model answers with.
type emuCall struct {
	id, name, args string
}

// openAIAsk reads what an OpenAI chat request asks.
func openAIAsk(top map[string]json.RawMessage) asked {
	var a asked
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if json.Unmarshal(top["tools"], &tools) == nil {
		for _, t := range tools {
			if t.Type == "function" && t.Function.Name != "" {
				a.tools = append(a.tools, toolDecl{name: t.Function.Name, params: decodeAny(t.Function.Parameters)})
			}
		}
	}
	var s string
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	switch {
	case json.Unmarshal(top["tool_choice"], &s) == nil:
		a.choice = s
	case json.Unmarshal(top["tool_choice"], &named) == nil:
		a.choice = named.Function.Name
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(top["response_format"], &rf) == nil {
		switch rf.Type {
		case FormatJSONSchema:
			a.schema = decodeAny(rf.JSONSchema.Schema)
			a.jsonObject = a.schema == nil
		case FormatJSONObject:
			a.jsonObject = true
		}
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(top["messages"], &msgs)
	for i, m := range msgs {
		if i == len(msgs)-1 && m.Role == "tool" {
			a.afterTool = true
			a.toolResult, _ = contentText(m.Content)
		}
		var parts []struct {
			Type     string `json:"type"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if json.Unmarshal(m.Content, &parts) != nil {
			continue
		}
		for _, p := range parts {
			switch p.Type {
			case "image_url":
				a.images = append(a.images, describeURL(p.ImageURL.URL))
			case "input_audio":
				a.audio++
			}
		}
	}
	return a
}

// describeURL says what an image URL is, without its bytes: "an image/png
// of 67 bytes", or "an image at example.com".
func describeURL(u string) string {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, _ := strings.Cut(rest, ",")
		mime, _, _ := strings.Cut(meta, ";")
		n := len(data)
		if b, err := base64.StdEncoding.DecodeString(data); err == nil {
			n = len(b)
		}
		return fmt.Sprintf("an %s of %d bytes", mime, n)
	}
	host := u
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	host, _, _ = strings.Cut(host, "/")
	return "an image at " + host
}

func describeBlob(mime, data string) string {
	n := len(data)
	if b, err := base64.StdEncoding.DecodeString(data); err == nil {
		n = len(b)
	}
	return fmt.Sprintf("an %s of %d bytes", mime, n)
}

// decodeAny decodes JSON, with numbers kept as json.Number; nil for
// nothing or JSON that does not parse.
func decodeAny(raw json.RawMessage) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// follow sets the call's answer as a model that follows the request would
// give it: a tool call, a schema's instance, a sentence about the tool's
// result or the image. It reports whether it set one.
func (c *call) follow() bool {
	a := &c.ask
	switch {
	case len(a.tools) > 0 && a.choice != "none" && !a.afterTool:
		t := a.tools[0]
		for _, d := range a.tools {
			if d.name == a.choice {
				t = d
			}
		}
		args := compact(sample(t.params, t.params, 0))
		c.calls = []emuCall{{id: fmt.Sprintf("call_emu%08d", c.seq), name: t.name, args: string(args)}}
		c.answer = ""
		c.finish = "tool_calls"
	case a.schema != nil:
		c.answer = string(compact(sample(a.schema, a.schema, 0)))
	case a.jsonObject:
		if sch := schemaInWords(c.turns); sch != nil {
			// JSON mode with the schema put in words, as the gateway asks
			// a route that cannot enforce one: follow the words.
			c.answer = string(compact(sample(sch, sch, 0)))
			break
		}
		c.answer = string(compact(obj{{"answer", defaultAnswer(c.prov.Name, c.modelID)}}))
	case a.afterTool:
		c.answer = "The tool answered: " + a.toolResult
	case len(a.images) > 0 || a.audio > 0:
		var seen []string
		seen = append(seen, a.images...)
		if a.audio > 0 {
			seen = append(seen, fmt.Sprintf("%d audio clip(s)", a.audio))
		}
		c.answer = "I was shown " + strings.Join(seen, " and ") + "; this answer comes from " + c.prov.Name + "/" + c.modelID + "."
	default:
		return false
	}
	return true
}

// toolCallsJSON is the call's function calls as OpenAI's tool_calls.
func (c *call) toolCallsJSON() json.RawMessage {
	if c.step.ToolCalls != "" {
		return json.RawMessage(c.step.ToolCalls)
	}
	if len(c.calls) == 0 {
		return nil
	}
	out := make([]obj, len(c.calls))
	for i, tc := range c.calls {
		out[i] = obj{{"id", tc.id}, {"type", "function"}, {"function", obj{{"name", tc.name}, {"arguments", tc.args}}}}
	}
	return compact(out)
}

// functionCalls is the call's function calls as Gemini's functionCall
// parts: a scripted step's OpenAI tool_calls, or the model's own.
func (c *call) functionCalls() []emuCall {
	if c.step.ToolCalls == "" {
		return c.calls
	}
	var tcs []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	_ = json.Unmarshal([]byte(c.step.ToolCalls), &tcs)
	var out []emuCall
	for _, tc := range tcs {
		out = append(out, emuCall{id: tc.ID, name: tc.Function.Name, args: tc.Function.Arguments})
	}
	return out
}

// sample makes a value that matches schema (root resolves local $refs):
// the first of an enum or a const, every property of an object (sorted),
// one item of an array, the first branch of anyOf or oneOf, and for a
// bare type a value that meets its bounds. It is deterministic.
func sample(schema, root any, depth int) any {
	s, ok := schema.(map[string]any)
	if !ok || depth > 16 {
		return map[string]any{}
	}
	if ref, ok := s["$ref"].(string); ok {
		return sample(resolveRef(root, ref), root, depth+1)
	}
	if v, ok := s["const"]; ok {
		return v
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if l, ok := s[k].([]any); ok && len(l) > 0 {
			if k == "allOf" {
				merged := map[string]any{}
				for _, sub := range l {
					if m, ok := sample(sub, root, depth+1).(map[string]any); ok {
						for kk, vv := range m {
							merged[kk] = vv
						}
					}
				}
				return merged
			}
			return sample(l[0], root, depth+1)
		}
	}
	typ := s["type"]
	if l, ok := typ.([]any); ok && len(l) > 0 {
		typ = l[0]
		for _, t := range l {
			if t != "null" {
				typ = t
				break
			}
		}
	}
	switch typ {
	case "string":
		str := "example"
		if f, _ := s["format"].(string); f == "date-time" {
			str = "2026-01-01T00:00:00Z"
		} else if f == "date" {
			str = "2026-01-01"
		} else if f == "email" {
			str = "someone@example.com"
		} else if f == "uri" || f == "url" {
			str = "https://example.com/"
		}
		if n, ok := num(s["minLength"]); ok && len(str) < int(n) {
			str += strings.Repeat("x", int(n)-len(str))
		}
		if n, ok := num(s["maxLength"]); ok && len(str) > int(n) {
			str = str[:int(n)]
		}
		return str
	case "integer", "number":
		v := 1.0
		if n, ok := num(s["minimum"]); ok && v < n {
			v = n
		}
		if n, ok := num(s["exclusiveMinimum"]); ok && v <= n {
			v = n + 1
		}
		if n, ok := num(s["maximum"]); ok && v > n {
			v = n
		}
		if typ == "integer" {
			return json.Number(fmt.Sprint(int64(v)))
		}
		return json.Number(fmt.Sprint(v))
	case "boolean":
		return true
	case "null":
		return nil
	case "array":
		n := 1
		if m, ok := num(s["minItems"]); ok && int(m) > n {
			n = int(m)
		}
		if m, ok := num(s["maxItems"]); ok && int(m) < n {
			n = int(m)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = sample(s["items"], root, depth+1)
		}
		return out
	}
	// An object, or a schema that says no type.
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make(map[string]any, len(names))
	for _, k := range names {
		out[k] = sample(props[k], root, depth+1)
	}
	return out
}

// resolveRef follows a local "#/..." reference in root; nil elsewhere.
func resolveRef(root any, ref string) any {
	path, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	cur := root
	for _, tok := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	return cur
}

func num(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// schemaInWords finds a JSON schema a conversation gives in words: the
// JSON object after "schema" in a message ("Answer with JSON matching this
// schema, and nothing else: {...}"), the last one given.
func schemaInWords(turns []Turn) any {
	for i := len(turns) - 1; i >= 0; i-- {
		text := turns[i].Text
		at := strings.LastIndex(strings.ToLower(text), "schema")
		if at < 0 {
			continue
		}
		rest := text[at:]
		j := strings.IndexByte(rest, '{')
		if j < 0 {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(rest[j:]))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			if m, ok := v.(map[string]any); ok {
				return m
			}
		}
	}
	return nil
}
