package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/typed"
)

// fakeGateway answers every call with what the test set, and keeps the
// call it got.
type fakeGateway struct {
	answer *llm.Answer
	stream *llm.AnswerStream
	err    error

	ch   *config.Chain
	call llm.Call
}

func (f *fakeGateway) Serve(_ context.Context, ch *config.Chain, c llm.Call) (*llm.Answer, error) {
	f.ch, f.call = ch, c
	if f.err != nil {
		return nil, f.err
	}
	a := *f.answer
	a.RequestID = c.ID
	return &a, nil
}

func (f *fakeGateway) ServeStream(_ context.Context, ch *config.Chain, c llm.Call) (*llm.AnswerStream, error) {
	f.ch, f.call = ch, c
	if f.err != nil {
		return nil, f.err
	}
	s := *f.stream
	s.RequestID = c.ID
	return &s, nil
}

// chunks is a ChunkStream of chunks given in advance, then err (io.EOF
// when nil).
type chunks struct {
	c     []llm.Chunk
	usage llm.Usage
	err   error
}

func (s *chunks) Next() (llm.Chunk, error) {
	if len(s.c) == 0 {
		if s.err != nil {
			return llm.Chunk{}, s.err
		}
		return llm.Chunk{}, io.EOF
	}
	c := s.c[0]
	s.c = s.c[1:]
	return c, nil
}
func (s *chunks) Buffered() int            { return len(s.c) }
func (s *chunks) Usage() (llm.Usage, bool) { return s.usage, true }
func (s *chunks) Close() error             { return nil }

var t0 = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

func testPlan() *config.Plan {
	ch := &config.Chain{Name: "answer", Routes: []*config.Route{{ID: "up/m1", Model: "m1", Provider: &config.Provider{Name: "up"}}}}
	return &config.Plan{
		Chains: map[string]*config.Chain{"answer": ch}, ChainOrder: []string{"answer"},
		Server:     config.Server{MaxBodyBytes: 1 << 20, MaxMessages: 100, MaxContentBytes: 1 << 20},
		AdminToken: "admin-token-0001",
		Callers:    config.Callers{PerHour: 10},
	}
}

