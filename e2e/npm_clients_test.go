package e2e_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/testenv"
)

// npmClients returns node's path and the folder of the JavaScript clients
// (e2e/testdata/npm-clients: openai, the Vercel AI SDK with
// @ai-sdk/openai, LangChain JS; versions that run on Node.js 18, pinned by
// its package-lock.json). The test installs nothing: .ci/run runs npm ci
// there. Without node or the installed clients it is skipped, except under
// CI, where it fails.
func npmClients(t *testing.T) (node, dir string) {
	t.Helper()
	node = node18(t, "the JavaScript clients' tests")
	dir, err := filepath.Abs(filepath.Join("testdata", "npm-clients"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"openai", "ai", "@ai-sdk/openai", "@langchain/openai", "@langchain/core", "zod"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			testenv.Unavailable(t, "the JavaScript clients are not installed: run npm ci --prefix e2e/testdata/npm-clients (.ci/run does)")
		}
	}
	return node, dir
}

// runClient runs one case of clients.mjs against the stack's gateway and
// decodes what the client returned into v.
func runClient(t *testing.T, node, dir, name string, s *stack, v any) {
	t.Helper()
	runClientAt(t, node, dir, name, s.srv.URL+"/v1", "", v)
}

// runClientAt runs one case of clients.mjs against the gateway at baseURL
// (its /v1), on chain model when not empty (the typed cases; "agent"
// otherwise), and decodes what the client returned into v.
func runClientAt(t *testing.T, node, dir, name, baseURL, model string, v any) {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "clients.mjs", name, baseURL)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=unused")
	if model != "" {
		cmd.Env = append(cmd.Env, "TOLLFREE_MODEL="+model)
	}
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node clients.mjs %s: %v\n%s", name, err, lastLines(stderr.String(), 20))
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(stdout.Bytes(), &e) == nil && e.Error != "" {
		t.Fatalf("%s: the client raised: %s", name, lastLines(e.Error, 12))
	}
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		t.Fatalf("%s: output %q: %v", name, stdout.String(), err)
	}
}

type weatherArgs struct {
	City string `json:"city"`
}

// TestOpenAINpmClients (issue 33): the official openai npm client,
// unmodified, on a chain whose first route is Gemini's native API and
// second an OpenAI-compatible one: chat.completions with tools (a tool loop
// of two turns) and with an image; responses.create whole, streamed (and
// the stream() helper), with a function tool loop and with text.format
// json_schema (responses.parse with zod); embeddings.create.
func TestOpenAINpmClients(t *testing.T) {
	checkLeaks(t)
	node, dir := npmClients(t)
	s := clientsStack(t)

	t.Run("chat tools", func(t *testing.T) {
		var v struct {
			Finish1, Tool, ID, Finish2, Text, Model string
			Args                                    weatherArgs
		}
		runClient(t, node, dir, "openai-tools", s, &v)
		if v.Finish1 != "tool_calls" || v.Tool != "get_weather" || v.Args.City == "" || !strings.HasPrefix(v.ID, "call_") ||
			v.Finish2 != "stop" || !strings.Contains(v.Text, `The tool answered: {"city":"`) || v.Model != "gemini/gemini-2.5-flash" {
			t.Errorf("tool loop: %+v", v)
		}
	})
	t.Run("chat image", func(t *testing.T) {
		var v struct{ Text, Model string }
		runClient(t, node, dir, "openai-image", s, &v)
		if !strings.Contains(v.Text, "I was shown an image/png of 8 bytes") || v.Model != "gemini/gemini-2.5-flash" {
			t.Errorf("image: %+v", v)
		}
	})
	t.Run("responses", func(t *testing.T) {
		var v struct {
			Status, Text, Model string
			InputTokens         int `json:"input_tokens"`
		}
		runClient(t, node, dir, "openai-responses", s, &v)
		if v.Status != "completed" || !strings.Contains(v.Text, "gemini/gemini-2.5-flash") || v.InputTokens == 0 {
			t.Errorf("responses.create: %+v", v)
		}
	})
	t.Run("responses stream", func(t *testing.T) {
		var v struct {
			Types                 []string
			Deltas, Final, Status string
		}
		runClient(t, node, dir, "openai-responses-stream", s, &v)
		if len(v.Types) < 4 || v.Types[0] != "response.created" || v.Types[len(v.Types)-1] != "response.completed" ||
			v.Deltas == "" || v.Final != v.Deltas || v.Status != "completed" {
			t.Errorf("streamed: %+v", v)
		}
	})
	t.Run("responses tools", func(t *testing.T) {
		var v struct {
			Tool, Text, Status string
			Args               weatherArgs
		}
		runClient(t, node, dir, "openai-responses-tools", s, &v)
		if v.Tool != "get_weather" || v.Args.City == "" || !strings.Contains(v.Text, "The tool answered:") || v.Status != "completed" {
			t.Errorf("function tool loop: %+v", v)
		}
	})
	t.Run("responses json_schema", func(t *testing.T) {
		var v struct {
			Parsed weatherArgs
			Text   string
		}
		runClient(t, node, dir, "openai-responses-schema", s, &v)
		if v.Parsed.City == "" || v.Text != `{"city":"example"}` {
			t.Errorf("json_schema: %+v", v)
		}
	})
	t.Run("embeddings", func(t *testing.T) {
		var v struct {
			Count        int
			Dims         []int
			Model        string
			PromptTokens int `json:"prompt_tokens"`
		}
		runClient(t, node, dir, "openai-embeddings", s, &v)
		if v.Count != 2 || len(v.Dims) != 2 || v.Dims[0] != 768 || v.Model != "gemini/gemini-embedding-001" || v.PromptTokens == 0 {
			t.Errorf("embeddings.create: %+v", v)
		}
	})
}

