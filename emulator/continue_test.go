package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	verdict "github.com/tollfree/tollfree/failure"
)

const contAnswer = "one two three four five six seven eight nine ten."

// messages is an OpenAI messages array: the question, then the given
// assistant and user turns, alternating from the assistant.
func messages(turns ...string) string {
	out := `[{"role":"user","content":"Count to ten."}`
	for i, t := range turns {
		role := "assistant"
		if i%2 == 1 {
			role = "user"
		}
		b, _ := json.Marshal(t)
		out += `,{"role":"` + role + `","content":` + string(b) + `}`
	}
	return out + "]"
}

// answerOf is the answer text of a chat completion.
func answerOf(t *testing.T, r reply) string {
	t.Helper()
	var c struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if r.err != nil || r.status != http.StatusOK || json.Unmarshal([]byte(r.body), &c) != nil || len(c.Choices) != 1 {
		t.Fatalf("status %d (%v): %s", r.status, r.err, r.body)
	}
	return c.Choices[0].Message.Content
}

// TestRefusePrefill: a model that refuses a prefill answers a
// conversation ending with an assistant message (a model turn) with its
// flavor's 400 in that flavor's words, which the gateway's classifier reads
// as a refusal of the request (never a rest); the same conversation
// without the prefill is answered. Nothing is scripted or counted.
func TestRefusePrefill(t *testing.T) {
	tests := []struct {
		flavor string
		want   string // the body, or a part of it
	}{
		{FlavorMistral, `{"object":"error","message":"Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant","type":"invalid_request_message_order","param":null,"code":"3230"}`},
		{FlavorGemini, `"message": "Requests ending with a model turn are not supported.",` + "\n" + `    "status": "INVALID_ARGUMENT"`},
		{"gemini-compat", `[{`},
		{FlavorNVIDIA, `{"status":400,"title":"Bad Request","detail":"Conversation roles must alternate user/assistant/user/assistant/..."}`},
		{FlavorGeneric, `{"object":"error","message":"Conversation roles must alternate user/assistant/user/assistant/...","type":"BadRequestError","param":null,"code":400}`},
		{FlavorOpenRouter, `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"This model does not support assistant message prefill.`},
		{FlavorGroq, `{"error":{"message":"This model does not support assistant message prefill. The conversation must end with a user message.","type":"invalid_request_error"`},
		{FlavorCerebras, `{"message":"This model does not support assistant message prefill.`},
		{FlavorGitHub, `"message":"This model does not support assistant message prefill.`},
		{FlavorOllama, `"message":"This model does not support assistant message prefill.`},
	}
	for _, tt := range tests {
		t.Run(tt.flavor, func(t *testing.T) {
			v := newEnv(t)
			flavor := strings.TrimSuffix(tt.flavor, "-compat")
			v.add(flavor, Model{ID: "m", Answer: contAnswer, RefusePrefill: true})
			send := func(msgs string) reply {
				switch tt.flavor {
				case FlavorGemini:
					contents := strings.NewReplacer(`"content":`, `"parts":[{"text":`, `}`, `}]}`, `"assistant"`, `"model"`).Replace(msgs)
					return v.gemini(flavor, "m", false, `{"contents":`+contents+`}`)
				case "gemini-compat":
					return v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, flavor)+"/openai/chat/completions", `{"model":"m","messages":`+msgs+`}`)
				}
				if flavor == FlavorMistral {
					msgs = strings.Replace(msgs, `"one two "}`, `"one two ","prefix":true}`, 1)
				}
				return v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, flavor)+"/chat/completions", `{"model":"m","messages":`+msgs+`}`)
			}
			r := send(messages("one two "))
			if r.err != nil || r.status != http.StatusBadRequest || !strings.Contains(r.body, tt.want) {
				t.Fatalf("status %d (%v): %s\nwant 400 with %s", r.status, r.err, r.body, tt.want)
			}
			if recs := v.e.Records(); len(recs) != 1 || recs[0].Behaviour != "prefill_refused" || v.e.Calls(flavor, "m") != 1 {
				t.Errorf("records %+v, want one prefill_refused", recs)
			}
			vd := verdict.Classify(&verdict.UpstreamError{Provider: flavor, Flavor: flavor, Model: "m", Status: r.status, Body: []byte(r.body)}, v.clk.Now())
			if vd.Class != verdict.BadRequest || vd.Scope != verdict.ScopeRequest {
				t.Errorf("classified %s/%v (%s), want a bad request of the request's", vd.Class, vd.Scope, vd.Message)
			}
			if tt.flavor != FlavorGemini {
				if got := answerOf(t, send(messages())); got != contAnswer {
					t.Errorf("without the prefill: %q", got)
				}
			}
		})
	}
}

