package openai

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/tollfree/tollfree/llm"
)

// What the Responses API answers (issue 33): a response object, whole, or
// as typed server-sent events: response.created and response.in_progress,
// then for each output item its output_item.added, its content (a message's
// content_part.added, output_text.delta... output_text.done,
// content_part.done; a function call's function_call_arguments.delta...
// .done; a reasoning summary's reasoning_summary_part.added,
// reasoning_summary_text.delta... .done, reasoning_summary_part.done) and
// its output_item.done, and last response.completed (response.incomplete
// for an answer cut by max_output_tokens or a content filter), or
// response.failed for an answer that broke off. Every event carries its
// type and a sequence_number. The shapes are those of OpenAI's API
// reference (https://platform.openai.com/docs/api-reference/responses and
// responses-streaming).

// ResponseMeta is what a response object says besides the answer.
type ResponseMeta struct {
	// ID is the request's id: the response is "resp_"+ID, its items
	// "msg_"+ID+"_n"...
	ID      string
	Model   string
	Created int64
	// Echo is the request's fields repeated (ResponsesRequest.Echo).
	Echo map[string]json.RawMessage
	// Pass puts the answer's reasoning in a reasoning item's summary; it
	// is left out otherwise (the chain's reasoning: drop).
	Pass bool
}

// respObject is a response object, its fields in the API reference's order.
type respObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Background         bool              `json:"background"`
	Error              json.RawMessage   `json:"error"`
	IncompleteDetails  json.RawMessage   `json:"incomplete_details"`
	Instructions       json.RawMessage   `json:"instructions"`
	MaxOutputTokens    json.RawMessage   `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []json.RawMessage `json:"output"`
	ParallelToolCalls  json.RawMessage   `json:"parallel_tool_calls"`
	PreviousResponseID json.RawMessage   `json:"previous_response_id"`
	Reasoning          json.RawMessage   `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        json.RawMessage   `json:"temperature"`
	Text               json.RawMessage   `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              json.RawMessage   `json:"tools"`
	TopP               json.RawMessage   `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              json.RawMessage   `json:"usage"`
	User               json.RawMessage   `json:"user"`
	Metadata           json.RawMessage   `json:"metadata"`
}

var jsonNull = json.RawMessage("null")

func (m *ResponseMeta) echo(k, def string) json.RawMessage {
	if v, ok := m.Echo[k]; ok {
		return v
	}
	return json.RawMessage(def)
}

// object is the response object with status, output and usage (nil for
// none yet).
func (m *ResponseMeta) object(status string, output []json.RawMessage, usage *llm.Usage, finish string, failure json.RawMessage) respObject {
	if output == nil {
		output = []json.RawMessage{}
	}
	o := respObject{
		ID: "resp_" + m.ID, Object: "response", CreatedAt: m.Created, Status: status,
		Error: jsonNull, IncompleteDetails: jsonNull,
		Instructions: m.echo("instructions", "null"), MaxOutputTokens: m.echo("max_output_tokens", "null"),
		Model: m.Model, Output: output,
		ParallelToolCalls: m.echo("parallel_tool_calls", "true"), PreviousResponseID: jsonNull,
		Reasoning:   m.echo("reasoning", `{"effort":null,"summary":null}`),
		Temperature: m.echo("temperature", "1"), Text: m.echo("text", `{"format":{"type":"text"}}`),
		ToolChoice: m.echo("tool_choice", `"auto"`), Tools: m.echo("tools", "[]"), TopP: m.echo("top_p", "1"),
		Truncation: "disabled", Usage: jsonNull, User: m.echo("user", "null"), Metadata: m.echo("metadata", "{}"),
	}
	if failure != nil {
		o.Error = failure
	}
	if reason := incompleteReason(finish); reason != "" && status == "incomplete" {
		o.IncompleteDetails, _ = json.Marshal(map[string]string{"reason": reason})
	}
	if usage != nil {
		o.Usage, _ = json.Marshal(map[string]any{
			"input_tokens":          usage.PromptTokens,
			"input_tokens_details":  map[string]int{"cached_tokens": usage.CachedTokens},
			"output_tokens":         usage.CompletionTokens,
			"output_tokens_details": map[string]int{"reasoning_tokens": usage.ReasoningTokens},
			"total_tokens":          usage.PromptTokens + usage.CompletionTokens,
		})
	}
	return o
}

