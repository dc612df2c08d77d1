package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/emulator"
)

// The typed answers of issue 15, end to end: a gateway over real HTTP in
// front of the emulator, on a fake clock.

// gradeSchema is seed 002's judge: a finding and a grade from a closed list.
const gradeSchema = `{"type":"object","properties":{"finding":{"type":"string"},"grade":{"type":"string","enum":["document_supported","partially_supported","unsupported"]}},"required":["finding","grade"],"additionalProperties":false}`

// gradeRequest is a chat request on chain asking for a grade.
func gradeRequest(chain string, stream bool) []byte {
	body := `{"model":"` + chain + `","messages":[{"role":"system","content":"You grade findings."},{"role":"user","content":"Grade finding F1 against the document."}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"grade","strict":true,"schema":` + gradeSchema + `}}`
	if stream {
		body += `,"stream":true`
	}
	return []byte(body + "}")
}

// typedChains are the chains of these tests: seed 002's same-model pair,
// cached, and a chain whose first route has JSON mode only.
const typedChains = `
chains:
  judge:
    routes: [groq/openai/gpt-oss-120b, cerebras/gpt-oss-120b]
    same_model: true
    attempt_timeout: 8s
    deadline: 25s
    cache_ttl: 1h
  extract:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
`

// bodies keeps what the emulator received, per route.
type bodies struct {
	mu sync.Mutex
	m  map[string][]string
}

func watchBodies(emu *emulator.Emulator) *bodies {
	b := &bodies{m: map[string][]string{}}
	emu.OnBody(func(provider, model string, body []byte) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.m[provider+"/"+model] = append(b.m[provider+"/"+model], string(body))
	})
	return b
}

func (b *bodies) of(route string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.m[route]...)
}

// TestTypedSeed002: seed 002's call log. Groq answers 429 with a wait of
// 24.7 s: the request goes to Cerebras (same model), whose first answer
// breaks the schema (a grade that does not exist); Cerebras is shown its
// answer and the violation, and answers validly. The same request again is
// served from the cache, with no upstream call. Each step is one call-log
// line: rate_minute, invalid, ok (repair 1), cached.
func TestTypedSeed002(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, typedChains)
	seen := watchBodies(h.emu)
	const groq, cer = "groq/openai/gpt-oss-120b", "cerebras/gpt-oss-120b"
	h.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 24700 * time.Millisecond})
	h.emu.Script("cerebras", "gpt-oss-120b",
		emulator.Step{Kind: emulator.Answer, Text: `{"finding":"F1","grade":"strongly_supported"}`},
		emulator.Step{Kind: emulator.Answer, Text: `{"finding":"F1","grade":"document_supported"}`})

	first := h.post("/v1/chat/completions", "application/json", gradeRequest("judge", false))
	if first.status != http.StatusOK {
		t.Fatalf("status %d: %s", first.status, first.body)
	}
	if got := first.content(t); got != `{"finding":"F1","grade":"document_supported"}` {
		t.Errorf("answer %q, want the repaired one", got)
	}
	var steps []string
	for _, a := range h.recs.forRequest(first.header.Get("X-Request-Id")) {
		steps = append(steps, a.Route+" "+a.Class.String()+" repair="+strconv.Itoa(a.Repair))
	}
	want := []string{groq + " rate_minute repair=0", cer + " invalid repair=0", cer + " ok repair=1"}
	if strings.Join(steps, "; ") != strings.Join(want, "; ") {
		t.Errorf("call log:\n  %s\nwant:\n  %s", strings.Join(steps, "\n  "), strings.Join(want, "\n  "))
	}
	for _, a := range h.recs.forRequest(first.header.Get("X-Request-Id")) {
		if a.Class.String() == "invalid" && (!strings.Contains(a.Error, "/grade: enum") || strings.Contains(a.Error, "strongly")) {
			t.Errorf("invalid attempt's error %q, want the path and keyword, never the answer", a.Error)
		}
	}
	// Cerebras enforces schemas: asked with the schema, then shown its
	// answer and what was wrong with it.
	got := seen.of(cer)
	if len(got) != 2 {
		t.Fatalf("cerebras received %d calls, want 2", len(got))
	}
	if !strings.Contains(got[0], `"response_format":{"type":"json_schema"`) {
		t.Errorf("first call lacks the schema: %s", got[0])
	}
	if !strings.Contains(got[1], `strongly_supported`) || !strings.Contains(got[1], `at /grade: value must be one of`) {
		t.Errorf("the repair does not show the invalid answer and its violation: %s", got[1])
	}

	calls := h.emu.Calls("cerebras", "gpt-oss-120b") + h.emu.Calls("groq", "openai/gpt-oss-120b")
	second := h.post("/v1/chat/completions", "application/json", gradeRequest("judge", false))
	if second.status != http.StatusOK || second.content(t) != `{"finding":"F1","grade":"document_supported"}` || second.header.Get("X-Tollfree-Cache") != "hit" {
		t.Fatalf("second request: %d %s (cache %q), want the cached valid answer", second.status, second.body, second.header.Get("X-Tollfree-Cache"))
	}
	if n := h.emu.Calls("cerebras", "gpt-oss-120b") + h.emu.Calls("groq", "openai/gpt-oss-120b"); n != calls {
		t.Errorf("the cached request made %d upstream calls", n-calls)
	}
	if recs := h.recs.forRequest(second.header.Get("X-Request-Id")); len(recs) != 1 || !recs[0].Cached || recs[0].Route != cer {
		t.Errorf("second request's call log = %+v, want one cached line for %s", recs, cer)
	}
}