// TestAISDKClients (issue 33): the Vercel AI SDK's @ai-sdk/openai default
// provider (the Responses API), unmodified: generateText with a tool and
// stopWhen (the tool runs, its result is answered), streamText,
// generateObject, and embed.
func TestAISDKClients(t *testing.T) {
	checkLeaks(t)
	node, dir := npmClients(t)
	s := clientsStack(t)
	t.Run("generateText tools", func(t *testing.T) {
		var v struct {
			Text, Finish string
			Steps        int
			Calls        []string
		}
		runClient(t, node, dir, "aisdk-tools", s, &v)
		if v.Steps != 2 || len(v.Calls) != 1 || v.Calls[0] != "get_weather" || !strings.Contains(v.Text, `The tool answered: {"city":`) || v.Finish != "stop" {
			t.Errorf("generateText: %+v", v)
		}
	})
	t.Run("streamText", func(t *testing.T) {
		var v struct{ Text, Finish string }
		runClient(t, node, dir, "aisdk-stream", s, &v)
		if !strings.Contains(v.Text, "gemini/gemini-2.5-flash") || v.Finish != "stop" {
			t.Errorf("streamText: %+v", v)
		}
	})
	t.Run("generateObject", func(t *testing.T) {
		var v struct{ Object weatherArgs }
		runClient(t, node, dir, "aisdk-object", s, &v)
		if v.Object.City == "" {
			t.Errorf("generateObject: %+v", v)
		}
	})
	t.Run("embed", func(t *testing.T) {
		var v struct{ Dims int }
		runClient(t, node, dir, "aisdk-embed", s, &v)
		if v.Dims != 3072 {
			t.Errorf("embed: %d dimensions, want gemini-embedding-001's 3072", v.Dims)
		}
	})
}

// TestLangChainClients (issue 33): LangChain JS's ChatOpenAI, unmodified:
// bindTools (a tool loop of two turns) and withStructuredOutput by
// function calling and by JSON schema.
func TestLangChainClients(t *testing.T) {
	checkLeaks(t)
	node, dir := npmClients(t)
	s := clientsStack(t)
	t.Run("bindTools", func(t *testing.T) {
		var v struct {
			Tool, Text string
			Args       weatherArgs
		}
		runClient(t, node, dir, "langchain-tools", s, &v)
		if v.Tool != "get_weather" || v.Args.City == "" || !strings.Contains(v.Text, "The tool answered:") {
			t.Errorf("bindTools: %+v", v)
		}
	})
	t.Run("withStructuredOutput", func(t *testing.T) {
		var v struct {
			FunctionCalling weatherArgs `json:"functionCalling"`
			JSONSchema      weatherArgs `json:"jsonSchema"`
		}
		runClient(t, node, dir, "langchain-structured", s, &v)
		if v.FunctionCalling.City == "" || v.JSONSchema.City == "" {
			t.Errorf("withStructuredOutput: %+v", v)
		}
	})
}