// incompleteReason is why an answer that finished so is incomplete: "" for
// a complete one.
func incompleteReason(finish string) string {
	switch finish {
	case "length":
		return "max_output_tokens"
	case "content_filter":
		return "content_filter"
	}
	return ""
}

// statusOf is a finished answer's status.
func statusOf(finish string) string {
	if incompleteReason(finish) != "" {
		return "incomplete"
	}
	return "completed"
}

// chatCall is one call of a chat answer's tool_calls.
type chatCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func (m *ResponseMeta) itemID(prefix string, n int) string {
	return prefix + "_" + m.ID + "_" + strconv.Itoa(n)
}

func messageItem(id, status, text string) json.RawMessage {
	content := []any{}
	if status == "completed" {
		content = []any{outputTextPart(text)}
	}
	b, _ := json.Marshal(struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Status  string `json:"status"`
		Role    string `json:"role"`
		Content []any  `json:"content"`
	}{id, "message", status, "assistant", content})
	return b
}

func outputTextPart(text string) any {
	return struct {
		Type        string `json:"type"`
		Annotations []any  `json:"annotations"`
		Logprobs    []any  `json:"logprobs"`
		Text        string `json:"text"`
	}{"output_text", []any{}, []any{}, text}
}

func functionItem(id, status, callID, name, args string) json.RawMessage {
	b, _ := json.Marshal(struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		Status    string `json:"status"`
		Arguments string `json:"arguments"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
	}{id, "function_call", status, args, callID, name})
	return b
}

func reasoningItem(id, text string) json.RawMessage {
	summary := []any{}
	if text != "" {
		summary = append(summary, summaryPart(text))
	}
	b, _ := json.Marshal(struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Summary []any  `json:"summary"`
	}{id, "reasoning", summary})
	return b
}

func summaryPart(text string) any {
	return struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"summary_text", text}
}

// AppendResponseObject appends the response object of a whole answer.
func AppendResponseObject(dst []byte, m *ResponseMeta, r *llm.Response) []byte {
	var out []json.RawMessage
	n := 0
	if m.Pass && r.Reasoning != "" {
		out = append(out, reasoningItem(m.itemID("rs", n), r.Reasoning))
		n++
	}
	if r.Content != "" {
		out = append(out, messageItem(m.itemID("msg", n), "completed", r.Content))
		n++
	}
	var calls []chatCall
	_ = json.Unmarshal(r.ToolCalls, &calls)
	for _, c := range calls {
		out = append(out, functionItem(m.itemID("fc", n), "completed", c.ID, c.Function.Name, c.Function.Arguments))
		n++
	}
	u := r.Usage
	b, _ := json.Marshal(m.object(statusOf(r.FinishReason), out, &u, r.FinishReason, nil))
	return append(dst, b...)
}

// ResponseEvents writes a streamed answer as the Responses API's typed
// events. Use it from one goroutine: Start, then Chunk for each chunk,
// then End or Fail.
type ResponseEvents struct {
	Meta ResponseMeta

	seq   int
	items []json.RawMessage // the output items done, in order
	n     int               // output items begun
	// The item open for text (a message) or reasoning: -1 for none.
	textAt, rsAt int
	text, rs     []byte
	// calls are the function calls begun, by their chat delta index, in
	// the order they began.
	calls map[int]*openCall
	order []int
}

type openCall struct {
	at         int
	id, callID string
	name       string
	args       []byte
}

// event appends one event: its type and sequence number first, then the
// fields given (a JSON object's members, without braces).
func (e *ResponseEvents) event(dst []byte, typ string, fields ...any) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, typ...)
	dst = append(dst, "\ndata: {\"type\":"...)
	dst = appendString(dst, typ)
	dst = append(dst, `,"sequence_number":`...)
	dst = strconv.AppendInt(dst, int64(e.seq), 10)
	e.seq++
	for i := 0; i+1 < len(fields); i += 2 {
		dst = append(dst, ',')
		dst = appendString(dst, fields[i].(string))
		dst = append(dst, ':')
		switch v := fields[i+1].(type) {
		case string:
			dst = appendString(dst, v)
		case int:
			dst = strconv.AppendInt(dst, int64(v), 10)
		case json.RawMessage:
			dst = append(dst, v...)
		default:
			b, _ := json.Marshal(v)
			dst = append(dst, b...)
		}
	}
	return append(dst, "}\n\n"...)
}

// Start appends response.created and response.in_progress.
func (e *ResponseEvents) Start(dst []byte) []byte {
	e.textAt, e.rsAt, e.calls = -1, -1, map[int]*openCall{}
	o, _ := json.Marshal(e.Meta.object("in_progress", nil, nil, "", nil))
	dst = e.event(dst, "response.created", "response", json.RawMessage(o))
	return e.event(dst, "response.in_progress", "response", json.RawMessage(o))
}

// Chunk appends the events of one chunk of the answer.
func (e *ResponseEvents) Chunk(dst []byte, c llm.Chunk) []byte {
	if c.Reasoning != "" && e.Meta.Pass {
		if e.rsAt < 0 {
			dst = e.closeText(dst)
			e.rsAt, e.rs = e.n, e.rs[:0]
			e.n++
			id := e.Meta.itemID("rs", e.rsAt)
			dst = e.event(dst, "response.output_item.added", "output_index", e.rsAt, "item", reasoningItem(id, ""))
			dst = e.event(dst, "response.reasoning_summary_part.added", "item_id", id, "output_index", e.rsAt, "summary_index", 0, "part", summaryPart(""))
		}
		e.rs = append(e.rs, c.Reasoning...)
		dst = e.event(dst, "response.reasoning_summary_text.delta", "item_id", e.Meta.itemID("rs", e.rsAt), "output_index", e.rsAt, "summary_index", 0, "delta", c.Reasoning)
	}
	if c.Content != "" {
		if e.textAt < 0 {
			dst = e.closeReasoning(dst)
			e.textAt, e.text = e.n, e.text[:0]
			e.n++
			id := e.Meta.itemID("msg", e.textAt)
			dst = e.event(dst, "response.output_item.added", "output_index", e.textAt, "item", messageItem(id, "in_progress", ""))
			dst = e.event(dst, "response.content_part.added", "item_id", id, "output_index", e.textAt, "content_index", 0, "part", outputTextPart(""))
		}
		e.text = append(e.text, c.Content...)
		dst = e.event(dst, "response.output_text.delta", "item_id", e.Meta.itemID("msg", e.textAt), "output_index", e.textAt, "content_index", 0, "delta", c.Content, "logprobs", json.RawMessage("[]"))
	}
	if len(c.ToolCalls) > 0 {
		var calls []chatCall
		_ = json.Unmarshal(c.ToolCalls, &calls)
		for i, tc := range calls {
			idx := i
			if tc.Index != nil {
				idx = *tc.Index
			}
			oc := e.calls[idx]
			if oc == nil {
				dst = e.closeReasoning(e.closeText(dst))
				oc = &openCall{at: e.n, id: e.Meta.itemID("fc", e.n), callID: tc.ID, name: tc.Function.Name}
				e.n++
				e.calls[idx] = oc
				e.order = append(e.order, idx)
				dst = e.event(dst, "response.output_item.added", "output_index", oc.at, "item", functionItem(oc.id, "in_progress", oc.callID, oc.name, ""))
			}
			if a := tc.Function.Arguments; a != "" {
				oc.args = append(oc.args, a...)
				dst = e.event(dst, "response.function_call_arguments.delta", "item_id", oc.id, "output_index", oc.at, "delta", a)
			}
		}
	}
	return dst
}

// closeText ends the open message item.
func (e *ResponseEvents) closeText(dst []byte) []byte {
	if e.textAt < 0 {
		return dst
	}
	at, id, text := e.textAt, e.Meta.itemID("msg", e.textAt), string(e.text)
	dst = e.event(dst, "response.output_text.done", "item_id", id, "output_index", at, "content_index", 0, "text", text, "logprobs", json.RawMessage("[]"))
	dst = e.event(dst, "response.content_part.done", "item_id", id, "output_index", at, "content_index", 0, "part", outputTextPart(text))
	item := messageItem(id, "completed", text)
	dst = e.event(dst, "response.output_item.done", "output_index", at, "item", item)
	e.done(at, item)
	e.textAt = -1
	return dst
}

// closeReasoning ends the open reasoning item.
func (e *ResponseEvents) closeReasoning(dst []byte) []byte {
	if e.rsAt < 0 {
		return dst
	}
	at, id, text := e.rsAt, e.Meta.itemID("rs", e.rsAt), string(e.rs)
	dst = e.event(dst, "response.reasoning_summary_text.done", "item_id", id, "output_index", at, "summary_index", 0, "text", text)
	dst = e.event(dst, "response.reasoning_summary_part.done", "item_id", id, "output_index", at, "summary_index", 0, "part", summaryPart(text))
	item := reasoningItem(id, text)
	dst = e.event(dst, "response.output_item.done", "output_index", at, "item", item)
	e.done(at, item)
	e.rsAt = -1
	return dst
}

// done files a finished item at its output index.
func (e *ResponseEvents) done(at int, item json.RawMessage) {
	for len(e.items) <= at {
		e.items = append(e.items, nil)
	}
	e.items[at] = item
}

// End appends the end of an answer that finished (finish is its chat
// finish_reason): every item still open, then response.completed, or
// response.incomplete for one cut by max_output_tokens or a filter.
func (e *ResponseEvents) End(dst []byte, finish string, usage llm.Usage) []byte {
	dst = e.closeReasoning(e.closeText(dst))
	sort.Ints(e.order)
	for _, idx := range e.order {
		oc := e.calls[idx]
		dst = e.event(dst, "response.function_call_arguments.done", "item_id", oc.id, "output_index", oc.at, "name", oc.name, "arguments", string(oc.args))
		item := functionItem(oc.id, "completed", oc.callID, oc.name, string(oc.args))
		dst = e.event(dst, "response.output_item.done", "output_index", oc.at, "item", item)
		e.done(oc.at, item)
	}
	out := make([]json.RawMessage, 0, len(e.items))
	for _, it := range e.items {
		if it != nil {
			out = append(out, it)
		}
	}
	status := statusOf(finish)
	o, _ := json.Marshal(e.Meta.object(status, out, &usage, finish, nil))
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	return e.event(dst, typ, "response", json.RawMessage(o))
}

// Fail appends response.failed for an answer that broke off: the items
// done so far, and the error (code and message).
func (e *ResponseEvents) Fail(dst []byte, code, msg string) []byte {
	out := make([]json.RawMessage, 0, len(e.items))
	for _, it := range e.items {
		if it != nil {
			out = append(out, it)
		}
	}
	errObj, _ := json.Marshal(map[string]string{"code": code, "message": msg})
	o, _ := json.Marshal(e.Meta.object("failed", out, nil, "", errObj))
	return e.event(dst, "response.failed", "response", json.RawMessage(o))
}

// AppendResponsesErrorEvent appends the Responses API's error event: what
// a stream whose status was already sent gets for a request that failed
// before its response began.
func AppendResponsesErrorEvent(dst []byte, code, msg, param string) []byte {
	var p any
	if param != "" {
		p = param
	}
	b, _ := json.Marshal(struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		Code           string `json:"code"`
		Message        string `json:"message"`
		Param          any    `json:"param"`
	}{"error", 0, code, msg, p})
	dst = append(dst, "event: error\ndata: "...)
	dst = append(dst, b...)
	return append(dst, "\n\n"...)
}
