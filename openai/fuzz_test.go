package openai

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

// FuzzDecodeRequest checks that DecodeRequest never panics, that every
// error is a *RequestError, and that an accepted request encodes to valid
// JSON free of lone surrogates and invalid UTF-8 which decodes again.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a\ud83d"}]}],"tools":[1],"x":{"y":"}"}}`,
		`{"messages":[{"role":"assistant","content":null,"tool_calls":[{}],"prefix":true}],"stop":["a"],"temperature":1}`,
		`{"messages":[{"role":"user","content":"\"\\\u00e9"}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"messages":[]}`, `[]`, `{`, "{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, _, err := DecodeRequest(body)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err %T is not a *RequestError", err)
			}
			return
		}
		out := AppendRequest(nil, "m", req, nil)
		if !json.Valid(out) {
			t.Fatalf("AppendRequest wrote invalid JSON: %q", out)
		}
		if !utf8.Valid(out) {
			t.Fatalf("AppendRequest wrote invalid UTF-8: %q", out)
		}
		if _, _, err := DecodeRequest(out); err != nil {
			t.Fatalf("re-decoding AppendRequest's body: %v", err)
		}
	})
}

// FuzzDecodeChunk checks that DecodeChunk never panics, reports either a
// chunk, a ChunkError or ErrMalformed, and that a chunk survives
// AppendChunk and DecodeChunk unchanged in its text.
func FuzzDecodeChunk(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}`,
		`{"choices":[],"usage":{"prompt_tokens":1}}`,
		`{"error":{"code":"x","message":"y"},"choices":[]}`,
		`{"object":"error","message":"m","code":1}`,
		`[{"error":{"code":429}}]`,
		`{"choices":[{"delta":{"content":[{"type":"thinking","thinking":"t"}]}}],"x_groq":{"usage":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ce, err := DecodeChunk(data)
		switch {
		case err != nil:
			if !errors.Is(err, failure.ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			return
		case ce != nil:
			return
		}
		ev := AppendChunk(nil, "id", "m", 1, c, true)
		back, ce, err := DecodeChunk(ev[len("data: ") : len(ev)-2])
		if err != nil || ce != nil {
			t.Fatalf("re-decoding %q: %v %v", ev, ce, err)
		}
		if back.Content != c.Content || back.Reasoning != c.Reasoning || back.FinishReason != c.FinishReason {
			t.Fatalf("round trip changed the chunk: %+v -> %+v", c, back)
		}
	})
}

// FuzzDecodeChunkFast holds the fast path to the reflective one: whenever
// decodeChunkFast takes a payload, DecodeChunk's reference path must give
// the same chunk.
func FuzzDecodeChunkFast(f *testing.F) {
	for _, s := range []string{
		`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"content":"a\u00e9\ud83d\ude00 \"q\""},"finish_reason":"stop"}]}`,
		`{"choices":[{"delta":{"reasoning":"r","reasoning_content":"rc","tool_calls":[{"index":0}]}}]}`,
		`{"choices":[{"delta":{"reasoning_content":"rc"}}]}`,
		`{"choices":[{"delta":{"content":"x"}}],"Usage":{"prompt_tokens":1}}`,
		`{"choices":[{"delta":{"Content":"x","content":"y"}}]}`,
		`{"choices":[],"usage":null}`,
		`{"choices":[{"delta":{"content":"\ud83d"}}]}`,
		"{\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}",
		`{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":330,"completion_tokens":18,"total_tokens":348}}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":1,"audio_tokens":0}}}`,
		`{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`,
		`{"usage":{"prompt_tokens":1,"prompt_tokens":2.5}}`,
		`{"usage":{"prompt_tokens_details":{"cached_tokens":1},"prompt_tokens_details":null}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := decodeChunkFast(data)
		if !ok {
			return
		}
		var w wireChunk
		if err := unmarshalLenient(data, &w); err != nil {
			t.Fatalf("fast path took %q, which the reference refuses: %v", data, err)
		}
		if ce := w.chunkError(); ce != nil {
			t.Fatalf("fast path took an error payload %q", data)
		}
		var want llm.Chunk
		if len(w.Choices) > 0 {
			ch := &w.Choices[0]
			want.Role, want.Content, want.Reasoning, want.FinishReason = ch.Delta.Role, ch.Delta.Content.text, ch.Delta.reasoning(), ch.FinishReason
			if !isNull(ch.Delta.ToolCalls) {
				want.ToolCalls = cleanRaw(ch.Delta.ToolCalls)
			}
		}
		if w.XGroq != nil && w.XGroq.Usage != nil {
			t.Fatalf("fast path took a payload with Groq's usage: %q", data)
		}
		switch {
		case (w.Usage == nil) != (fast.Usage == nil):
			t.Fatalf("%q: fast usage %v, reference %v", data, fast.Usage, w.Usage)
		case w.Usage != nil && *fast.Usage != w.Usage.usage():
			t.Fatalf("%q: fast usage %+v, reference %+v", data, *fast.Usage, w.Usage.usage())
		}
		if fast.Role != want.Role || fast.Content != want.Content || fast.Reasoning != want.Reasoning ||
			fast.FinishReason != want.FinishReason || string(fast.ToolCalls) != string(want.ToolCalls) {
			t.Fatalf("%q: fast %+v, reference %+v", data, fast, want)
		}
	})
}

// FuzzDecodeResponseFast holds the fast path of DecodeResponse to the
// reflective one: whenever decodeResponseFast takes a body, the reference
// decoder must find the same fields.
func FuzzDecodeResponseFast(f *testing.F) {
	for _, s := range []string{
		`{"id":"chatcmpl-1","object":"chat.completion","created":1741570283,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"A gateway.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":312,"completion_tokens":31,"total_tokens":343,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}},"system_fingerprint":"fp"}`,
		`{"choices":[{"message":{"content":"<think>a</think>b","reasoning_content":"r","tool_calls":[{"id":"x"}]}}],"usage":{"queue_time":0.1,"prompt_tokens":1}}`,
		`{"choices":[],"error":{"message":"x"}}`,
		`{"Choices":[{"message":{"content":"x"}}]}`,
		`{"choices":[{"message":{"content":[{"type":"text","text":"x"}]}}]}`,
		`{"created":1.5,"choices":[{"message":{"content":"x"}}]}`,
		`{"choices":[{"message":{"content":"a\ud83d b"}}],"usage":{"total_tokens":-3}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast wireResponse
		if !decodeResponseFast(data, &fast) {
			return
		}
		var ref wireResponse
		if err := unmarshalLenient(data, &ref); err != nil {
			t.Fatalf("fast path took %q, which the reference refuses: %v", data, err)
		}
		if fast.ID != ref.ID || fast.Model != ref.Model || fast.Created != ref.Created || len(fast.Choices) != len(ref.Choices) || !isNull(ref.Error) {
			t.Fatalf("%q: fast %+v, reference %+v", data, fast, ref)
		}
		if len(ref.Choices) > 0 {
			a, b := fast.Choices[0], ref.Choices[0]
			if a.FinishReason != b.FinishReason || a.Message.Role != b.Message.Role || a.Message.Content.text != b.Message.Content.text ||
				a.Message.reasoning() != b.Message.reasoning() || isNull(a.Message.ToolCalls) != isNull(b.Message.ToolCalls) {
				t.Fatalf("%q: fast choice %+v, reference %+v", data, a, b)
			}
		}
		if (fast.Usage == nil) != (ref.Usage == nil) {
			t.Fatalf("%q: usage fast %v, reference %v", data, fast.Usage, ref.Usage)
		}
		if fast.Usage != nil && fast.Usage.usage() != ref.Usage.usage() {
			t.Fatalf("%q: usage fast %+v, reference %+v", data, fast.Usage.usage(), ref.Usage.usage())
		}
	})
}

