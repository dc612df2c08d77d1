package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
)

// captureTransport records the one request a Client sends and answers it
// with a fixed answer, without a network.
type captureTransport struct {
	req  *http.Request
	body []byte
}

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.req = r
	c.body, _ = io.ReadAll(r.Body)
	r.Body.Close()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(okAnswer)), Request: r}, nil
}

// translateRoles are the roles a fuzzed message can have, picked by its
// first byte.
var translateRoles = []string{"system", "developer", "user", "assistant", "tool", "critic"}

// fuzzMessages cuts convo into messages at "\x1e"; the first byte of each
// picks its role, the rest is its content.
func fuzzMessages(convo string) []llm.Message {
	var msgs []llm.Message
	for _, part := range strings.Split(convo, "\x1e") {
		if part == "" {
			continue
		}
		m := llm.Message{Role: translateRoles[int(part[0])%len(translateRoles)], Content: part[1:]}
		if m.Role == "tool" {
			m.Name = "lookup" // a tool result names its function (issue 33)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// FuzzGeminiTranslate sends fuzzed llm.Requests through Client.Chat and
// checks the generateContent body that would go to Gemini: valid JSON of
// bounded size; turns that alternate user and model, none empty; every
// non-empty message's text present (system text in systemInstruction or,
// alone, in the one turn), nothing added but the "\n\n" joins; the model
// in the path exactly, escaped; maxOutputTokens never above the caller's
// cap; no thinkingConfig for a model that takes none; and the call left
// unmodified.
func FuzzGeminiTranslate(f *testing.F) {
	// Seeds from the golden requests (testdata) and real conversations.
	f.Add("\x00You are terse.\x1e\x01Answer in English.\x1e\x02Hi\x1e\x03Hello\x1e\x02Say hi in five languages",
		"gemini-2.5-flash", 8192, "high", []byte(`{"thinkingConfig":{"thinkingBudget":1024,"includeThoughts":true},"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]}`),
		[]byte(`{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object"}}}`))
	f.Add("\x02a\x1e\x02b\x1e\x04tool output\x1e\x03\x1e\x03c\x1e\x03d", "gemini-3-pro-preview", 0, "minimal", []byte(nil), []byte(`{"type":"json_object"}`))
	f.Add("\x00only a system prompt", "models/gemma-3-27b-it", -5, "none", []byte(`{"generationConfig":{"temperature":0.2,"maxOutputTokens":9},"thinkingConfig":null}`), []byte(`"text"`))
	f.Add("\x05é\xff\u2028\x1e\x03<think>x</think>", "gemini-2.5-pro", 1<<62, "xhigh", []byte(`{"tools":[{"googleSearch":{}}],"cachedContent":"cachedContents/x","stopSequences":null}`), []byte(`null`))
	f.Add("", "a/b?c#d:e", 1, "", []byte(`{}`), []byte(nil))
	f.Fuzz(func(t *testing.T, convo, model string, maxTokens int, effort string, extraJSON, rf []byte) {
		var extra map[string]json.RawMessage
		if json.Unmarshal(extraJSON, &extra) != nil {
			extra = nil
		}
		req := &llm.Request{Messages: fuzzMessages(convo), MaxTokens: maxTokens, ReasoningEffort: effort}
		if json.Valid(rf) {
			req.ResponseFormat = rf
		}
		call := provider.Call{Model: model, Request: req, Extra: extra}
		before := deepCopyCall(call)

		tr := &captureTransport{}
		c := New(Options{Name: "gemini", BaseURL: "http://gemini.test/v1beta/", APIKey: testKey, Client: &http.Client{Transport: tr}})
		if _, err := c.Chat(context.Background(), call); err != nil {
			t.Fatalf("Chat: %v", err)
		}
		if !reflect.DeepEqual(before, deepCopyCall(call)) {
			t.Fatalf("the call was modified")
		}
		checkPath(t, tr.req, model)
		checkBody(t, tr.body, call)
	})
}

func checkPath(t *testing.T, r *http.Request, model string) {
	t.Helper()
	want := "/v1beta/models/" + strings.TrimPrefix(model, "models/") + ":generateContent"
	if r.URL.Path != want || r.URL.RawQuery != "" || r.URL.Fragment != "" || r.URL.Host != "gemini.test" {
		t.Fatalf("request went to %q (query %q), want path %q", r.URL, r.URL.RawQuery, want)
	}
}

// sentBody is the part of a generateContent body the checks read.
type sentBody struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string          `json:"text"`
			FunctionResponse json.RawMessage `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Role  string `json:"role"`
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"systemInstruction"`
	GenerationConfig map[string]json.RawMessage `json:"generationConfig"`
}

func checkBody(t *testing.T, body []byte, call provider.Call) {
	t.Helper()
	// A tool message's text goes in a functionResponse part, as its JSON
	// or {"result": text} (issue 33): counted apart.
	in, nonEmpty, joins, results := 0, 0, 0, 0
	for _, m := range call.Request.Messages {
		in += len(m.Content) + 32
		if m.Content != "" {
			nonEmpty++
			if m.Role == "tool" {
				results++
			}
		}
	}
	for _, v := range call.Extra {
		in += len(v)
	}
	in += len(call.Request.ResponseFormat) + len(call.Model)
	if !json.Valid(body) || len(body) > 6*in+1024 {
		t.Fatalf("body is not valid JSON of at most 6×%d+1024 bytes: %d bytes", in, len(body))
	}
	var b sentBody
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("body: %v", err)
	}
	var texts []string
	for i, c := range b.Contents {
		if (c.Role != "user" && c.Role != "model") || len(c.Parts) == 0 || (i > 0 && b.Contents[i-1].Role == c.Role) {
			t.Fatalf("turn %d: role %q after %d turns, %d parts", i, c.Role, i, len(c.Parts))
		}
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				results--
				continue
			}
			texts = append(texts, p.Text)
		}
	}
	if results != 0 {
		t.Fatalf("%d tool results without their functionResponse part", results)
	}
	if (nonEmpty > 0) != (len(b.Contents) > 0) || len(b.Contents) > nonEmpty {
		t.Fatalf("%d turns from %d non-empty messages", len(b.Contents), nonEmpty)
	}
	if si := b.SystemInstruction; si != nil {
		if si.Role != "" || len(si.Parts) == 0 {
			t.Fatalf("systemInstruction with role %q and %d parts", si.Role, len(si.Parts))
		}
		for _, p := range si.Parts {
			texts = append(texts, p.Text)
		}
	}
	all := strings.Join(texts, "")
	joins = len(all)
	for _, m := range call.Request.Messages {
		if m.Role == "tool" {
			continue
		}
		text := onWire(m.Content)
		joins -= len(text)
		if text != "" && !strings.Contains(all, text) {
			t.Fatalf("message text %q is missing from the body", text)
		}
	}
	if joins < 0 || joins > 2*nonEmpty {
		t.Fatalf("the body's text is %d bytes off the messages' (only \"\\n\\n\" joins may be added)", joins)
	}
	checkConfig(t, b.GenerationConfig, call)
}

