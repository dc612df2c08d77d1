package openai

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/tollfree/tollfree/llm"
)

// benchBody is the request of the load harness's chat.lua as it stood on
// 2026-11-29 (docs/BENCHMARKS.md, "How it is measured"): a system and a
// user message, temperature, max_tokens, top_p, user.
func benchBody(b *testing.B) []byte {
	body, err := os.ReadFile("testdata/bench_request.json")
	if err != nil {
		b.Fatal(err)
	}
	return body
}

func BenchmarkDecodeRequest(b *testing.B) {
	body := benchBody(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRequestPaths compares DecodeRequest's two ways of
// reading the body: the one-pass fast path (decodeRequestFast) and the
// reflective one it falls back to (encoding/json, then eachField for the
// extra fields), on the load harness's request.
func BenchmarkDecodeRequestPaths(b *testing.B) {
	body := benchBody(b)
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var w wireRequest
			if _, ok := decodeRequestFast(body, &w); !ok {
				b.Fatal("the fast path refused the harness's request")
			}
		}
	})
	b.Run("reflect", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var w wireRequest
			if err := json.Unmarshal(body, &w); err != nil {
				b.Fatal(err)
			}
			_ = eachField(body, func(rawKey, _ []byte) { _, _ = unknownField(rawKey) })
		}
	})
}

func BenchmarkAppendRequest(b *testing.B) {
	req, _, err := DecodeRequest(benchBody(b))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendRequest(buf[:0], "llama-3.3-70b-versatile", req, nil)
	}
}

var benchAnswer = []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"llama-3.3-70b-versatile","choices":[{"index":0,"message":{"role":"assistant","content":"Cross-region latency can explain some 502s if the app's database calls exceed the load balancer's idle timeout.\n\n1. Check p99 DB latency.\n2. Check LB idle timeout vs keep-alive.\n3. Check connection pool exhaustion."},"finish_reason":"stop"}],"usage":{"prompt_tokens":350,"completion_tokens":60,"total_tokens":410},"x_groq":{"id":"req_1"}}`)

func BenchmarkDecodeResponse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeResponse(benchAnswer); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	r, err := DecodeResponse(benchAnswer)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendResponse(buf[:0], "chatcmpl-abc", "answer", 1700000000, r, false)
	}
}

// BenchmarkRequestPath is what the gateway adds per non-streamed request in
// this package: decode the client's request, write the upstream body,
// decode the upstream answer, write the client's answer.
func BenchmarkRequestPath(b *testing.B) {
	body := benchBody(b)
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		req, _, err := DecodeRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		buf = AppendRequest(buf[:0], "llama-3.3-70b-versatile", req, nil)
		r, err := DecodeResponse(benchAnswer)
		if err != nil {
			b.Fatal(err)
		}
		buf = AppendResponse(buf[:0], "chatcmpl-abc", "answer", 1700000000, r, false)
	}
}

var benchChunk = []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"llama-3.3-70b-versatile","choices":[{"index":0,"delta":{"content":" the load"},"logprobs":null,"finish_reason":null}]}`)

func BenchmarkDecodeChunk(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeChunk(benchChunk); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendChunk(b *testing.B) {
	c := llm.Chunk{Content: " the load"}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendChunk(buf[:0], "chatcmpl-abc", "answer", 1700000000, c, false)
	}
}
