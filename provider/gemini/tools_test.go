package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
)

// weatherTools is a caller's OpenAI tools: two functions.
const weatherTools = `[{"type":"function","function":{"name":"get_weather","description":"Weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string","pattern":"^[A-Z]"}},"required":["city"]}}},
{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{}}}}]`

// TestToolsTranslated (issue 33): the caller's function tools become
// functionDeclarations (parameters in the part of JSON Schema Gemini
// takes), each tool_choice its functionCallingConfig, and a tool loop's
// history functionCall and functionResponse parts.
func TestToolsTranslated(t *testing.T) {
	for _, tc := range []struct {
		choice, want string
	}{
		{`"auto"`, `{"functionCallingConfig":{"mode":"AUTO"}}`},
		{`"none"`, `{"functionCallingConfig":{"mode":"NONE"}}`},
		{`"required"`, `{"functionCallingConfig":{"mode":"ANY"}}`},
		{`{"type":"function","function":{"name":"get_time"}}`, `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_time"]}}`},
	} {
		req := &llm.Request{
			Messages: []llm.Message{
				{Role: "user", Content: "Weather in Paris, and the time?"},
				{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"call_2","type":"function","function":{"name":"get_time","arguments":""}}]`)},
				{Role: "tool", ToolCallID: "call_1", Content: `{"temp":21}`},
				{Role: "tool", ToolCallID: "call_2", Content: "noon"},
			},
			Extra: map[string]json.RawMessage{"tools": json.RawMessage(weatherTools), "tool_choice": json.RawMessage(tc.choice)},
		}
		w := buildRequest(provider.Call{Model: "gemini-3-flash", Request: req})
		if got := string(w.ToolConfig); got != tc.want {
			t.Errorf("tool_choice %s: toolConfig %s, want %s", tc.choice, got, tc.want)
		}
		body, _ := json.Marshal(w)
		for _, want := range []string{
			`"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Weather in a city","parametersJsonSchema":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}},{"name":"get_time","parametersJsonSchema":{"properties":{},"type":"object"}}]}]`,
			`{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"skip_thought_signature_validator"},{"functionCall":{"name":"get_time","args":{}}}]}`,
			`{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":21}}},{"functionResponse":{"name":"get_time","response":{"result":"noon"}}}]}`,
		} {
			if !strings.Contains(string(body), want) {
				t.Errorf("tool_choice %s: the body lacks %s:\n%s", tc.choice, want, body)
			}
		}
	}
	// Gemini 2.5 checks no signature: none is sent.
	req := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}, {Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]`)}, {Role: "tool", ToolCallID: "a", Content: "1"}}}
	body, _ := json.Marshal(buildRequest(provider.Call{Model: "gemini-2.5-flash", Request: req}))
	if strings.Contains(string(body), "thoughtSignature") {
		t.Errorf("a thought signature went to gemini-2.5-flash: %s", body)
	}
}

// TestFunctionCallsAnswered (issue 33): functionCall parts come back as
// OpenAI's tool_calls, several in one answer, with stable ids (Gemini's
// own when it gives one), whole and streamed alike, and finish
// tool_calls; an answer of calls alone is an answer, not an empty one.
func TestFunctionCallsAnswered(t *testing.T) {
	const answer = `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"},{"functionCall":{"id":"gem-7","name":"get_time","args":{}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":12,"totalTokenCount":21},"modelVersion":"gemini-3-flash","responseId":"r-1"}`
	wantCalls := `[{"id":"` + callID("r-1", 0, "get_weather") + `","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"gem-7","type":"function","function":{"name":"get_time","arguments":"{}"}}]`

	c, _ := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "streamGenerateContent") {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+answer+"\n\n")
			return
		}
		io.WriteString(w, answer)
	})
	resp, err := c.Chat(context.Background(), simpleCall("gemini-3-flash"))
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.ToolCalls) != wantCalls || resp.FinishReason != "tool_calls" || resp.Content != "" {
		t.Errorf("whole: tool_calls %s, finish %q, content %q;\nwant %s, tool_calls", resp.ToolCalls, resp.FinishReason, resp.Content, wantCalls)
	}
	s, err := c.Stream(context.Background(), simpleCall("gemini-3-flash"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ch, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	var deltas []map[string]any
	if err := json.Unmarshal(ch.ToolCalls, &deltas); err != nil || len(deltas) != 2 {
		t.Fatalf("stream: tool_calls delta %s: %v", ch.ToolCalls, err)
	}
	var whole []map[string]any
	json.Unmarshal(resp.ToolCalls, &whole)
	for i, d := range deltas {
		if d["index"] != float64(i) || d["id"] != whole[i]["id"] {
			t.Errorf("stream: call %d has index %v and id %v; want %d and the whole answer's %v", i, d["index"], d["id"], i, whole[i]["id"])
		}
	}
	if ch.FinishReason != "tool_calls" || ch.Role != "assistant" {
		t.Errorf("stream: finish %q, role %q; want tool_calls, assistant", ch.FinishReason, ch.Role)
	}
	if _, err := s.Next(); err != io.EOF {
		t.Errorf("stream after the calls: %v, want io.EOF", err)
	}
}

// TestMediaInline (issue 33): a data: URL image and input_audio go to
// Gemini as inlineData, beside the text, in order.
func TestMediaInline(t *testing.T) {
	parts := `[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}},{"type":"text","text":"And this?"}]`
	req := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "What is this?\nAnd this?", Parts: json.RawMessage(parts)}}}
	c := New(Options{})
	if why := c.Uncarried(req); why != "" {
		t.Fatalf("Uncarried = %q", why)
	}
	body, _ := json.Marshal(buildRequest(provider.Call{Model: "gemini-2.5-flash", Request: req}))
	want := `"contents":[{"role":"user","parts":[{"text":"What is this?"},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},{"inlineData":{"mimeType":"audio/wav","data":"UklGRg=="}},{"text":"And this?"}]}]`
	if !strings.Contains(string(body), want) {
		t.Errorf("body %s\nlacks %s", body, want)
	}
}