// TestTypedNoValidAnswer: when no route's answer matches the schema, repairs
// included, the caller gets a 502 naming the violations' paths and
// keywords, never the answers' text, and nothing is cached: the next
// request calls the routes again.
func TestTypedNoValidAnswer(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, typedChains)
	bad := emulator.Step{Kind: emulator.Answer, Text: `{"finding":"F1","grade":"superb"}`}
	h.emu.SetDefault("groq", "openai/gpt-oss-120b", bad)
	h.emu.SetDefault("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: "I would say superb."})
	r := h.post("/v1/chat/completions", "application/json", gradeRequest("judge", false))
	if r.status != http.StatusBadGateway || r.errorCode(t) != "invalid_answer" {
		t.Fatalf("status %d %s, want 502 invalid_answer", r.status, r.body)
	}
	msg := r.json(t)["error"].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "(root): json") || strings.Contains(msg, "superb") {
		t.Errorf("message %q, want the last violation's path and keyword and no answer text", msg)
	}
	// Repairs on one route only (issue 34): the first route asked twice
	// (one repair), the second once; the error counts the calls spent.
	if n := len(h.recs.forRequest(r.header.Get("X-Request-Id"))); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
	if !strings.Contains(msg, "3 invalid answers, repairs included; 3 upstream calls spent, of at most 6 a typed request") {
		t.Errorf("message %q, want the calls spent counted", msg)
	}
	before := h.emu.Calls("groq", "openai/gpt-oss-120b")
	r = h.post("/v1/chat/completions", "application/json", gradeRequest("judge", false))
	if r.status != http.StatusBadGateway || h.emu.Calls("groq", "openai/gpt-oss-120b") == before {
		t.Errorf("the second request was answered %d without calling the routes: an invalid answer was cached", r.status)
	}
}

// TestTypedJSONModeRoute: Groq's llama-3.3-70b-versatile takes JSON mode but
// no json_schema (the emulator refuses it in Groq's words): it is asked in
// JSON mode, with the schema in a system message, and its answer, wrapped
// in prose and a fenced block, is unwrapped.
func TestTypedJSONModeRoute(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, typedChains)
	h.emu.AddModel("groq", emulator.Model{ID: "llama-3.3-70b-versatile", NoJSONSchema: true})
	seen := watchBodies(h.emu)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer,
		Text: "Here is the grade:\n```json\n{\"finding\":\"F1\",\"grade\":\"unsupported\"}\n```\nHope that helps."})
	r := h.post("/v1/chat/completions", "application/json", gradeRequest("extract", false))
	if r.status != http.StatusOK || r.content(t) != `{"finding":"F1","grade":"unsupported"}` {
		t.Fatalf("status %d %s, want the JSON unwrapped", r.status, r.body)
	}
	if r.header.Get("X-Tollfree-Route") != "groq/llama-3.3-70b-versatile" {
		t.Errorf("answered by %q, want the JSON-mode route", r.header.Get("X-Tollfree-Route"))
	}
	recs := h.emu.Records()
	if len(recs) != 1 || recs[0].Format != emulator.FormatJSONObject {
		t.Fatalf("emulator records %+v, want one call in JSON mode", recs)
	}
	var sent struct {
		Messages []struct{ Role, Content string }
	}
	if err := json.Unmarshal([]byte(seen.of("groq/llama-3.3-70b-versatile")[0]), &sent); err != nil {
		t.Fatal(err)
	}
	var system []string
	for _, m := range sent.Messages {
		if m.Role == "system" {
			system = append(system, m.Content)
		}
	}
	if len(system) != 2 || system[0] != "You grade findings." || !strings.HasPrefix(system[1], "Answer with JSON matching this schema") || !strings.Contains(system[1], `"document_supported"`) {
		t.Errorf("system messages %q, want the caller's, then the schema in words", system)
	}
}