// TestPrefillWireForm: Mistral refuses a trailing assistant message
// without its "prefix": true, and continues one with it; Groq and Cerebras
// refuse a "prefix" field on any message, in their words for a message
// field they do not know, which the classifier reads as the field
// "prefix" unsupported; other flavors take a plain prefill.
func TestPrefillWireForm(t *testing.T) {
	v := newEnv(t)
	for _, f := range []string{FlavorMistral, FlavorGroq, FlavorCerebras, FlavorOpenRouter} {
		v.add(f, Model{ID: "m", Answer: contAnswer})
	}
	post := func(flavor, msgs string) reply {
		return v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, flavor)+"/chat/completions", `{"model":"m","messages":`+msgs+`}`)
	}
	flagged := strings.Replace(messages("one two "), `"one two "}`, `"one two ","prefix":true}`, 1)
	if r := post(FlavorMistral, messages("one two ")); r.status != http.StatusBadRequest || !strings.Contains(r.body, "Expected last role User or Tool") {
		t.Errorf("mistral without the flag: %d %s", r.status, r.body)
	}
	if got := answerOf(t, post(FlavorMistral, flagged)); got != "three four five six seven eight nine ten." {
		t.Errorf("mistral with the flag: %q", got)
	}
	for _, tt := range []struct{ flavor, want string }{
		{FlavorGroq, `{"error":{"message":"'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property 'prefix' is unsupported)]","type":"invalid_request_error"}}`},
		{FlavorCerebras, `{"message":"messages.1.assistant.prefix: property 'messages.1.assistant.prefix' is unsupported","type":"invalid_request_error","param":"validation_error","code":"wrong_api_format"}`},
	} {
		r := post(tt.flavor, flagged)
		if r.status != http.StatusBadRequest || r.body != tt.want {
			t.Errorf("%s with the flag: %d %s\nwant 400 %s", tt.flavor, r.status, r.body, tt.want)
		}
		vd := verdict.Classify(&verdict.UpstreamError{Provider: tt.flavor, Flavor: tt.flavor, Model: "m", Status: r.status, Body: []byte(r.body)}, v.clk.Now())
		if vd.Class != verdict.Unsupported || !strings.HasSuffix(vd.Param, "prefix") {
			t.Errorf("%s: classified %s with param %q, want the field prefix unsupported", tt.flavor, vd.Class, vd.Param)
		}
		if got := answerOf(t, post(tt.flavor, messages("one two "))); got != "three four five six seven eight nine ten." {
			t.Errorf("%s without the flag: %q", tt.flavor, got)
		}
	}
	if got := answerOf(t, post(FlavorOpenRouter, flagged)); got != "three four five six seven eight nine ten." {
		t.Errorf("openrouter with the flag: %q", got)
	}
}

// TestContinue: a model answers a prefill and an instruct continuation
// (an assistant message that starts its answer, then a user message) as
// its Continue says: exactly the rest, the last three words again first,
// the whole answer again, or a restart worded differently. A conversation
// whose assistant message is a whole earlier answer, or not the start of
// this one, is no continuation.
func TestContinue(t *testing.T) {
	const shown = "one two three four fi"
	tests := []struct {
		mode Continuation
		want string
	}{
		{ContinueExact, "ve six seven eight nine ten."},
		{ContinueOverlap, "three four five six seven eight nine ten."},
		{ContinueRestart, contAnswer},
		{ContinueRestartDiverge, "one two three four five " + restartTail},
	}
	for _, tt := range tests {
		t.Run("mode="+string(tt.mode), func(t *testing.T) {
			v := newEnv(t)
			v.add(FlavorGroq, Model{ID: "m", Answer: contAnswer, Continue: tt.mode})
			v.add(FlavorGemini, Model{ID: "m", Answer: contAnswer, Continue: tt.mode})
			post := func(msgs string) string {
				return answerOf(t, v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, FlavorGroq)+"/chat/completions", `{"model":"m","messages":`+msgs+`}`))
			}
			if got := post(messages(shown)); got != tt.want {
				t.Errorf("prefill: %q, want %q", got, tt.want)
			}
			if got := post(messages(shown, "Please go on.")); got != tt.want {
				t.Errorf("instruct: %q, want %q", got, tt.want)
			}
			body := `{"contents":[{"role":"user","parts":[{"text":"Count to ten."}]},{"role":"model","parts":[{"text":"` + shown + `"}]},{"role":"user","parts":[{"text":"Go on."}]}]}`
			r := v.gemini(FlavorGemini, "m", false, body)
			if r.status != http.StatusOK || !strings.Contains(r.body, `"text": `+jsonString(tt.want)) {
				t.Errorf("gemini instruct: %d %s, want %q", r.status, r.body, tt.want)
			}
			if got := post(messages(contAnswer, "And again?")); got != contAnswer {
				t.Errorf("after a whole earlier answer: %q", got)
			}
			if got := post(messages("Something else entirely.", "And now?")); got != contAnswer {
				t.Errorf("after another answer: %q", got)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
