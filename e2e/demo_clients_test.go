package e2e_test

import (
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/testenv"
)

// TestDemoTypedAnswers (issue 34): `tollfree demo`, run as the README
// says, answers typed requests keylessly: the openai npm client's
// chat.completions.parse and responses.parse with zod schemas, the AI
// SDK's generateObject and LangChain's withStructuredOutput by function
// calling and by JSON schema each get a valid object from the demo's main
// chain, while the demo's own sample traffic runs.
func TestDemoTypedAnswers(t *testing.T) {
	checkLeaks(t)
	node, dir := npmClients(t)
	bin := testenv.BuildTollfree(t)
	demo := testenv.Start(t, nil, bin, "demo", "-listen", "127.0.0.1:0")
	base := demo.WaitOutput(regexp.MustCompile(`gateway: +(http://\S+/v1) `), time.Minute)[1]
	defer demo.Stop(syscall.SIGINT, 20*time.Second)

	t.Run("openai chat.completions.parse", func(t *testing.T) {
		var v struct {
			Parsed weatherArgs
			Text   string
		}
		runClientAt(t, node, dir, "openai-chat-parse", base, "answer", &v)
		if v.Parsed.City == "" {
			t.Errorf("parse: no city in %+v", v)
		}
	})
	t.Run("openai responses.parse", func(t *testing.T) {
		var v struct {
			Parsed weatherArgs
			Text   string
		}
		runClientAt(t, node, dir, "openai-responses-schema", base, "answer", &v)
		if v.Parsed.City == "" {
			t.Errorf("responses.parse: no city in %+v", v)
		}
	})
	t.Run("AI SDK generateObject", func(t *testing.T) {
		var v struct{ Object weatherArgs }
		runClientAt(t, node, dir, "aisdk-object", base, "answer", &v)
		if v.Object.City == "" {
			t.Errorf("generateObject: %+v", v)
		}
	})
	t.Run("LangChain withStructuredOutput", func(t *testing.T) {
		var v struct {
			FunctionCalling weatherArgs `json:"functionCalling"`
			JSONSchema      weatherArgs `json:"jsonSchema"`
		}
		runClientAt(t, node, dir, "langchain-structured", base, "answer", &v)
		if v.FunctionCalling.City == "" || v.JSONSchema.City == "" {
			t.Errorf("withStructuredOutput: %+v", v)
		}
	})
}
