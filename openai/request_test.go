package openai

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tollfree/tollfree/llm"
)

func ptr[T any](v T) *T { return &v }

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantModel string
		want      *llm.Request
	}{
		{
			name:      "minimal",
			body:      `{"model":"answer","messages":[{"role":"user","content":"hi"}]}`,
			wantModel: "answer",
			want:      &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}},
		},
		{
			name: "every known field",
			body: `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi","name":"ann"}],
				"max_tokens":10,"temperature":0.5,"top_p":0.9,"stop":"END","seed":7,"response_format":{"type":"json_object"},
				"reasoning_effort":"low","stream":true,"stream_options":{"include_usage":true},"user":"u1","n":1}`,
			wantModel: "m",
			want: &llm.Request{
				Messages:        []llm.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi", Name: "ann"}},
				MaxTokens:       10,
				Temperature:     ptr(0.5),
				TopP:            ptr(0.9),
				Stop:            []string{"END"},
				Seed:            ptr(int64(7)),
				ResponseFormat:  json.RawMessage(`{"type":"json_object"}`),
				ReasoningEffort: "low",
				Stream:          true,
				IncludeUsage:    true,
				User:            "u1",
			},
		},
		{
			name: "max_completion_tokens wins",
			body: `{"messages":[{"role":"user","content":"hi"}],"max_tokens":10,"max_completion_tokens":20,"stop":["a","b"]}`,
			want: &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}, MaxTokens: 20, Stop: []string{"a", "b"}},
		},
		{
			name: "parts joined, array kept",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:x"}},{"type":"text","text":"here"}]}]}`,
			want: &llm.Request{Messages: []llm.Message{{
				Role: "user", Content: "look\nhere",
				Parts: json.RawMessage(`[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:x"}},{"type":"text","text":"here"}]`),
			}}},
		},
		{
			name: "tool round trip",
			body: `{"messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"w","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"sunny"}],"tools":[{"type":"function","function":{"name":"w"}}],"tool_choice":"auto"}`,
			want: &llm.Request{
				Messages: []llm.Message{
					{Role: "user", Content: "weather?"},
					{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"c1","type":"function","function":{"name":"w","arguments":"{}"}}]`)},
					{Role: "tool", Content: "sunny", ToolCallID: "c1"},
				},
				Extra: map[string]json.RawMessage{"tools": json.RawMessage(`[{"type":"function","function":{"name":"w"}}]`), "tool_choice": json.RawMessage(`"auto"`)},
			},
		},
		{
			name: "extra fields verbatim, escapes in keys and nulls kept",
			body: ` { "messages" : [ {"role":"user","content":"a\"b\\n"} ] , "logprobs" : true, "x\u0079" : {"a":[1,{"b":"}"}]}, "metadata":null, "Temperature": 1 } `,
			want: &llm.Request{
				Messages:    []llm.Message{{Role: "user", Content: "a\"b\\n"}},
				Temperature: ptr(1.0),
				Extra: map[string]json.RawMessage{
					"logprobs": json.RawMessage(`true`),
					"xy":       json.RawMessage(`{"a":[1,{"b":"}"}]}`),
					"metadata": json.RawMessage(`null`),
				},
			},
		},
		{
			name: "assistant prefix",
			body: `{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"Once","prefix":true}]}`,
			want: &llm.Request{Messages: []llm.Message{{Role: "user", Content: "go"}, {Role: "assistant", Content: "Once", Prefix: true}}},
		},
		{
			name: "nulls are unset",
			body: `{"messages":[{"role":"developer","content":"x"}],"temperature":null,"stop":null,"stream_options":null,"n":null,"response_format":null}`,
			want: &llm.Request{Messages: []llm.Message{{Role: "developer", Content: "x"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, model, err := DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			if model != tt.wantModel {
				t.Errorf("model = %q, want %q", model, tt.wantModel)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		param   string
		code    string
		message string // a substring
	}{
		{"empty body", ``, "", CodeInvalidJSON, "invalid JSON at byte 0"},
		{"syntax", `{"messages":[{"role":"user","content":"hi"}],}`, "", CodeInvalidJSON, "invalid JSON at byte 46"},
		{"not an object", `[1]`, "", CodeInvalidType, "must be a JSON object"},
		{"trailing garbage", `{"messages":[]} x`, "", CodeInvalidJSON, "invalid JSON at byte"},
		{"no messages", `{"model":"m"}`, "messages", CodeMissingParameter, "messages is required"},
		{"empty messages", `{"messages":[]}`, "messages", CodeInvalidValue, "at least one"},
		{"messages not array", `{"messages":"hi"}`, "messages", CodeInvalidType, "expected an array, got string"},
		{"unknown role", `{"messages":[{"role":"user","content":"a"},{"role":"robot","content":"b"}]}`, "messages[1].role", CodeInvalidValue, "must be one of"},
		{"missing role", `{"messages":[{"content":"b"}]}`, "messages[0].role", CodeMissingParameter, "is required"},
		{"content number", `{"messages":[{"role":"user","content":5}]}`, "messages[0].content", CodeInvalidType, "string or an array"},
		{"content bad parts", `{"messages":[{"role":"user","content":[1,2]}]}`, "messages[0].content", CodeInvalidType, "string or an array"},
		{"user content null", `{"messages":[{"role":"user","content":null}]}`, "messages[0].content", CodeMissingParameter, "is required"},
		{"user content absent", `{"messages":[{"role":"user"}]}`, "messages[0].content", CodeMissingParameter, "is required"},
		{"n 2", `{"messages":[{"role":"user","content":"a"}],"n":2}`, "n", CodeUnsupportedValue, "n must be 1"},
		{"temperature high", `{"messages":[{"role":"user","content":"a"}],"temperature":2.5}`, "temperature", CodeInvalidValue, "between 0 and 2, got 2.5"},
		{"temperature negative", `{"messages":[{"role":"user","content":"a"}],"temperature":-1}`, "temperature", CodeInvalidValue, "between 0 and 2"},
		{"temperature string", `{"messages":[{"role":"user","content":"a"}],"temperature":"hot"}`, "temperature", CodeInvalidType, "expected a number, got string"},
		{"top_p", `{"messages":[{"role":"user","content":"a"}],"top_p":1.5}`, "top_p", CodeInvalidValue, "between 0 and 1"},
		{"max_tokens 0", `{"messages":[{"role":"user","content":"a"}],"max_tokens":0}`, "max_tokens", CodeInvalidValue, "at least 1"},
		{"max_tokens fraction", `{"messages":[{"role":"user","content":"a"}],"max_tokens":1.5}`, "max_tokens", CodeInvalidType, "expected a number"},
		{"max_completion_tokens", `{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":-3}`, "max_completion_tokens", CodeInvalidValue, "at least 1"},
		{"stop number", `{"messages":[{"role":"user","content":"a"}],"stop":3}`, "stop", CodeInvalidType, "string or an array"},
		{"stream_options without stream", `{"messages":[{"role":"user","content":"a"}],"stream_options":{"include_usage":true}}`, "stream_options", CodeInvalidValue, "only allowed when stream"},
		{"stream string", `{"messages":[{"role":"user","content":"a"}],"stream":"yes"}`, "stream", CodeInvalidType, "expected a boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := DecodeRequest([]byte(tt.body))
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v (%T), want *RequestError", err, err)
			}
			if re.Param != tt.param || re.Code != tt.code || !strings.Contains(re.Message, tt.message) {
				t.Errorf("got {Param:%q Code:%q Message:%q}, want param %q, code %q, message containing %q",
					re.Param, re.Code, re.Message, tt.param, tt.code, tt.message)
			}
		})
	}
}

