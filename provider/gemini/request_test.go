package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
)

func ptr[T any](v T) *T { return &v }

// okAnswer is a minimal 200 generateContent answer.
const okAnswer = `{"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP","index":0}]}`

func TestRequestGolden(t *testing.T) {
	tests := []struct {
		name string
		call provider.Call
	}{
		{
			// System + multi-turn conversation, the route's thinkingConfig
			// (which wins over reasoning_effort) and a top-level field; the
			// caller's function tools and tool_choice as Gemini takes them
			// (issue 33), and store, a hint for OpenAI's servers, left out.
			name: "multiturn_thinking_extra",
			call: provider.Call{
				Model: "gemini-2.5-flash",
				Request: &llm.Request{
					Messages: []llm.Message{
						{Role: "system", Content: "You are terse."},
						{Role: "developer", Content: "Answer in English."},
						{Role: "user", Content: "Hi"},
						{Role: "assistant", Content: "Hello"},
						{Role: "user", Content: "Say hi in five languages"},
					},
					MaxTokens:       8192,
					Temperature:     ptr(0.7),
					TopP:            ptr(0.95),
					Stop:            []string{"END"},
					Seed:            ptr(int64(42)),
					ReasoningEffort: "high",
					User:            "visitor-1",
					Extra: map[string]json.RawMessage{
						"store":       json.RawMessage(`true`),
						"tools":       json.RawMessage(`[{"type":"function","function":{"name":"f"}}]`),
						"tool_choice": json.RawMessage(`"auto"`),
					},
				},
				Extra: map[string]json.RawMessage{
					"thinkingConfig": json.RawMessage(`{"thinkingBudget": 1024, "includeThoughts": true}`),
					"safetySettings": json.RawMessage(`[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]`),
				},
			},
		},
		{
			// json_schema, tool messages, same-role merging, an assistant
			// prefix to continue, reasoning_effort on a 3.x model, and
			// Extra's generationConfig object, null and top-level keys.
			name: "schema_prefix_effort",
			call: provider.Call{
				Model: "models/gemini-3-flash-preview",
				Request: &llm.Request{
					Messages: []llm.Message{
						{Role: "user", Content: "What is the weather?"},
						{Role: "assistant", Content: "", ToolCalls: json.RawMessage(`[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]`)},
						{Role: "tool", ToolCallID: "c1", Content: `{"temp": 21}`},
						{Role: "user", Content: "Answer as JSON."},
						{Role: "assistant", Content: `{"temp":`, Prefix: true},
					},
					Temperature:     ptr(1.0),
					ResponseFormat:  json.RawMessage(`{"type":"json_schema","json_schema":{"name":"w","strict":true,"schema":{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}}}`),
					ReasoningEffort: "low",
				},
				Extra: map[string]json.RawMessage{
					"generationConfig": json.RawMessage(`{"candidateCount": 1}`),
					"topK":             json.RawMessage(`40`),
					"temperature":      json.RawMessage(`null`),
					"cachedContent":    json.RawMessage(`"cachedContents/abc"`),
					"toolConfig":       json.RawMessage(`{"functionCallingConfig":{"mode":"NONE"}}`),
				},
			},
		},
		{
			// Only a system message: it is sent as the user turn. JSON mode.
			name: "system_only_json_object",
			call: provider.Call{
				Model: "gemma-3-27b-it",
				Request: &llm.Request{
					Messages:        []llm.Message{{Role: "system", Content: "List three colours as JSON."}},
					ResponseFormat:  json.RawMessage(`{"type":"json_object"}`),
					ReasoningEffort: "medium", // Gemma has no thinking: not sent
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopy(t, tt.call)
			c, reqs := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(okAnswer))
			})
			if _, err := c.Chat(context.Background(), tt.call); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			got := <-reqs
			if !reflect.DeepEqual(tt.call, before) {
				t.Errorf("Chat modified the call")
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, got.body, "", "  "); err != nil {
				t.Fatalf("request body is not JSON: %v", err)
			}
			pretty.WriteByte('\n')
			golden := filepath.Join("testdata", "request_"+tt.name+".json")
			if *update {
				if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (run with -update to create it): %v", err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Errorf("request body differs from %s:\ngot:\n%s\nwant:\n%s", golden, pretty.Bytes(), want)
			}
		})
	}
}