// TestUncarried (issue 33): what Gemini's API has no place for is named,
// never sent thinned; Chat then makes no call and reports
// failure.ErrCannotCarry, which skips the route for the request only.
func TestUncarried(t *testing.T) {
	img := func(u string) []llm.Message {
		return []llm.Message{{Role: "user", Parts: json.RawMessage(`[{"type":"image_url","image_url":{"url":"` + u + `"}}]`)}}
	}
	user := []llm.Message{{Role: "user", Content: "hi"}}
	for _, tc := range []struct {
		name string
		req  llm.Request
		want string
	}{
		{"remote image", llm.Request{Messages: img("https://example.com/cat.png")}, "an image given by URL"},
		{"gif", llm.Request{Messages: img("data:image/gif;base64,R0lGOD")}, "not a data: URL of PNG"},
		{"unknown part", llm.Request{Messages: []llm.Message{{Role: "user", Parts: json.RawMessage(`[{"type":"video_url","video_url":{"url":"x"}}]`)}}}, `a part of type "video_url"`},
		{"uploaded file", llm.Request{Messages: []llm.Message{{Role: "user", Parts: json.RawMessage(`[{"type":"file","file":{"file_id":"file-1"}}]`)}}}, "uploaded files are not carried"},
		{"unknown field", llm.Request{Messages: user, Extra: map[string]json.RawMessage{"logit_bias": json.RawMessage(`{"1":2}`)}}, `the field "logit_bias"`},
		{"web search tool", llm.Request{Messages: user, Extra: map[string]json.RawMessage{"tools": json.RawMessage(`[{"type":"web_search"}]`)}}, `tools[0] is of type "web_search"`},
		{"bad function name", llm.Request{Messages: user, Extra: map[string]json.RawMessage{"tools": json.RawMessage(`[{"type":"function","function":{"name":"1 bad"}}]`)}}, "not a name Gemini takes"},
		{"one call at a time", llm.Request{Messages: user, Extra: map[string]json.RawMessage{"parallel_tool_calls": json.RawMessage(`false`)}}, "parallel_tool_calls false"},
		{"orphan tool result", llm.Request{Messages: []llm.Message{{Role: "tool", ToolCallID: "x", Content: "1"}}}, "answers a tool call that is not in the conversation"},
		{"arguments not an object", llm.Request{Messages: []llm.Message{{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]`)}}}, "is not a JSON object"},
		{"a call asked of no tool", llm.Request{Messages: user, Extra: map[string]json.RawMessage{"tool_choice": json.RawMessage(`"required"`)}}, "has no tools"},
		{"ignorable hints", llm.Request{Messages: user, Extra: map[string]json.RawMessage{"store": json.RawMessage(`false`), "metadata": json.RawMessage(`{}`), "parallel_tool_calls": json.RawMessage(`true`)}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			c, _ := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) { calls++; io.WriteString(w, okAnswer) })
			if got := c.Uncarried(&tc.req); tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("Uncarried = %q, want it to say %q", got, tc.want)
			}
			if tc.want == "" {
				return
			}
			_, err := c.Chat(context.Background(), provider.Call{Model: "gemini-2.5-flash", Request: &tc.req})
			if !errors.Is(err, failure.ErrCannotCarry) || calls != 0 {
				t.Errorf("Chat: %v after %d calls; want ErrCannotCarry and no call", err, calls)
			}
			if v := failure.Classify(err, time.Now()); v.Class != failure.TooLarge || v.Scope != failure.ScopeRequest {
				t.Errorf("classified %s (%s), want too_large for this request only", v.Class, v.Scope)
			}
			if strings.Contains(err.Error(), "example.com") {
				t.Errorf("the error quotes the caller's URL: %v", err)
			}
		})
	}
}

// TestMediaFetched (issue 33): an image URL is fetched only from a host
// the operator allows, within the size limit, and goes inline; a host not
// allowed, a redirect, a non-image and an oversized file are not carried.
func TestMediaFetched(t *testing.T) {
	png := "\x89PNG\r\n\x1a\nabcdef"
	img := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cat.png":
			w.Header().Set("Content-Type", "image/png")
			io.WriteString(w, png)
		case "/big.png":
			w.Header().Set("Content-Type", "image/png")
			io.WriteString(w, strings.Repeat("x", 200))
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>")
		case "/moved":
			http.Redirect(w, r, "https://elsewhere.test/x.png", http.StatusFound)
		}
	}))
	defer img.Close()
	u, _ := url.Parse(img.URL)
	hc := img.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	fetch := Fetch{Allows: func(h string) bool { return h == u.Hostname() }, MaxBytes: 100, Client: hc}

	bodies := make(chan []byte, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		io.WriteString(w, okAnswer)
	}))
	defer up.Close()
	c := New(Options{Name: "gemini", BaseURL: up.URL, Fetch: fetch, Client: up.Client()})
	call := func(path string) error {
		req := &llm.Request{Messages: []llm.Message{{Role: "user", Parts: json.RawMessage(`[{"type":"image_url","image_url":{"url":"` + img.URL + path + `"}}]`)}}}
		_, err := c.Chat(context.Background(), provider.Call{Model: "gemini-2.5-flash", Request: req})
		return err
	}
	if err := call("/cat.png"); err != nil {
		t.Fatalf("allowed host: %v", err)
	}
	if b := <-bodies; !strings.Contains(string(b), `{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgphYmNkZWY="}}`) {
		t.Errorf("the fetched image is not inline: %s", b)
	}
	for path, want := range map[string]string{"/big.png": "over the limit", "/page": `type "text/html"`, "/moved": "HTTP 302"} {
		if err := call(path); !errors.Is(err, failure.ErrCannotCarry) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want ErrCannotCarry saying %q", path, err, want)
		}
	}
	other := New(Options{Name: "gemini", BaseURL: up.URL, Client: up.Client()})
	req := &llm.Request{Messages: []llm.Message{{Role: "user", Parts: json.RawMessage(`[{"type":"image_url","image_url":{"url":"` + img.URL + `/cat.png"}}]`)}}}
	if why := other.Uncarried(req); !strings.Contains(why, "fetches no URL") {
		t.Errorf("no host allowed: Uncarried = %q", why)
	}
	if len(bodies) != 0 {
		t.Errorf("%d calls reached Gemini for requests it could not carry", len(bodies))
	}
}
