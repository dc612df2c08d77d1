package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

const weatherTool = `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","minLength":3},"days":{"type":"integer","minimum":2}},"required":["city"]}}}`

// TestFollowsTools (issue 33): a model that follows calls the tool a
// request names (else its first), with arguments that match its
// parameters, in OpenAI's words whole and streamed, and in Gemini's; given
// the tool's result, it answers a sentence quoting it.
func TestFollowsTools(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "m", Follows: true})
	v.add(FlavorGemini, Model{ID: "gemini-3-flash", Follows: true})

	r := v.chat(FlavorGroq, "m", `,"tools":[`+weatherTool+`],"tool_choice":"required"`)
	var whole struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(r.body), &whole); err != nil || len(whole.Choices) != 1 {
		t.Fatalf("%d %s: %v", r.status, r.body, err)
	}
	ch := whole.Choices[0]
	if ch.FinishReason != "tool_calls" || ch.Message.Content != nil || len(ch.Message.ToolCalls) != 1 ||
		ch.Message.ToolCalls[0].Function.Name != "get_weather" || ch.Message.ToolCalls[0].Function.Arguments != `{"city":"example","days":2}` {
		t.Errorf("tool call answer: %s", r.body)
	}
	// Streamed: the call's head, then its arguments in pieces.
	r = v.chat(FlavorGroq, "m", `,"stream":true,"tools":[`+weatherTool+`]`)
	if !strings.Contains(r.body, `"tool_calls":[{"index":0,"id":"call_emu`) || !strings.Contains(r.body, `"finish_reason":"tool_calls"`) {
		t.Errorf("streamed tool call: %s", r.body)
	}
	// The tool's result answered.
	r = v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, FlavorGroq)+"/chat/completions",
		`{"model":"m","tools":[`+weatherTool+`],"messages":[{"role":"user","content":"Weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"sunny"}]}`)
	if !strings.Contains(r.body, `"content":"The tool answered: sunny"`) {
		t.Errorf("after the tool: %s", r.body)
	}
	// Gemini: a functionCall part, signed on Gemini 3.
	r = v.gemini(FlavorGemini, "gemini-3-flash", false, `{"contents":[{"role":"user","parts":[{"text":"Weather?"}]}],"tools":[{"functionDeclarations":[{"name":"get_time"},{"name":"get_weather","parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}}}}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_weather"]}}}`)
	if !strings.Contains(r.body, `"functionCall": {`) || !strings.Contains(r.body, `"name": "get_weather"`) || !strings.Contains(r.body, `"thoughtSignature"`) {
		t.Errorf("gemini function call: %d %s", r.status, r.body)
	}
	// Replaying a Gemini 3 call without its signature is refused.
	r = v.gemini(FlavorGemini, "gemini-3-flash", false, `{"contents":[{"role":"user","parts":[{"text":"Weather?"}]},{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":21}}}]}]}`)
	if r.status != 400 || !strings.Contains(r.body, "missing a thought_signature") {
		t.Errorf("unsigned replay: %d %s", r.status, r.body)
	}
	r = v.gemini(FlavorGemini, "gemini-3-flash", false, `{"contents":[{"role":"user","parts":[{"text":"Weather?"}]},{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]},{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":21}}}]}]}`)
	if r.status != 200 || !strings.Contains(r.body, `The tool answered: {\"temp\":21}`) {
		t.Errorf("signed replay: %d %s", r.status, r.body)
	}
}

