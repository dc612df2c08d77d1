package emulator

import (
	"encoding/json"
	"strings"
	"testing"

	verdict "github.com/tollfree/tollfree/failure"
)

// TestResponseFormats: every call's record says which response format it
// asked; a model refuses what it does not take in its flavor's words, and
// the gateway's classifier reads each refusal as this route lacking a
// feature (another route may have it), never the caller's mistake.
func TestResponseFormats(t *testing.T) {
	const schema = `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}}`
	const jsonMode = `,"response_format":{"type":"json_object"}`
	tests := []struct {
		name, flavor string
		model        Model
		body         string // spliced into an OpenAI request, or a whole Gemini one
		status       int
		format       string
		says         string
		class        verdict.Class
	}{
		{"schema taken", FlavorCerebras, Model{ID: "m"}, schema, 200, FormatJSONSchema, "", verdict.OK},
		{"groq refuses a schema", FlavorGroq, Model{ID: "m", NoJSONSchema: true}, schema, 400, FormatJSONSchema, "This model does not support response format `json_schema`.", verdict.TooLarge},
		{"groq takes JSON mode", FlavorGroq, Model{ID: "m", NoJSONSchema: true}, jsonMode + `,"messages":[{"role":"user","content":"Answer in JSON"}]`, 200, FormatJSONObject, "", verdict.OK},
		{"JSON mode without the word", FlavorGroq, Model{ID: "m"}, jsonMode, 400, FormatJSONObject, "'messages' must contain the word 'json' in some form", verdict.BadRequest},
		{"openai's refusal", FlavorGeneric, Model{ID: "m", NoJSONSchema: true}, schema, 400, FormatJSONSchema, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.", verdict.TooLarge},
		{"gemma refuses JSON mode", FlavorGemini, Model{ID: "gemma-3-27b-it", NoJSONMode: true},
			`{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"generationConfig":{"responseMimeType":"application/json"}}`, 400, FormatJSONObject, "JSON mode is not enabled for models/gemma-3-27b-it", verdict.Unsupported},
		{"gemini takes a schema", FlavorGemini, Model{ID: "gemini-2.5-flash"},
			`{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"generation_config":{"response_mime_type":"application/json","response_json_schema":{"type":"object"}}}`, 200, FormatJSONSchema, "", verdict.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			v.add(tt.flavor, tt.model)
			var r reply
			if tt.flavor == FlavorGemini {
				r = v.gemini(tt.flavor, tt.model.ID, false, tt.body)
			} else {
				// A later "messages" key wins: the test's own conversation.
				r = v.chat(tt.flavor, tt.model.ID, tt.body)
			}
			if r.status != tt.status || !strings.Contains(r.body, tt.says) {
				t.Fatalf("%d %s, want %d saying %q", r.status, r.body, tt.status, tt.says)
			}
			if recs := v.e.Records(); len(recs) != 1 || recs[0].Format != tt.format {
				t.Errorf("records %+v, want one with format %q", recs, tt.format)
			}
			if tt.status != 200 {
				ve := verdict.Classify(&verdict.UpstreamError{Flavor: tt.flavor, Status: r.status, Body: []byte(r.body)}, start)
				if ve.Class != tt.class {
					t.Errorf("classified %v, want %v", ve.Class, tt.class)
				}
			}
		})
	}
}

// TestToolCallsAnswer: a step with tool calls answers them as OpenAI does:
// content null, the calls, finish_reason tool_calls.
func TestToolCallsAnswer(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "m"})
	calls := `[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]`
	v.e.Script(FlavorGroq, "m", Step{Kind: Answer, ToolCalls: calls})
	r := v.chat(FlavorGroq, "m", "")
	var resp struct {
		Choices []struct {
			Message struct {
				Content   *string         `json:"content"`
				ToolCalls json.RawMessage `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.Unmarshal([]byte(r.body), &resp); err != nil || len(resp.Choices) != 1 {
		t.Fatalf("%s: %v", r.body, err)
	}
	c := resp.Choices[0]
	if c.Message.Content != nil || string(c.Message.ToolCalls) != calls || c.FinishReason != "tool_calls" {
		t.Errorf("message %+v finish %q", c.Message, c.FinishReason)
	}
}