// TestTypedRequireSchema: a chain that requires enforced schemas skips the
// route that has JSON mode only (the skip says why) and asks the next;
// when no route can enforce the schema, the caller gets a 400 saying so.
func TestTypedRequireSchema(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, `
chains:
  strict:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    require_schema: true
    attempt_timeout: 8s
    deadline: 25s
  loose:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
    require_schema: true
    attempt_timeout: 8s
    deadline: 25s
`)
	h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: `{"finding":"F1","grade":"unsupported"}`})
	r := h.post("/v1/chat/completions", "application/json", gradeRequest("strict", false))
	if r.status != http.StatusOK || r.header.Get("X-Tollfree-Route") != "cerebras/gpt-oss-120b" {
		t.Fatalf("status %d via %q: %s, want cerebras's answer", r.status, r.header.Get("X-Tollfree-Route"), r.body)
	}
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 0 {
		t.Errorf("the JSON-mode route was called %d times", n)
	}
	r = h.post("/v1/chat/completions", "application/json", gradeRequest("loose", false))
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "cannot enforce a JSON schema (schema: json)") {
		t.Errorf("status %d %s, want a 400 saying no route can enforce the schema", r.status, r.body)
	}
}

// TestTypedToolCallRepaired: a tool call whose arguments break its tool's
// parameters is answered with a tool result saying what was wrong, on the
// same route, and the corrected call is what the caller gets.
func TestTypedToolCallRepaired(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, typedChains)
	seen := watchBodies(h.emu)
	call := func(args string) string {
		b, _ := json.Marshal(args)
		return `[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":` + string(b) + `}}]`
	}
	h.emu.Script("groq", "openai/gpt-oss-120b",
		emulator.Step{Kind: emulator.Answer, ToolCalls: call(`{"city":"Paris","unit":"kelvin"}`)},
		emulator.Step{Kind: emulator.Answer, ToolCalls: call(`{"city":"Paris","unit":"celsius"}`)})
	body := `{"model":"judge","messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":` +
		`{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","unit"]}}}]}`
	r := h.post("/v1/chat/completions", "application/json", []byte(body))
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var resp struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.Unmarshal(r.body, &resp); err != nil || len(resp.Choices) != 1 || len(resp.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("answer %s: %v", r.body, err)
	}
	if got := resp.Choices[0].Message.ToolCalls[0].Function.Arguments; got != `{"city":"Paris","unit":"celsius"}` || resp.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("tool call arguments %q (finish %q), want the repaired call", got, resp.Choices[0].FinishReason)
	}
	got := seen.of("groq/openai/gpt-oss-120b")
	if len(got) != 2 || !strings.Contains(got[1], `"role":"tool","content":"Not run: the arguments do not match the tool's parameters:`) || !strings.Contains(got[1], `"tool_call_id":"call_1"`) {
		t.Errorf("the repair does not answer the call with what was wrong: %v", got)
	}
}

