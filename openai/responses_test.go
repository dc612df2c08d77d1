package openai

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/llm"
)

func TestDecodeResponsesRequest(t *testing.T) {
	body := `{"model":"agent","instructions":"Be brief.","input":[
		{"role":"user","content":[{"type":"input_text","text":"What is this?"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}]},
		{"type":"reasoning","id":"rs_1","summary":[]},
		{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
		{"type":"function_call","call_id":"c2","name":"get_time","arguments":"{}"},
		{"type":"function_call_output","call_id":"c1","output":"{\"temp\":21}"},
		{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"noon"}]},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}],
		"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"},"strict":true}],
		"tool_choice":{"type":"function","name":"get_weather"},
		"text":{"format":{"type":"json_schema","name":"w","schema":{"type":"object"},"strict":true}},
		"max_output_tokens":300,"reasoning":{"effort":"low"},"temperature":0.5,"store":false,"stream":true,
		"metadata":{"k":"v"},"parallel_tool_calls":true,"include":["reasoning.encrypted_content"]}`
	rr, err := DecodeResponsesRequest([]byte(body), Limits{Messages: 10, ContentBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	r := rr.Request
	if rr.Model != "agent" || r.MaxTokens != 300 || r.ReasoningEffort != "low" || *r.Temperature != 0.5 || !r.Stream {
		t.Errorf("options: %+v", r)
	}
	roles := []string{}
	for _, m := range r.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "system user assistant tool tool assistant" {
		t.Fatalf("roles %q", got)
	}
	if m := r.Messages[1]; m.Content != "What is this?" || !strings.Contains(string(m.Parts), `{"image_url":{"detail":"low","url":"data:image/png;base64,iVBORw0KGgo="},"type":"image_url"}`) {
		t.Errorf("user message: %q %s", m.Content, m.Parts)
	}
	if m := r.Messages[2]; !strings.Contains(string(m.ToolCalls), `"id":"c1"`) || !strings.Contains(string(m.ToolCalls), `"id":"c2"`) {
		t.Errorf("parallel calls not one turn: %s", m.ToolCalls)
	}
	if m := r.Messages[4]; m.ToolCallID != "c2" || m.Content != "noon" {
		t.Errorf("tool output: %+v", m)
	}
	if got := string(r.ResponseFormat); got != `{"json_schema":{"name":"w","schema":{"type":"object"},"strict":true},"type":"json_schema"}` {
		t.Errorf("response_format %s", got)
	}
	if got := string(r.Extra["tools"]); got != `[{"function":{"name":"get_weather","parameters":{"type":"object"},"strict":true},"type":"function"}]` {
		t.Errorf("tools %s", got)
	}
	if got := string(r.Extra["tool_choice"]); got != `{"function":{"name":"get_weather"},"type":"function"}` {
		t.Errorf("tool_choice %s", got)
	}
	if string(rr.Echo["metadata"]) != `{"k":"v"}` {
		t.Errorf("echo %v", rr.Echo)
	}
	if n := r.Needs(); !n.Has(llm.NeedTools | llm.NeedVision) {
		t.Errorf("needs %b", n)
	}
}

func TestDecodeResponsesRefusals(t *testing.T) {
	for _, tc := range []struct{ body, param, says string }{
		{`{"model":"a","input":"x","previous_response_id":"resp_1"}`, "previous_response_id", "keeps none"},
		{`{"model":"a","input":"x","store":true}`, "store", "store: true"},
		{`{"model":"a","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0]", "item_reference"},
		{`{"model":"a","input":"x","tools":[{"type":"web_search"}]}`, "tools[0].type", "function tools only"},
		{`{"model":"a","input":"x","truncation":"auto"}`, "truncation", "never cuts"},
		{`{"model":"a","input":"x","frobnicate":1}`, "frobnicate", "not a parameter"},
		{`{"model":"a","input":[{"role":"user","content":[{"type":"input_image","file_id":"f1"}]}]}`, "input[0].content[0].image_url", "file_id"},
		{`{"model":"a","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id", "call_id"},
		{`{"model":"a"}`, "input", "input is required"},
		{`{"model":"a","input":"x","max_output_tokens":0}`, "max_output_tokens", "at least 1"},
		{`{"model":"a","input":"x","text":{"format":{"type":"yaml"}}}`, "text.format.type", "not a format"},
		{`[1]`, "", "JSON"},
	} {
		_, err := DecodeResponsesRequest([]byte(tc.body), Limits{})
		var re *RequestError
		if !errors.As(err, &re) || re.Param != tc.param || !strings.Contains(re.Message, tc.says) {
			t.Errorf("%s: %v (param %q), want %q saying %q", tc.body, err, paramOf(re), tc.param, tc.says)
		}
	}
}

func paramOf(re *RequestError) string {
	if re == nil {
		return ""
	}
	return re.Param
}

// TestResponseEvents: a streamed answer's chunks (reasoning, text, two
// calls' deltas) become the API's typed events, in order, numbered, each
// item added before its deltas and done before response.completed, whose
// output holds every item.
func TestResponseEvents(t *testing.T) {
	e := &ResponseEvents{Meta: ResponseMeta{ID: "r1", Model: "agent", Created: 1, Pass: true}}
	b := e.Start(nil)
	zero := 0
	for _, c := range []llm.Chunk{
		{Role: "assistant", Reasoning: "Think."},
		{Content: "Let me "},
		{Content: "check."},
		{ToolCalls: mustJSON([]chatCall{{Index: &zero, ID: "c1"}})},
		{ToolCalls: json.RawMessage(`[{"index":0,"function":{"arguments":"{\"a\":"}},{"index":1,"id":"c2","function":{"name":"g","arguments":"{}"}}]`)},
		{ToolCalls: json.RawMessage(`[{"index":0,"function":{"arguments":"1}"}}]`)},
	} {
		b = e.Chunk(b, c)
	}
	b = e.End(b, "tool_calls", llm.Usage{PromptTokens: 3, CompletionTokens: 4})
	var types []string
	var last map[string]any
	for i, ev := range strings.Split(strings.TrimSpace(string(b)), "\n\n") {
		head, data, _ := strings.Cut(ev, "\ndata: ")
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event %d: %v\n%s", i, err, ev)
		}
		if head != "event: "+m["type"].(string) || m["sequence_number"] != float64(i) {
			t.Fatalf("event %d: %s, sequence %v", i, head, m["sequence_number"])
		}
		types = append(types, m["type"].(string))
		last = m
	}
	want := "response.created response.in_progress response.output_item.added response.reasoning_summary_part.added response.reasoning_summary_text.delta " +
		"response.reasoning_summary_text.done response.reasoning_summary_part.done response.output_item.done " +
		"response.output_item.added response.content_part.added response.output_text.delta response.output_text.delta " +
		"response.output_text.done response.content_part.done response.output_item.done " +
		"response.output_item.added response.function_call_arguments.delta response.output_item.added response.function_call_arguments.delta response.function_call_arguments.delta " +
		"response.function_call_arguments.done response.output_item.done response.function_call_arguments.done response.output_item.done response.completed"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events:\n%s\nwant\n%s", got, want)
	}
	resp := last["response"].(map[string]any)
	out, _ := json.Marshal(resp["output"])
	for _, w := range []string{`"summary":[{"text":"Think.","type":"summary_text"}]`, `"text":"Let me check."`, `"arguments":"{\"a\":1}","call_id":"c1"`, `"call_id":"c2","id":"fc_r1_3","name":"g"`} {
		if !strings.Contains(string(out), w) {
			t.Errorf("final output lacks %s:\n%s", w, out)
		}
	}
	if resp["status"] != "completed" || resp["usage"].(map[string]any)["total_tokens"] != float64(7) {
		t.Errorf("final: %v", resp)
	}
	// A cut answer is incomplete; a broken one failed.
	e = &ResponseEvents{Meta: ResponseMeta{ID: "r2"}}
	b = e.End(e.Chunk(e.Start(nil), llm.Chunk{Content: "part"}), "length", llm.Usage{})
	if !strings.Contains(string(b), `event: response.incomplete`) || !strings.Contains(string(b), `"incomplete_details":{"reason":"max_output_tokens"}`) {
		t.Errorf("cut answer: %s", b)
	}
	e = &ResponseEvents{Meta: ResponseMeta{ID: "r3"}}
	b = e.Fail(e.Chunk(e.Start(nil), llm.Chunk{Content: "part"}), "server_error", "broke off")
	if !strings.Contains(string(b), `event: response.failed`) || !strings.Contains(string(b), `"error":{"code":"server_error","message":"broke off"}`) {
		t.Errorf("broken answer: %s", b)
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestAppendResponseObject(t *testing.T) {
	m := &ResponseMeta{ID: "r1", Model: "groq/x", Created: 7, Echo: map[string]json.RawMessage{"tools": json.RawMessage(`[{"type":"function","name":"f"}]`)}}
	b := AppendResponseObject(nil, m, &llm.Response{Content: "Hi", ToolCalls: json.RawMessage(`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]`), FinishReason: "tool_calls", Usage: llm.Usage{PromptTokens: 2, CompletionTokens: 3}})
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(r["output"])
	if r["id"] != "resp_r1" || r["object"] != "response" || r["status"] != "completed" || r["model"] != "groq/x" ||
		!strings.Contains(string(out), `"type":"message"`) || !strings.Contains(string(out), `"type":"function_call"`) || r["store"] != false {
		t.Errorf("response object: %s", b)
	}
}

func TestEmbeddingsCodec(t *testing.T) {
	er, err := DecodeEmbeddingsRequest([]byte(`{"model":"vectors","input":"hello","encoding_format":"base64","dimensions":4,"user":"u"}`), Limits{})
	if err != nil || er.Model != "vectors" || len(er.Request.Input) != 1 || !er.Base64 || er.Request.Dimensions != 4 || er.Request.User != "u" {
		t.Fatalf("decode: %+v %v", er, err)
	}
	for body, param := range map[string]string{
		`{"model":"v","input":[[1,2]]}`:                     "input",
		`{"model":"v","input":["a",""]}`:                    "input[1]",
		`{"model":"v","input":[]}`:                          "input",
		`{"model":"v","input":"a","encoding_format":"hex"}`: "encoding_format",
		`{"model":"v","input":"a","dimensions":0}`:          "dimensions",
		`{"model":"v","input":"a","truncate":"END"}`:        "truncate",
	} {
		var re *RequestError
		if _, err := DecodeEmbeddingsRequest([]byte(body), Limits{}); !errors.As(err, &re) || re.Param != param {
			t.Errorf("%s: %v, want a refusal of %s", body, err, param)
		}
	}
	v := [][]float32{{0.5, -0.25}, {1, 0}}
	var w struct {
		Data []struct {
			Index     int             `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(AppendEmbeddings(nil, "m", v, false, 5), &w); err != nil || string(w.Data[0].Embedding) != "[0.5,-0.25]" || w.Usage.PromptTokens != 5 {
		t.Errorf("floats: %+v %v", w, err)
	}
	if err := json.Unmarshal(AppendEmbeddings(nil, "m", v, true, 5), &w); err != nil {
		t.Fatal(err)
	}
	var s string
	json.Unmarshal(w.Data[0].Embedding, &s)
	raw, _ := base64.StdEncoding.DecodeString(s)
	if len(raw) != 8 || math.Float32frombits(binary.LittleEndian.Uint32(raw[4:])) != -0.25 {
		t.Errorf("base64: %q", s)
	}
}

// FuzzDecodeResponsesRequest: any body gets a request or a *RequestError,
// never a panic; a request has a message.
func FuzzDecodeResponsesRequest(f *testing.F) {
	f.Add([]byte(`{"model":"a","input":"hi"}`))
	f.Add([]byte(`{"model":"a","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"1"}],"tools":[{"type":"function","name":"f"}],"tool_choice":"required"}`))
	f.Add([]byte(`{"input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x"}]}],"text":{"format":{"type":"json_schema","schema":{}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		rr, err := DecodeResponsesRequest(body, Limits{Messages: 50, ContentBytes: 1 << 16})
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("%T: %v", err, err)
			}
			return
		}
		if len(rr.Request.Messages) == 0 {
			t.Fatal("a request without messages")
		}
	})
}

// FuzzDecodeEmbeddingsRequest: any body gets a request or a
// *RequestError; a request has inputs, none empty.
func FuzzDecodeEmbeddingsRequest(f *testing.F) {
	f.Add([]byte(`{"model":"v","input":["a","b"],"dimensions":8}`))
	f.Add([]byte(`{"model":"v","input":"a","encoding_format":"base64"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		er, err := DecodeEmbeddingsRequest(body, Limits{ContentBytes: 1 << 16})
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("%T: %v", err, err)
			}
			return
		}
		for _, s := range er.Request.Input {
			if s == "" {
				t.Fatal("an empty input")
			}
		}
	})
}