// TestServerOnlyEncodes: whatever the Gateway answered, the server says
// which step it was in the headers and the body, and maps each error to
// its status code; it hands the Gateway the plan's chain, the caller, the
// cache opt-out and the request id (issue 11: the flow is the Gateway's).
func TestServerOnlyEncodes(t *testing.T) {
	routeAnswer := &llm.Answer{Response: llm.Response{Content: "hi", FinishReason: "stop"}, ServedBy: llm.ServedByRoute, Route: "up/m1"}
	tests := []struct {
		name       string
		gw         fakeGateway
		stream     bool
		wantStatus int
		wantHeader map[string]string // "" wants the header absent
		wantInBody []string
	}{
		{name: "a route", gw: fakeGateway{answer: routeAnswer}, wantStatus: 200,
			wantHeader: map[string]string{HeaderRoute: "up/m1", HeaderCache: "", HeaderFallback: ""},
			wantInBody: []string{`"model":"up/m1"`, `"content":"hi"`}},
		{name: "a route, after a cache miss", gw: fakeGateway{answer: &llm.Answer{Response: routeAnswer.Response, ServedBy: llm.ServedByRoute, Route: "up/m1", CacheMiss: true}},
			wantStatus: 200, wantHeader: map[string]string{HeaderCache: "miss"}},
		{name: "the cache", gw: fakeGateway{answer: &llm.Answer{Response: routeAnswer.Response, ServedBy: llm.ServedByCache, Route: "up/m1"}},
			wantStatus: 200, wantHeader: map[string]string{HeaderCache: "hit", HeaderRoute: "up/m1"}},
		{name: "a shared call", gw: fakeGateway{answer: &llm.Answer{Response: routeAnswer.Response, ServedBy: llm.ServedBySharedCall, Route: "up/m1"}},
			wantStatus: 200, wantHeader: map[string]string{HeaderCache: "shared"}},
		{name: "the fallback message", gw: fakeGateway{answer: &llm.Answer{Response: llm.Response{Content: "Resting.", FinishReason: "stop"}, ServedBy: llm.ServedByFallbackMessage}},
			wantStatus: 200, wantHeader: map[string]string{HeaderFallback: "message", HeaderRoute: ""},
			wantInBody: []string{`"model":"answer"`, `"content":"Resting."`}},
		{name: "the search answer, streamed", stream: true,
			gw: fakeGateway{stream: &llm.AnswerStream{ServedBy: llm.ServedByFallbackSearch,
				ChunkStream: &chunks{c: []llm.Chunk{{Role: "assistant", Content: "Contact: mail"}, {FinishReason: "stop"}}}}},
			wantStatus: 200, wantHeader: map[string]string{HeaderFallback: "search", "Content-Type": "text/event-stream; charset=utf-8"},
			wantInBody: []string{`"content":"Contact: mail"`, `"finish_reason":"stop"`, "data: [DONE]\n\n"}},
		{name: "a refusal by the caller limits", gw: fakeGateway{err: &quota.LimitError{Scope: quota.ScopeCaller, Kind: quota.KindHour, Limit: 10, Window: time.Hour, RetryAt: t0.Add(90 * time.Second)}},
			wantStatus: 429, wantHeader: map[string]string{"Retry-After": "90"},
			wantInBody: []string{`"code":"caller_limit"`, "made 10 requests in the last hour"}},
		{name: "no route and no fallback", stream: true, gw: fakeGateway{err: &route.ExhaustedError{Chain: "answer", RetryAt: t0.Add(30 * time.Second)}},
			wantStatus: 503, wantHeader: map[string]string{"Retry-After": "30"}, wantInBody: []string{`"code":"no_route_available"`}},
		{name: "the caller's bad request", gw: fakeGateway{err: &route.CallerError{Route: "up/m1", Class: failure.BadRequest, Status: 400, Message: "temperature must be at most 2"}},
			wantStatus: 400, wantInBody: []string{`"code":"bad_request"`, "temperature must be at most 2"}},
		// A waiting chain whose soonest route is past its wait cap (package
		// route's TestRoleChainFailsAtOnceOverItsCap): its error, naming
		// each limited route and until when, is the message.
		{name: "no route within the wait cap", gw: fakeGateway{err: &route.ExhaustedError{Chain: "answer", RetryAt: t0.Add(3 * time.Hour), OverWaitCap: time.Minute,
			Skips: []route.Skip{{Route: "groq/openai/gpt-oss-120b", Reason: "rate_day", Until: t0.Add(3 * time.Hour)}, {Route: "cerebras/gpt-oss-120b", Reason: "rate_day", Until: t0.Add(14 * time.Hour)}}}},
			wantStatus: 503, wantHeader: map[string]string{"Retry-After": "10800"},
			wantInBody: []string{`"code":"no_route_available"`, "groq/openai/gpt-oss-120b", "cerebras/gpt-oss-120b", "until 2026-06-15T13:00:00Z", "wait cap"}},
		// A parameter of the caller's that no route takes (package route's
		// TestCallerParamNoRouteTakesIt): a 400 in OpenAI's words naming
		// it, with the provider's reason; not an outage.
		{name: "a parameter no route takes", gw: fakeGateway{err: &route.CallerError{Route: "up/m1", Class: failure.Unsupported, Status: 400, Param: "logit_bias",
			Message: "Unsupported parameter: 'logit_bias' is not supported with this model."}},
			wantStatus: 400, wantHeader: map[string]string{"Retry-After": "", HeaderFallback: ""},
			wantInBody: []string{`"code":"unsupported_parameter"`, `"param":"logit_bias"`, `"type":"invalid_request_error"`, "Unsupported parameter: 'logit_bias' is not supported with this model."}},
		{name: "a parameter no route takes, streamed", stream: true, gw: fakeGateway{err: &route.CallerError{Route: "up/m1", Class: failure.Unsupported, Status: 400, Param: "logit_bias",
			Message: "`logit_bias` is not supported with this model"}},
			wantStatus: 400, wantHeader: map[string]string{"Retry-After": "", HeaderFallback: ""},
			wantInBody: []string{`"code":"unsupported_parameter"`, `"param":"logit_bias"`, `"type":"invalid_request_error"`, "`logit_bias` is not supported with this model"}},
		// A request too long for every route (package route's
		// TestContextFitsEachRoute), streamed or not.
		{name: "too long for every route", gw: fakeGateway{err: &route.TooLargeError{Chain: "answer", Tokens: 4620, Largest: 1000}},
			wantStatus: 400, wantInBody: []string{`"code":"context_length_exceeded"`, `"param":"messages"`, "too long for every route", "the largest context is 1000 tokens"}},
		{name: "too long for every route, streamed", stream: true, gw: fakeGateway{err: &route.TooLargeError{Chain: "answer", Tokens: 4620, Largest: 1000}},
			wantStatus: 400, wantInBody: []string{`"code":"context_length_exceeded"`, "too long for every route", "the largest context is 1000 tokens"}},
		// A refusal is the caller's too; OpenAI's code for it (the router's
		// TestDecisionTable, "refused goes back to the caller").
		{name: "a refusal", gw: fakeGateway{err: &route.CallerError{Route: "up/m1", Class: failure.Refused, Status: 400, Message: "the request was refused by the provider's content policy"}},
			wantStatus: 400, wantHeader: map[string]string{"Retry-After": "", HeaderFallback: ""}, wantInBody: []string{`"code":"content_filter"`, "content policy"}},
		// Typed answers (issue 15): a schema that cannot be checked is the
		// caller's 400; routes that answered but never as asked are a 502
		// naming the violations' paths and keywords.
		{name: "a bad schema", gw: fakeGateway{err: &typed.RequestError{Param: "response_format.json_schema.schema", Message: "nests deeper than 64 levels"}},
			wantStatus: 400, wantInBody: []string{`"code":"invalid_schema"`, `"param":"response_format.json_schema.schema"`, `"type":"invalid_request_error"`, "nests deeper than 64 levels"}},
		{name: "no valid answer", stream: true, gw: fakeGateway{err: &route.InvalidAnswerError{Chain: "answer", Invalid: 4, Calls: 5, MaxCalls: 6, Violations: typed.Violations{{Path: "/grade", Keyword: "enum"}}}},
			wantStatus: 502, wantHeader: map[string]string{"Retry-After": "", HeaderFallback: ""},
			wantInBody: []string{`"code":"invalid_answer"`, `"param":"response_format"`, `"type":"server_error"`, "(4 invalid answers, repairs included; 5 upstream calls spent, of at most 6 a typed request); the last broke it at: /grade: enum"}},
		{name: "no valid tool call", gw: fakeGateway{err: &route.InvalidAnswerError{Chain: "answer", Invalid: 2, Violations: typed.Violations{{Tool: "get_weather", Path: "/unit", Keyword: "enum"}}}},
			wantStatus: 502, wantInBody: []string{`"code":"invalid_answer"`, `"param":"tools"`, "get_weather /unit: enum"}},
		{name: "a refusal in a 200 (Gemini's blockReason)", gw: fakeGateway{err: &route.CallerError{Route: "up/m1", Class: failure.Refused, Status: 200, Message: "blocked: SAFETY"}},
			wantStatus: 400, wantInBody: []string{`"code":"content_filter"`, "blocked: SAFETY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := testPlan()
			srv := New(Options{Plan: plan, Gateway: &tt.gw, Clock: clock.NewFake(t0)})
			body := `{"model":"answer","user":"visitor-1","stream":` + map[bool]string{true: "true", false: "false"}[tt.stream] + `,"messages":[{"role":"user","content":"hello"}]}`
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer admin-token-0001")
			r.Header.Set("Cache-Control", "no-cache")
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			if w.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.wantStatus, w.Body)
			}
			for k, v := range tt.wantHeader {
				if got := w.Header().Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			for _, s := range tt.wantInBody {
				if !strings.Contains(w.Body.String(), s) {
					t.Errorf("body lacks %q:\n%s", s, w.Body)
				}
			}
			id := w.Header().Get(HeaderRequestID)
			if tt.gw.ch != plan.Chains["answer"] || tt.gw.call.ID != id || id == "" {
				t.Errorf("the gateway got chain %p id %q, want the plan's chain %p and the request id %q", tt.gw.ch, tt.gw.call.ID, plan.Chains["answer"], id)
			}
			// The admin token is the owner; the user field names no one.
			if c := tt.gw.call; c.Caller != (llm.Caller{ID: "owner:admin token", Key: caller.AdminKey, Owner: true}) || !c.NoCache || c.Request == nil || c.Request.Stream != tt.stream {
				t.Errorf("the gateway got caller %+v, no-cache %v, request %+v", c.Caller, c.NoCache, c.Request)
			}
			if w.Code == 200 && !tt.stream {
				var m map[string]any
				if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || m["id"] != chatID(id) {
					t.Errorf("response id %v (%v), want %s", m["id"], err, chatID(id))
				}
			}
		})
	}
}

