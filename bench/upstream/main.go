// Command upstream is the fixed upstream of bench/run.sh: an
// OpenAI-compatible chat completions endpoint that answers every request
// with the same bytes, so that a benchmark measures what stands in front of
// it (tollfree, or nothing) and not a model.
//
//	POST /v1/chat/completions  a fixed chat.completion (with usage), or, when
//	                           the body asks "stream": true, a fixed SSE
//	                           stream of 20 chat.completion.chunk events
//	                           and [DONE]
//	GET  /v1/models            a fixed model list
//	GET  /health               "ok"
//
// Every answer is rendered once at start; a request costs reading its body
// and one scan of it for the stream flag.
//
//	go run ./bench/upstream -addr 127.0.0.1:18080
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// model is the model every answer names.
const model = "gpt-4o-mini-2024-07-18"

// answerWords are the streamed answer's content chunks (18: with the role
// chunk and the finish chunk, 20 events); joined, the whole answer's text.
var answerWords = []string{"The", " gateway", " forwards", " each", " request", " to", " the", " first", " free", " route", " that", " can", " answer", ",", " and", " says", " which", "."}

func main() {
	addr := flag.String("addr", "127.0.0.1:18080", "address to listen on")
	delay := flag.Duration("delay", 0, "wait before each answer (0: none)")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("upstream: %v (pick another -addr)", err)
	}
	// The address actually bound: with -addr 127.0.0.1:0, the port chosen.
	fmt.Fprintf(os.Stderr, "upstream: listening on %s\n", ln.Addr())
	srv := &http.Server{Handler: newHandler(*delay), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}

// newHandler serves the fixed answers, each after delay.
func newHandler(delay time.Duration) http.Handler {
	whole, events, models := completion(), streamEvents(), modelList()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, `{"error":{"message":"cannot read the request body"}}`, http.StatusBadRequest)
			return
		}
		if delay > 0 {
			time.Sleep(delay)
		}
		if !asksStream(body) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(whole)))
			w.Write(whole)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		flusher, _ := w.(http.Flusher)
		for _, ev := range events {
			if _, err := w.Write(ev); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(models)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	return mux
}

// asksStream reports whether body holds "stream" as a key whose value is
// true: a scan, not a decode, to keep the upstream's cost small beside the
// gateway's.
func asksStream(body []byte) bool {
	key := []byte(`"stream"`)
	for i := bytes.Index(body, key); i >= 0; {
		rest := bytes.TrimLeft(body[i+len(key):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' && bytes.HasPrefix(bytes.TrimLeft(rest[1:], " \t\r\n"), []byte("true")) {
			return true
		}
		body = body[i+len(key):]
		i = bytes.Index(body, key)
	}
	return false
}

type obj = map[string]any

// mustJSON encodes v, which is always encodable here.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// completion is the whole answer.
func completion() []byte {
	return mustJSON(obj{
		"id": "chatcmpl-bench0000000000000001", "object": "chat.completion", "created": 1764547200, "model": model,
		"choices": []obj{{"index": 0, "message": obj{"role": "assistant", "content": strings.Join(answerWords, ""), "refusal": nil},
			"logprobs": nil, "finish_reason": "stop"}},
		"usage":              obj{"prompt_tokens": 330, "completion_tokens": 18, "total_tokens": 348},
		"system_fingerprint": "fp_bench0001",
	})
}

// streamEvents are the streamed answer's SSE events: the role, a chunk per
// word, the finish with usage, then [DONE].
func streamEvents() [][]byte {
	chunk := func(delta obj, finish any, usage obj) []byte {
		c := obj{"id": "chatcmpl-bench0000000000000001", "object": "chat.completion.chunk", "created": 1764547200, "model": model,
			"system_fingerprint": "fp_bench0001", "choices": []obj{{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		return append(append([]byte("data: "), mustJSON(c)...), "\n\n"...)
	}
	events := [][]byte{chunk(obj{"role": "assistant", "content": ""}, nil, nil)}
	for _, w := range answerWords {
		events = append(events, chunk(obj{"content": w}, nil, nil))
	}
	events = append(events, chunk(obj{}, "stop", obj{"prompt_tokens": 330, "completion_tokens": 18, "total_tokens": 348}))
	return append(events, []byte("data: [DONE]\n\n"))
}

// modelList is GET /v1/models's answer.
func modelList() []byte {
	return mustJSON(obj{"object": "list", "data": []obj{{"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "bench"}}})
}