// deepCopy copies a call so that any modification of the original shows.
func deepCopy(t *testing.T, call provider.Call) provider.Call {
	t.Helper()
	cloneExtra := func(m map[string]json.RawMessage) map[string]json.RawMessage {
		if m == nil {
			return nil
		}
		out := make(map[string]json.RawMessage, len(m))
		for k, v := range m {
			out[k] = bytes.Clone(v)
		}
		return out
	}
	r := *call.Request
	r.Messages = append([]llm.Message(nil), r.Messages...)
	for i := range r.Messages {
		r.Messages[i].Parts = bytes.Clone(r.Messages[i].Parts)
		r.Messages[i].ToolCalls = bytes.Clone(r.Messages[i].ToolCalls)
	}
	if r.Temperature != nil {
		r.Temperature = ptr(*r.Temperature)
	}
	if r.TopP != nil {
		r.TopP = ptr(*r.TopP)
	}
	if r.Seed != nil {
		r.Seed = ptr(*r.Seed)
	}
	r.Stop = append([]string(nil), r.Stop...)
	if call.Request.Stop == nil {
		r.Stop = nil
	}
	r.ResponseFormat = bytes.Clone(r.ResponseFormat)
	r.Extra = cloneExtra(r.Extra)
	return provider.Call{Model: call.Model, Request: &r, Extra: cloneExtra(call.Extra)}
}

func TestRequestURLAndHeaders(t *testing.T) {
	tests := []struct {
		name       string
		stream     bool
		wantPath   string
		wantQuery  string
		wantAccept string
	}{
		{"chat", false, "/v1beta/models/gemini-2.5-flash:generateContent", "", "application/json"},
		{"stream", true, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "alt=sse", "text/event-stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, reqs := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.stream {
					w.Write([]byte("data: " + okAnswer + "\n\n"))
					return
				}
				w.Write([]byte(okAnswer))
			})
			call := simpleCall("gemini-2.5-flash")
			if tt.stream {
				s, err := c.Stream(context.Background(), call)
				if err != nil {
					t.Fatalf("Stream: %v", err)
				}
				s.Close()
			} else if _, err := c.Chat(context.Background(), call); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			got := <-reqs
			if got.method != http.MethodPost || got.path != tt.wantPath || got.query != tt.wantQuery {
				t.Errorf("request = %s %s?%s; want POST %s?%s", got.method, got.path, got.query, tt.wantPath, tt.wantQuery)
			}
			wantHeader := map[string]string{
				"X-Goog-Api-Key": testKey,
				"Content-Type":   "application/json",
				"Accept":         tt.wantAccept,
				"X-Extra":        "yes",
			}
			for k, want := range wantHeader {
				if v := got.header.Get(k); v != want {
					t.Errorf("header %s = %q; want %q", k, v, want)
				}
			}
			if got.header.Get("Authorization") != "" {
				t.Errorf("Authorization header sent; Gemini takes the key in x-goog-api-key")
			}
		})
	}
}

