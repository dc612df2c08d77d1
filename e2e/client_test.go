package e2e_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tollfree/tollfree/emulator"
)

func newClient(h *harness) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(h.srv.URL+"/v1/"),
		option.WithAPIKey("unused"),
		option.WithMaxRetries(0),
	)
}

// TestOpenAIClient: the official openai-go client, unmodified, gets answers
// (with the answering route as model, and its usage) and typed errors.
func TestOpenAIClient(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, answerChain)
	c := newClient(h)
	ctx := context.Background()

	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
	resp, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "answer",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Hello there")},
	})
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	if resp.Model != "groq/llama-3.1-8b-instant" {
		t.Errorf("model = %q, want the route that answered", resp.Model)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Message.Content == "" || resp.Choices[0].FinishReason != "stop" {
		t.Errorf("choices = %+v", resp.Choices)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
		t.Errorf("usage = %+v, want the route's usage", resp.Usage)
	}

	// A caller's mistake comes back as a typed 400.
	// groq/llama-3.3-70b-versatile now rests, so 8b is the first route.
	h.emu.Script("groq", "llama-3.1-8b-instant", emulator.Step{Kind: emulator.BadRequest, Text: "'top_logprobs' must be at most 20"})
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "answer",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, "top_logprobs") {
		t.Fatalf("err = %v, want a 400 naming the provider's reason", err)
	}

	// An unknown chain is a typed 404 model_not_found.
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "nope",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")},
	})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" {
		t.Fatalf("err = %v, want 404 model_not_found", err)
	}

	// The chains are listed as models, then the routes (issue 16).
	models, err := c.Models.List(ctx)
	if err != nil {
		t.Fatalf("models: %v", err)
	}
	var ids []string
	for _, m := range models.Data {
		ids = append(ids, m.ID+" by "+m.OwnedBy)
	}
	want := "answer by tollfree chain,gem by tollfree chain,groq/llama-3.3-70b-versatile by groq,groq/llama-3.1-8b-instant by groq," +
		"gemini/gemini-2.5-flash-lite by gemini,cerebras/gpt-oss-120b by cerebras,gemini/gemini-2.5-flash by gemini"
	if strings.Join(ids, ",") != want {
		t.Errorf("models = %v, want the chains, then the routes", ids)
	}
}