// errorOf returns the error object of OpenAI's error envelope in body.
func errorOf(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.Error == nil {
		t.Fatalf("no error envelope (%v) in %.300s", err, body)
	}
	return m.Error
}

// TestCallerFieldsReachTheGateway: the caller's fields that a route may
// refuse reach the Gateway as sent, for the router to hand to each route
// and to tell whose a refused one was (package route's
// TestCallerParamSkipsRoute): fields the API does not know verbatim in
// Extra, reasoning_effort and temperature as such.
func TestCallerFieldsReachTheGateway(t *testing.T) {
	gw := &fakeGateway{answer: &llm.Answer{Response: llm.Response{Content: "hi", FinishReason: "stop"}, ServedBy: llm.ServedByRoute, Route: "up/m1"}}
	srv := New(Options{Plan: testPlan(), Gateway: gw, Clock: clock.NewFake(t0)})
	body := `{"model":"answer","logit_bias":{"50256":-100},"store":true,"reasoning_effort":"low","temperature":0.2,"messages":[{"role":"user","content":"What does tollfree do?"}]}`
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	req := gw.call.Request
	if req == nil || string(req.Extra["logit_bias"]) != `{"50256":-100}` || string(req.Extra["store"]) != "true" ||
		req.ReasoningEffort != "low" || req.Temperature == nil || *req.Temperature != 0.2 {
		t.Errorf("the Gateway got %+v", req)
	}
}
