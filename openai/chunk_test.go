package openai

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

func TestDecodeChunk(t *testing.T) {
	tests := []struct {
		name string
		data string
		want llm.Chunk
	}{
		{
			name: "first delta",
			data: `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
			want: llm.Chunk{Role: "assistant"},
		},
		{
			name: "content with escapes",
			data: `{"choices":[{"index":0,"delta":{"content":"a\nb \u00e9"}}]}`,
			want: llm.Chunk{Content: "a\nb é"},
		},
		{
			name: "reasoning",
			data: `{"choices":[{"delta":{"reasoning":"hmm"}}]}`,
			want: llm.Chunk{Reasoning: "hmm"},
		},
		{
			name: "reasoning_content",
			data: `{"choices":[{"delta":{"reasoning_content":"hmm","content":null}}]}`,
			want: llm.Chunk{Reasoning: "hmm"},
		},
		{
			name: "tool call delta",
			data: `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]}}]}`,
			want: llm.Chunk{ToolCalls: json.RawMessage(`[{"index":0,"function":{"arguments":"{\""}}]`)},
		},
		{
			name: "finish with groq usage",
			data: `{"choices":[{"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_1","usage":{"queue_time":0.01,"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}}`,
			want: llm.Chunk{FinishReason: "stop", Usage: &llm.Usage{PromptTokens: 5, CompletionTokens: 7, TotalTokens: 12}},
		},
		{
			name: "include_usage chunk",
			data: `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12,"completion_tokens_details":{"reasoning_tokens":2}}}`,
			want: llm.Chunk{Usage: &llm.Usage{PromptTokens: 5, CompletionTokens: 7, TotalTokens: 12, ReasoningTokens: 2}},
		},
		{
			name: "null usage",
			data: `{"choices":[{"delta":{"content":"x"}}],"usage":null}`,
			want: llm.Chunk{Content: "x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ce, err := DecodeChunk([]byte(tt.data))
			if err != nil || ce != nil {
				t.Fatalf("DecodeChunk: %v, %v", ce, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeChunkErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want ChunkError
	}{
		{
			name: "openrouter mid-stream error",
			data: `{"id":"cmpl-abc123","object":"chat.completion.chunk","created":1234567890,"model":"gpt-3.5-turbo","provider":"openai","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`,
			want: ChunkError{Code: "server_error", Message: "Provider disconnected unexpectedly"},
		},
		{
			name: "numeric code",
			data: `{"error":{"message":"Rate limit exceeded","code":429}}`,
			want: ChunkError{Code: "429", Message: "Rate limit exceeded"},
		},
		{
			name: "vllm",
			data: `{"object":"error","message":"out of memory","type":"InternalServerError","param":null,"code":500}`,
			want: ChunkError{Code: "500", Message: "out of memory"},
		},
		{
			name: "string error",
			data: `{"error":"boom"}`,
			want: ChunkError{Message: "boom"},
		},
		{
			name: "gemini array",
			data: `[{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}]`,
			want: ChunkError{Code: "429", Message: "Resource has been exhausted"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ce, err := DecodeChunk([]byte(tt.data))
			if err != nil || ce == nil {
				t.Fatalf("got %v, %v; want a ChunkError", ce, err)
			}
			if *ce != tt.want {
				t.Errorf("got %+v, want %+v", *ce, tt.want)
			}
			if strings.Contains(ce.Error(), tt.want.Message) {
				t.Errorf("Error() = %q quotes the upstream message", ce.Error())
			}
		})
	}
	for _, bad := range []string{``, `{"choices":[{"delta":{"content":"x"`, `not json`, `[1,2]`} {
		if _, _, err := DecodeChunk([]byte(bad)); !errors.Is(err, failure.ErrMalformed) {
			t.Errorf("DecodeChunk(%q) err = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestAppendChunk(t *testing.T) {
	tests := []struct {
		name          string
		c             llm.Chunk
		withReasoning bool
		want          string
	}{
		{"role", llm.Chunk{Role: "assistant"}, false, `{"role":"assistant","content":""},"finish_reason":null`},
		{"content", llm.Chunk{Content: "hi\n"}, false, `{"content":"hi\n"},"finish_reason":null`},
		{"reasoning hidden", llm.Chunk{Reasoning: "r"}, false, `{},"finish_reason":null`},
		{"reasoning shown", llm.Chunk{Reasoning: "r", Content: "c"}, true, `{"content":"c","reasoning_content":"r"},"finish_reason":null`},
		{"tool calls", llm.Chunk{ToolCalls: json.RawMessage(`[{"index":0}]`)}, false, `{"tool_calls":[{"index":0}]},"finish_reason":null`},
		{"finish, usage not written", llm.Chunk{FinishReason: "stop", Usage: &llm.Usage{TotalTokens: 3}}, false, `{},"finish_reason":"stop"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendChunk(nil, "id", "answer", 7, tt.c, tt.withReasoning))
			want := `data: {"id":"id","object":"chat.completion.chunk","created":7,"model":"answer","choices":[{"index":0,"delta":` + tt.want + "}]}\n\n"
			if got != want {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
	got := string(AppendUsageChunk(nil, "id", "answer", 7, llm.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}))
	want := `data: {"id":"id","object":"chat.completion.chunk","created":7,"model":"answer","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}` + "\n\n"
	if got != want {
		t.Errorf("AppendUsageChunk = %q, want %q", got, want)
	}
}

func TestChunkRoundTrip(t *testing.T) {
	c := llm.Chunk{Role: "assistant", Content: "x \"y\"", Reasoning: "r", ToolCalls: json.RawMessage(`[{"index":0}]`), FinishReason: "stop"}
	ev := AppendChunk(nil, "id", "m", 1, c, true)
	got, ce, err := DecodeChunk(ev[len("data: ") : len(ev)-2])
	if err != nil || ce != nil {
		t.Fatal(ce, err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("got %+v, want %+v", got, c)
	}
}

// TestAppendChunkAfter: a chunk written after a head made once is the
// chunk AppendChunk writes.
func TestAppendChunkAfter(t *testing.T) {
	head := AppendChunkHead(nil, "chatcmpl-1", "m\"odel", 1700000000)
	for _, c := range []llm.Chunk{{Role: "assistant"}, {Content: "a \"b\"\n"}, {Reasoning: "r", FinishReason: "stop"}, {ToolCalls: []byte(`[{"index":0}]`)}} {
		for _, pass := range []bool{false, true} {
			got := string(AppendChunkAfter([]byte("x"), head, c, pass))
			want := "x" + string(AppendChunk(nil, "chatcmpl-1", "m\"odel", 1700000000, c, pass))
			if got != want {
				t.Errorf("%+v: AppendChunkAfter wrote %s, AppendChunk %s", c, got, want)
			}
		}
	}
}