func TestThinkingFor(t *testing.T) {
	tests := []struct {
		model, effort, want string
	}{
		{"gemini-2.5-flash", "", ""},
		{"gemini-2.5-flash", "low", `{"thinkingBudget":1024}`},
		{"gemini-2.5-flash", "medium", `{"thinkingBudget":8192}`},
		{"gemini-2.5-flash", "high", `{"thinkingBudget":24576}`},
		{"gemini-2.5-flash", "none", `{"thinkingBudget":0}`},
		{"models/gemini-2.5-flash-lite", "minimal", `{"thinkingBudget":0}`},
		{"gemini-2.5-pro", "none", `{"thinkingBudget":128}`},
		{"gemini-2.5-pro", "HIGH", `{"thinkingBudget":24576}`},
		{"gemini-3-flash-preview", "low", `{"thinkingLevel":"LOW"}`},
		{"gemini-3.1-flash-lite", "medium", `{"thinkingLevel":"MEDIUM"}`},
		{"gemini-3.5-flash", "high", `{"thinkingLevel":"HIGH"}`},
		{"gemini-3.5-flash", "none", `{"thinkingLevel":"MINIMAL"}`},
		{"gemini-3.1-pro-preview", "none", `{"thinkingLevel":"LOW"}`},
		{"gemini-2.0-flash", "high", ""},
		{"gemma-3-27b-it", "low", ""},
		{"gemini-2.5-flash", "extreme", ""},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.effort, func(t *testing.T) {
			if got := string(thinkingFor(tt.model, tt.effort)); got != tt.want {
				t.Errorf("thinkingFor(%q, %q) = %s; want %s", tt.model, tt.effort, got, tt.want)
			}
		})
	}
}

func TestBuildRequestEffortWithoutExtra(t *testing.T) {
	call := simpleCall("gemini-2.5-flash")
	call.Request.ReasoningEffort = "none"
	w := buildRequest(call)
	if got := string(w.GenerationConfig[keyThinkingConfig]); got != `{"thinkingBudget":0}` {
		t.Errorf("thinkingConfig = %s; want {\"thinkingBudget\":0}", got)
	}
	// A route that removes thinkingConfig with null also stops the effort mapping.
	call.Extra = map[string]json.RawMessage{keyThinkingConfig: json.RawMessage(`null`)}
	w = buildRequest(call)
	if got, ok := w.GenerationConfig[keyThinkingConfig]; ok {
		t.Errorf("thinkingConfig = %s; want none", got)
	}
	if w.GenerationConfig != nil {
		t.Errorf("generationConfig = %v; want omitted when empty", w.GenerationConfig)
	}
}

func TestRequestInvalidRouteExtra(t *testing.T) {
	c, reqs := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(okAnswer))
	})
	call := simpleCall("gemini-2.5-flash")
	call.Extra = map[string]json.RawMessage{"topK": json.RawMessage(`{not json`)}
	_, err := c.Chat(context.Background(), call)
	if ue := asUpstream(t, err); ue.Status != 0 || ue.Err == nil {
		t.Errorf("Status, Err = %d, %v; want 0 and the encoding error", ue.Status, ue.Err)
	}
	select {
	case <-reqs:
		t.Errorf("a request was sent")
	default:
	}
}

// built keeps buildRequest's result alive in TestBuildRequestLinear.
var built *wireRequest

// TestBuildRequestLinear: translating a conversation costs memory in
// proportion to its size. Runs of one role are merged into one turn; done by
// appending to the merged text, twice the messages cost four times the bytes
// (issue 10: 110,000 messages took 9 s of CPU and sixteen such requests 1 GB).
// It measures bytes allocated, not time, so that a busy machine cannot fail
// it: buildRequest's alone, whose allocations are the same at every run
// (json.Marshal's, which it once counted too, depend on what its buffer
// pool kept across a GC, and read 3.3 times as much for twice the messages
// in one CI run), and the least of three runs, as another goroutine's
// allocations can only add to a reading.
func TestBuildRequestLinear(t *testing.T) {
	allocated := func(n int) uint64 {
		msgs := make([]llm.Message, n)
		for i := range msgs {
			msgs[i] = llm.Message{Role: "user", Content: "one short message"}
		}
		call := provider.Call{Model: "gemini-2.5-flash", Request: &llm.Request{Messages: msgs}}
		least := uint64(math.MaxUint64)
		for range 3 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			built = buildRequest(call)
			runtime.ReadMemStats(&after)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		return least
	}
	const n = 4000
	small, large := allocated(n), allocated(2*n)
	if ratio := float64(large) / float64(small); ratio > 3 {
		t.Errorf("%d messages allocate %d bytes, %d messages %d bytes: %.1f times as much for twice the messages, want about 2", n, small, 2*n, large, ratio)
	}
}