// TestDecodeRequestTextHygiene checks that no lone surrogate and no invalid
// UTF-8 survives decoding (seed 004): in plain strings (fast and escaped
// paths), in parts arrays, tool calls and extra fields, and in what
// AppendRequest then writes.
func TestDecodeRequestTextHygiene(t *testing.T) {
	body := []byte(`{"messages":[` +
		`{"role":"system","content":"cut \ud83d"},` +
		`{"role":"user","content":"pair \ud83d\ude00 ok, lone low \ude00, bad ` + "\xff" + `"},` +
		`{"role":"user","content":"raw bad ` + "\xc3" + ` byte"},` +
		`{"role":"user","content":[{"type":"text","text":"part \ud83d"}]},` +
		`{"role":"assistant","content":"","tool_calls":[{"function":{"arguments":"\udc00"}}]}` +
		`],"tools":[{"type":"function","function":{"name":"f","description":"d \ud800 ` + "\xfe" + `"}}]}`)
	req, _, err := DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	wantContent := []string{"cut \uFFFD", "pair 😀 ok, lone low \uFFFD, bad \uFFFD", "raw bad \uFFFD byte", "part \uFFFD", ""}
	for i, m := range req.Messages {
		if m.Content != wantContent[i] {
			t.Errorf("message %d content = %q, want %q", i, m.Content, wantContent[i])
		}
	}
	out := AppendRequest(nil, "m", req, nil)
	if !utf8.Valid(out) || hasSurrogateEscape(out) {
		t.Errorf("upstream body holds a lone surrogate or invalid UTF-8: %q", out)
	}
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("upstream body is not JSON: %v", err)
	}
	// encoding/json agrees with the fast path on every string.
	var ref struct {
		Messages []struct{ Content any } `json:"messages"`
	}
	if err := json.Unmarshal(body, &ref); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if ref.Messages[i].Content != req.Messages[i].Content {
			t.Errorf("message %d: encoding/json says %q, DecodeRequest %q", i, ref.Messages[i].Content, req.Messages[i].Content)
		}
	}
}

func TestDecodeRequestBenchBody(t *testing.T) {
	body, err := os.ReadFile("testdata/bench_request.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := decodeRequestFast(body, &wireRequest{}); !ok {
		t.Error("the harness's request does not take the fast path")
	}
	req, model, err := DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	if model != "gpt-4o-mini" || len(req.Messages) != 2 || req.MaxTokens != 512 || req.User != "bench-user-42" || req.Extra != nil {
		t.Errorf("got model %q, %d messages, max_tokens %d, user %q, extra %v", model, len(req.Messages), req.MaxTokens, req.User, req.Extra)
	}
}

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`""`, `"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`,
		`"\ud83d\u0041"`, `"\ude00\ud83d"`, "\"\xff\xfe\"", "\"caf\xc3\xa9\"", "\"\xed\xa0\x80\"", `"\uD83D\uDE00"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got := unquote([]byte(s)); got != want {
			t.Errorf("unquote(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s/", "\x00\x01\x1f\n\r\t", "<&>", "é中😀", "\u2028\u2029", "bad \xff\xc3", "\xed\xa0\x80"} {
		got := appendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("appendString(%q) = %s: not JSON: %v", s, got, err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if s == "\xed\xa0\x80" || s == "bad \xff\xc3" {
			want = string([]rune(s)) // one U+FFFD per bad byte, as encoding/json writes
		}
		if back != want {
			t.Errorf("appendString(%q) decodes to %q, want %q", s, back, want)
		}
	}
}
