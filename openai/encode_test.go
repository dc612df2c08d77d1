package openai

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

func TestAppendRequest(t *testing.T) {
	base := &llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: "be \"brief\"\n"},
			{Role: "user", Content: "look", Parts: json.RawMessage(`[{"type":"text","text":"look"}]`), Name: "ann"},
			{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"c1"}]`)},
			{Role: "tool", Content: "sunny", ToolCallID: "c1"},
			{Role: "assistant", Content: "Once", Prefix: true},
		},
		MaxTokens:       100,
		Temperature:     ptr(0.2),
		TopP:            ptr(1.0),
		Stop:            []string{"END"},
		Seed:            ptr(int64(-3)),
		ResponseFormat:  json.RawMessage(`{"type":"json_object"}`),
		ReasoningEffort: "low",
		User:            "u",
		Extra:           map[string]json.RawMessage{"tools": json.RawMessage(`[]`), "logprobs": json.RawMessage(`true`), "top_k": json.RawMessage(`5`)},
	}
	streamed := *base
	streamed.Stream, streamed.IncludeUsage = true, true
	tests := []struct {
		name  string
		req   *llm.Request
		extra map[string]json.RawMessage
		want  string
	}{
		{
			name: "minimal",
			req:  &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}},
			want: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		},
		{
			name: "everything",
			req:  base,
			want: `{"model":"m","messages":[{"role":"system","content":"be \"brief\"\n"},{"role":"user","content":[{"type":"text","text":"look"}],"name":"ann"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"c1"}]},{"role":"tool","content":"sunny","tool_call_id":"c1"},` +
				`{"role":"assistant","content":"Once","prefix":true}],` +
				`"max_tokens":100,"temperature":0.2,"top_p":1,"stop":["END"],"seed":-3,"response_format":{"type":"json_object"},` +
				`"reasoning_effort":"low","user":"u","logprobs":true,"tools":[],"top_k":5}`,
		},
		{
			name: "stream with usage",
			req:  &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}, Stream: true, IncludeUsage: true},
			want: `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "route extra overrides, null removes, cannot touch adapter fields",
			req:  &streamed,
			extra: map[string]json.RawMessage{
				"temperature": json.RawMessage(`0.7`), "top_p": json.RawMessage(`null`), "top_k": json.RawMessage(`9`),
				"reasoning_format": json.RawMessage(`"parsed"`), "stream": json.RawMessage(`false`), "model": json.RawMessage(`"x"`),
				"logprobs": json.RawMessage(`null`),
			},
			want: `{"model":"m","messages":[{"role":"system","content":"be \"brief\"\n"},{"role":"user","content":[{"type":"text","text":"look"}],"name":"ann"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"c1"}]},{"role":"tool","content":"sunny","tool_call_id":"c1"},` +
				`{"role":"assistant","content":"Once","prefix":true}],` +
				`"max_tokens":100,"stop":["END"],"seed":-3,"response_format":{"type":"json_object"},` +
				`"reasoning_effort":"low","user":"u","stream":true,"stream_options":{"include_usage":true},"tools":[],` +
				`"reasoning_format":"parsed","temperature":0.7,"top_k":9}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendRequest([]byte("keep"), "m", tt.req, tt.extra))
			if got != "keep"+tt.want {
				t.Errorf("got  %s\nwant keep%s", got, tt.want)
			}
			if !json.Valid([]byte(got[4:])) {
				t.Errorf("not valid JSON")
			}
		})
	}
}

func TestAppendRequestRoundTrip(t *testing.T) {
	body := []byte(`{"model":"x","messages":[{"role":"user","content":"hi ✓"}],"temperature":1e-7,"stop":["a"],"tools":[{"type":"x","a":1}]}`)
	req, _, err := DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := DecodeRequest(AppendRequest(nil, "x", req, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(req, again) {
		t.Errorf("round trip changed the request:\n got %+v\nwant %+v", again, req)
	}
}

func TestDecodeResponse(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *llm.Response
	}{
		{
			name: "groq with reasoning and usage details",
			body: `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"openai/gpt-oss-20b","choices":[{"index":0,"message":{"role":"assistant","content":"Hello","reasoning":"User greets."},"finish_reason":"stop"}],` +
				`"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"completion_tokens_details":{"reasoning_tokens":3},"prompt_tokens_details":{"cached_tokens":4}},"x_groq":{"id":"req_1"}}`,
			want: &llm.Response{ID: "chatcmpl-1", Model: "openai/gpt-oss-20b", Created: 1700000000, Content: "Hello", Reasoning: "User greets.", FinishReason: "stop",
				Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15, ReasoningTokens: 3, CachedTokens: 4}, UsageKnown: true},
		},
		{
			name: "reasoning_content, total computed",
			body: `{"choices":[{"message":{"content":"4","reasoning_content":"2+2"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
			want: &llm.Response{Content: "4", Reasoning: "2+2", FinishReason: "stop", Usage: llm.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}, UsageKnown: true},
		},
		{
			name: "think block stripped",
			body: `{"choices":[{"message":{"content":"<think>\nhmm\n</think>\n\nAnswer."},"finish_reason":"stop"}]}`,
			want: &llm.Response{Content: "Answer.", Reasoning: "hmm", FinishReason: "stop"},
		},
		{
			name: "closing think tag only",
			body: `{"choices":[{"message":{"content":"hmm\n</think>\n\nAnswer."},"finish_reason":"stop"}]}`,
			want: &llm.Response{Content: "Answer.", Reasoning: "hmm", FinishReason: "stop"},
		},
		{
			name: "tool calls without content",
			body: `{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c1"}]},"finish_reason":"tool_calls"}]}`,
			want: &llm.Response{ToolCalls: json.RawMessage(`[{"id":"c1"}]`), FinishReason: "tool_calls"},
		},
		{
			name: "mistral content parts with thinking",
			body: `{"choices":[{"message":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"plan"}]},{"type":"text","text":"Done."}]},"finish_reason":"stop"}]}`,
			want: &llm.Response{Content: "Done.", Reasoning: "plan", FinishReason: "stop"},
		},
		{
			name: "a field of the wrong type is tolerated",
			body: `{"created":"yesterday","choices":[{"message":{"content":"ok"}}]}`,
			want: &llm.Response{Content: "ok"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeResponse([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeResponseErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		want error
	}{
		{"not JSON", `<html>bad gateway</html>`, failure.ErrMalformed},
		{"cut short", `{"choices":[{"message":{"content":"hel`, failure.ErrMalformed},
		{"empty body", ``, failure.ErrMalformed},
		{"no choices", `{"choices":[],"usage":{"prompt_tokens":3}}`, failure.ErrEmptyAnswer},
		{"error object with 200", `{"error":{"message":"overloaded"}}`, failure.ErrEmptyAnswer},
		{"empty content", `{"choices":[{"message":{"content":""},"finish_reason":"stop"}]}`, failure.ErrEmptyAnswer},
		{"whitespace content", `{"choices":[{"message":{"content":" \n\t"},"finish_reason":"stop"}]}`, failure.ErrEmptyAnswer},
		{"only reasoning", `{"choices":[{"message":{"content":null,"reasoning":"long thought"},"finish_reason":"length"}]}`, failure.ErrEmptyAnswer},
		{"only a think block", `{"choices":[{"message":{"content":"<think>x</think>"},"finish_reason":"length"}]}`, failure.ErrEmptyAnswer},
		{"null tool calls", `{"choices":[{"message":{"content":"","tool_calls":null}}]}`, failure.ErrEmptyAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeResponse([]byte(tt.body))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.want == failure.ErrEmptyAnswer && r == nil {
				t.Errorf("response = nil, want the decoded response with an empty answer")
			}
		})
	}
	r, _ := DecodeResponse([]byte(`{"choices":[],"usage":{"prompt_tokens":3}}`))
	if !r.UsageKnown || r.Usage.PromptTokens != 3 {
		t.Errorf("usage of an empty answer = %+v, want prompt_tokens 3", r.Usage)
	}
}

func TestAppendResponse(t *testing.T) {
	tests := []struct {
		name          string
		r             *llm.Response
		withReasoning bool
		want          string
	}{
		{
			name:          "full",
			r:             &llm.Response{Content: "Hi\n", Reasoning: "greet", FinishReason: "stop", Usage: llm.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3, ReasoningTokens: 1, CachedTokens: 1}, UsageKnown: true},
			withReasoning: true,
			want: `{"id":"id1","object":"chat.completion","created":42,"model":"answer","choices":[{"index":0,"message":{"role":"assistant","content":"Hi\n","reasoning_content":"greet"},"finish_reason":"stop"}],` +
				`"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":{"cached_tokens":1},"completion_tokens_details":{"reasoning_tokens":1}}}`,
		},
		{
			name: "no reasoning, no usage, default finish",
			r:    &llm.Response{Content: "Hi", Reasoning: "greet"},
			want: `{"id":"id1","object":"chat.completion","created":42,"model":"answer","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}`,
		},
		{
			name: "tool calls",
			r:    &llm.Response{ToolCalls: json.RawMessage(`[{"id":"c"}]`), FinishReason: "tool_calls"},
			want: `{"id":"id1","object":"chat.completion","created":42,"model":"answer","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c"}]},"finish_reason":"tool_calls"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendResponse(nil, "id1", "answer", 42, tt.r, tt.withReasoning))
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestAppendErrors(t *testing.T) {
	if got, want := string(AppendError(nil, `bad "x"`, "invalid_request_error", "temperature", "")),
		`{"error":{"message":"bad \"x\"","type":"invalid_request_error","param":"temperature","code":null}}`; got != want {
		t.Errorf("AppendError = %s, want %s", got, want)
	}
	if got, want := string(AppendErrorEvent(nil, "cut", "server_error", "stream_cut")),
		"data: {\"error\":{\"message\":\"cut\",\"type\":\"server_error\",\"code\":\"stream_cut\"}}\n\n"; got != want {
		t.Errorf("AppendErrorEvent = %q, want %q", got, want)
	}
}