// TestFollowsSchemaAndImages: a following model answers an instance of the
// request's schema, and names the image it was shown; one without vision
// refuses the image in its flavor's words.
func TestFollowsSchemaAndImages(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "m", Follows: true}, Model{ID: "blind", NoVision: true, NoTools: true})
	v.add(FlavorGemini, Model{ID: "gemini-2.5-flash", Follows: true})
	r := v.chat(FlavorGroq, "m", `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"tags":{"type":"array","items":{"enum":["a","b"]},"minItems":2},"ok":{"type":"boolean"}}}}}`)
	if !strings.Contains(r.body, `"content":"{\"ok\":true,\"tags\":[\"a\",\"a\"]}"`) {
		t.Errorf("schema instance: %s", r.body)
	}
	img := `[{"type":"text","text":"What is it?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]`
	body := `{"model":"m","messages":[{"role":"user","content":` + img + `}]}`
	r = v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, FlavorGroq)+"/chat/completions", body)
	if !strings.Contains(r.body, "I was shown an image/png of 8 bytes") {
		t.Errorf("image: %s", r.body)
	}
	r = v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, FlavorGroq)+"/chat/completions", strings.Replace(body, `"m"`, `"blind"`, 1))
	if r.status != 400 || !strings.Contains(r.body, "image_url is only supported by certain models") {
		t.Errorf("no vision: %d %s", r.status, r.body)
	}
	r = v.chat(FlavorGroq, "blind", `,"tools":[`+weatherTool+`]`)
	if r.status != 400 || !strings.Contains(r.body, "tools is not supported") {
		t.Errorf("no tools: %d %s", r.status, r.body)
	}
	r = v.gemini(FlavorGemini, "gemini-2.5-flash", false, `{"contents":[{"role":"user","parts":[{"text":"What?"},{"inlineData":{"mimeType":"image/jpeg","data":"/9j/4AAQ"}}]}]}`)
	if !strings.Contains(r.body, "I was shown an image/jpeg of 6 bytes") {
		t.Errorf("gemini image: %s", r.body)
	}
}

// TestEmbeddings (issue 33): an embedding model answers OpenAI's and
// Gemini's embedding calls with the same unit vector for the same text,
// shortened on request; a chat model refuses them, and it refuses chat.
func TestEmbeddings(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "chat"})
	v.addProvider(Provider{Name: "gemini", Flavor: FlavorGemini}, Model{ID: "gemini-embedding-001", Embedding: true, Dimensions: 16})
	r := v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, "gemini")+"/openai/embeddings", `{"model":"gemini-embedding-001","input":["a","b"]}`)
	var oa struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(r.body), &oa); err != nil || len(oa.Data) != 2 || len(oa.Data[1].Embedding) != 16 || oa.Usage.PromptTokens != 1 {
		t.Fatalf("openai embeddings: %d %s %v", r.status, r.body, err)
	}
	r = v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, "gemini")+"/models/gemini-embedding-001:batchEmbedContents",
		`{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"b"}]}},{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"a"}]},"outputDimensionality":4}]}`)
	var g struct {
		Embeddings []struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
	}
	if err := json.Unmarshal([]byte(r.body), &g); err != nil || len(g.Embeddings) != 2 {
		t.Fatalf("gemini batch: %d %s %v", r.status, r.body, err)
	}
	for i, x := range g.Embeddings[0].Values {
		if x != oa.Data[1].Embedding[i] {
			t.Fatalf("the two dialects embed %q differently at %d", "b", i)
		}
	}
	if got := g.Embeddings[1].Values; len(got) != 4 || got[0] != oa.Data[0].Embedding[0] {
		t.Errorf("4 dimensions: %v, want the first 4 of %v", got, oa.Data[0].Embedding[:4])
	}
	r = v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, FlavorGroq)+"/embeddings", `{"model":"chat","input":"a"}`)
	if r.status != 400 || !strings.Contains(r.body, "does not support embeddings") {
		t.Errorf("chat model embeds: %d %s", r.status, r.body)
	}
	r = v.gemini("gemini", "gemini-embedding-001", false, "")
	if r.status != 400 || !strings.Contains(r.body, "not supported for generateContent") {
		t.Errorf("embedding model chats: %d %s", r.status, r.body)
	}
	v.e.Script("gemini", "gemini-embedding-001", Step{Kind: RateMinute})
	r = v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, "gemini")+"/models/gemini-embedding-001:embedContent", `{"content":{"parts":[{"text":"a"}]}}`)
	if r.status != 429 || !strings.Contains(r.body, "RESOURCE_EXHAUSTED") {
		t.Errorf("scripted 429: %d %s", r.status, r.body)
	}
}