// FuzzValidJSON holds validJSON, the fast path's guard, to never taking a
// payload json.Valid refuses.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,-2.5e+3,true,false,null,"\u00e9\n"]}`, `{"a":1,}`, `[1 2]`, `01`, `"\x"`, `1.`, `-`, ` {"a" : { } } `, "\"\x01\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if validJSON(data) && !json.Valid(data) {
			t.Fatalf("validJSON took %q, which json.Valid refuses", data)
		}
	})
}

// FuzzDecodeRequestFast holds the fast path of DecodeRequest to the
// reflective one: whenever decodeRequestFast takes a body, encoding/json
// must take it too and find the same fields, and eachField the same extra
// fields.
func FuzzDecodeRequestFast(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are"},{"role":"user","content":"Hello \"x\" \u00e9\ud83d"}],"temperature":0.3,"max_tokens":400,"user":"u","stream":true}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"tools":[1],"x":{"y":"}"},"x":2}`,
		`{"messages":[{"role":"assistant","content":null,"tool_calls":[{}],"prefix":true,"name":"n","tool_call_id":"t"}],"stop":["a"],"temperature":1}`,
		`{"messages":[],"stream":true,"stream_options":{"include_usage":true,"other":1},"seed":-3,"n":1,"top_p":0.5}`,
		`{"messages":null,"stop":"s","response_format":{"type":"json_object"},"reasoning_effort":"low","max_completion_tokens":9}`,
		`{"Model":"m","messages":[]}`, `{"model":"a","model":"b"}`, `{"mod\u0065l":"m"}`, `{"max_tokens":1.5}`,
		`{"messages":[{"Role":"user"}]}`, `{"messages":[null]}`, `{"temperature":1e400}`, `{"stream":"yes"}`,
		`{"stream_options":{"Include_usage":true}}`, `{"stop":5}`, `{"messages":[{"content":{}}]}`, ` {"model":"m"} `, `{"model":"m"}x`,
		"{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}],\"m\xc5\xbfg\":1}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast wireRequest
		extra, ok := decodeRequestFast(body, &fast)
		if !ok {
			return
		}
		var ref wireRequest
		if err := json.Unmarshal(body, &ref); err != nil {
			t.Fatalf("fast path took %q, which encoding/json refuses: %v", body, err)
		}
		if !reflect.DeepEqual(fast, ref) {
			t.Fatalf("%q:\nfast      %+v\nreference %+v", body, fast, ref)
		}
		var want map[string]json.RawMessage
		_ = eachField(body, func(rawKey, value []byte) {
			if key, ok := unknownField(rawKey); ok {
				if want == nil {
					want = make(map[string]json.RawMessage)
				}
				want[key] = cleanRaw(value)
			}
		})
		if !reflect.DeepEqual(extra, want) {
			t.Fatalf("%q: fast extra %q, reference %q", body, extra, want)
		}
	})
}