func checkConfig(t *testing.T, gc map[string]json.RawMessage, call provider.Call) {
	t.Helper()
	_, extraMax := call.Extra["maxOutputTokens"]
	if raw, ok := gc["maxOutputTokens"]; ok && !extraMax && !bytes.Contains(call.Extra[keyGenerationConfig], []byte("maxOutputTokens")) {
		var n int
		if json.Unmarshal(raw, &n) != nil || n <= 0 || n > call.Request.MaxTokens {
			t.Fatalf("maxOutputTokens %s for a cap of %d", raw, call.Request.MaxTokens)
		}
	}
	m := strings.ToLower(call.Model)
	_, extraThinking := call.Extra[keyThinkingConfig]
	takesThinking := strings.Contains(m, "gemini-2.5") || strings.Contains(m, "gemini-3")
	if _, ok := gc[keyThinkingConfig]; ok && !takesThinking && !extraThinking &&
		!bytes.Contains(call.Extra[keyGenerationConfig], []byte(keyThinkingConfig)) {
		t.Fatalf("thinkingConfig sent to %q, which takes none", call.Model)
	}
}

// onWire is s as JSON carries it: each byte of invalid UTF-8 becomes
// U+FFFD.
func onWire(s string) string {
	b, _ := json.Marshal(s)
	var out string
	json.Unmarshal(b, &out)
	return out
}

// deepCopyCall copies what a Client could modify in place.
func deepCopyCall(c provider.Call) provider.Call {
	r := *c.Request
	r.Messages = append([]llm.Message(nil), r.Messages...)
	r.ResponseFormat = bytes.Clone(r.ResponseFormat)
	out := provider.Call{Model: c.Model, Request: &r}
	if c.Extra != nil {
		out.Extra = make(map[string]json.RawMessage, len(c.Extra))
		for k, v := range c.Extra {
			out.Extra[k] = bytes.Clone(v)
		}
	}
	return out
}