// TestOpenAIClientStructuredOutput: the official openai-go client's
// structured outputs, unmodified: a json_schema response format, the
// answer parsed into a Go struct, whole and streamed (the stream is
// answered whole, checked, and replayed).
func TestOpenAIClientStructuredOutput(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, typedChains)
	c := newClient(h)
	ctx := context.Background()
	var schema map[string]any
	if err := json.Unmarshal([]byte(gradeSchema), &schema); err != nil {
		t.Fatal(err)
	}
	params := openai.ChatCompletionNewParams{
		Model:    "judge",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Grade finding F1 against the document.")},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
			JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "grade", Schema: schema, Strict: openai.Bool(true)},
		}},
	}
	type grade struct {
		Finding string `json:"finding"`
		Grade   string `json:"grade"`
	}
	h.emu.Script("groq", "openai/gpt-oss-120b",
		emulator.Step{Kind: emulator.Answer, Text: `{"finding":"F1","grade":"excellent"}`},
		emulator.Step{Kind: emulator.Answer, Text: `{"finding":"F1","grade":"partially_supported"}`})
	resp, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	var g grade
	if err := json.Unmarshal([]byte(resp.Choices[0].Message.Content), &g); err != nil || g != (grade{"F1", "partially_supported"}) {
		t.Errorf("parsed %+v (%v), want the repaired grade", g, err)
	}

	h.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: "```json\n{\"finding\":\"F2\",\"grade\":\"unsupported\"}\n```"})
	params.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Grade finding F2 against the document.")}
	s := c.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	s.Close()
	if err := json.Unmarshal([]byte(acc.Choices[0].Message.Content), &g); err != nil || g != (grade{"F2", "unsupported"}) {
		t.Errorf("streamed answer parsed %+v (%v), want the unwrapped grade", g, err)
	}

	// No valid answer: the client gets a typed 502.
	h.emu.SetDefault("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: `{"grade":"none"}`})
	h.emu.SetDefault("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: `{"grade":"none"}`})
	params.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Grade finding F3.")}
	_, err = c.Chat.Completions.New(ctx, params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadGateway || apiErr.Code != "invalid_answer" {
		t.Errorf("err = %v, want a 502 invalid_answer", err)
	}
}

// TestTypedBadSchema: a schema that is not one, or that refers outside
// itself, is a 400 naming the problem; nothing is called.
func TestTypedBadSchema(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, typedChains)
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"tomato"}`, "is not a valid JSON Schema"},
		{`{"$ref":"file:///etc/passwd"}`, "loads no schema from a file or the network"},
		{`{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"object","properties":{"a":`, 70) + `{}` + strings.Repeat(`}}`, 70) + `}}`, "nests deeper than"},
	} {
		body := `{"model":"judge","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + tc.schema + `}}}`
		r := h.post("/v1/chat/completions", "application/json", []byte(body))
		if r.status != http.StatusBadRequest || r.errorCode(t) != "invalid_schema" || !strings.Contains(string(r.body), tc.want) {
			t.Errorf("schema %.40s: %d %s, want 400 invalid_schema saying %q", tc.schema, r.status, r.body, tc.want)
		}
	}
	if n := len(h.emu.Records()); n != 0 {
		t.Errorf("%d upstream calls for bad schemas", n)
	}
}

// TestTypedLibrary: a Go program asks for typed answers with
// JSONSchemaFormat and gets what an HTTP caller gets: the JSON unwrapped,
// an *InvalidAnswerError when no answer matches, a *SchemaError for a
// schema that cannot be checked.
func TestTypedLibrary(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, typedChains)
	ctx := context.Background()
	req := &tollfree.Request{
		Messages:       []tollfree.Message{{Role: "user", Content: "Grade finding F1."}},
		ResponseFormat: tollfree.JSONSchemaFormat("grade", json.RawMessage(gradeSchema), true),
	}
	h.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: "Graded:\n```json\n{\"finding\":\"F1\",\"grade\":\"unsupported\"}\n```"})
	ans, err := h.gw.Chat(ctx, "judge", req)
	if err != nil || ans.Content != `{"finding":"F1","grade":"unsupported"}` || ans.ServedBy != tollfree.ServedByRoute {
		t.Fatalf("Chat: %+v, %v; want the JSON unwrapped", ans, err)
	}
	h.emu.SetDefault("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: `{"finding":"F2"}`})
	h.emu.SetDefault("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: `{"finding":"F2"}`})
	req.Messages[0].Content = "Grade finding F2."
	_, err = h.gw.Chat(ctx, "judge", req)
	var ia *tollfree.InvalidAnswerError
	if !errors.As(err, &ia) || ia.Invalid != 3 || ia.Calls != 3 || ia.Violations.String() != "(root): required" {
		t.Errorf("err %v, want an InvalidAnswerError: 3 answers missing a required property (a repair on the first route only), 3 calls", err)
	}
	req.ResponseFormat = tollfree.JSONSchemaFormat("bad", json.RawMessage(`{"$ref":"https://example.com/schema.json"}`), false)
	_, err = h.gw.Chat(ctx, "judge", req)
	var se *tollfree.SchemaError
	if !errors.As(err, &se) || se.Param != "response_format.json_schema.schema" {
		t.Errorf("err %v, want a SchemaError on the schema", err)
	}
}
