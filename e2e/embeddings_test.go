package e2e_test

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/tollfree/tollfree/emulator"
)

func cosine(a []float64, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	return dot / math.Sqrt(na*nb)
}

// TestEmbeddingsOpenAIGo (issue 33): openai-go's embeddings.create against
// the gateway, on a chain of one model (gemini-embedding-001 on Gemini's
// native API first, then on its OpenAI-compatible endpoint): vectors in
// order, one per input, of the asked dimensions, floats or base64 (which
// the SDK decodes); when the native route's quota is spent, the second
// route answers, and its vectors point the same way for the same texts;
// a chat chain is refused.
func TestEmbeddingsOpenAIGo(t *testing.T) {
	checkLeaks(t)
	s := clientsStack(t)
	c := goClient(s)
	ctx := t.Context()
	texts := []string{"free tiers", "a gateway", "rate limits"}
	params := openai.EmbeddingNewParams{Model: "vectors", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts}, Dimensions: openai.Int(768)}
	first, err := c.Embeddings.New(ctx, params)
	if err != nil {
		t.Fatalf("embeddings: %v", err)
	}
	if len(first.Data) != 3 || first.Model != "gemini/gemini-embedding-001" || first.Usage.PromptTokens == 0 {
		t.Fatalf("embeddings: %d vectors, model %q, usage %+v", len(first.Data), first.Model, first.Usage)
	}
	for i, d := range first.Data {
		if d.Index != int64(i) || len(d.Embedding) != 768 {
			t.Errorf("vector %d: index %d, %d dimensions", i, d.Index, len(d.Embedding))
		}
	}
	if n := s.emu.Calls("gemini", "gemini-embedding-001"); n != 1 {
		t.Errorf("%d calls for 3 inputs, want one batch", n)
	}

	// base64, as the npm SDK asks by default.
	params.EncodingFormat = openai.EmbeddingNewParamsEncodingFormatBase64
	b64, err := c.Embeddings.New(ctx, params)
	if err != nil || len(b64.Data) != 3 {
		t.Fatalf("base64: %v", err)
	}

	// The native route's day spent: the same model behind the
	// OpenAI-compatible endpoint answers, with comparable vectors.
	s.emu.Script("gemini", "gemini-embedding-001", emulator.Step{Kind: emulator.RateDay})
	params.EncodingFormat = ""
	second, err := c.Embeddings.New(ctx, params)
	if err != nil || second.Model != "gemini-compat/gemini-embedding-001" {
		t.Fatalf("failover: %v, model %q", err, second.Model)
	}
	for i := range texts {
		if cs := cosine(first.Data[i].Embedding, second.Data[i].Embedding); cs < 0.999 {
			t.Errorf("input %d: the two routes' vectors are at cosine %.4f; one model's must agree", i, cs)
		}
	}

	_, err = c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "agent", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("x")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Code != "model_not_embeddings" {
		t.Errorf("a chat chain: %v", err)
	}
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "vectors", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, "/v1/embeddings") {
		t.Errorf("chat on an embeddings chain: %v", err)
	}
}

// TestReadmeAgentAndVectors: the README's block of an agent chain, a
// vectors chain and media hosts, as written: it loads, and both chains
// answer (a tool call, vectors).
func TestReadmeAgentAndVectors(t *testing.T) {
	checkLeaks(t)
	s := startStackWith(t, stackOptions{config: readmeConfig(t, "**Tools, images and audio: routes chosen")})
	s.emu.AddModel("gemini", emulator.Model{ID: "gemini-2.5-flash", Follows: true})
	s.emu.AddModel("gemini", emulator.Model{ID: "gemini-embedding-001", Embedding: true, Dimensions: 3072})
	if m := s.plan.Media; len(m.FetchHosts) != 2 || !m.Allows("a.cdn.example.com") || m.MaxBytes != 5<<20 {
		t.Errorf("media: %+v", m)
	}
	c := goClient(s)
	e, err := c.Embeddings.New(t.Context(), openai.EmbeddingNewParams{Model: "vectors", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("a")}})
	if err != nil || len(e.Data) != 1 || len(e.Data[0].Embedding) != 3072 {
		t.Fatalf("vectors: %v", err)
	}
	cc, err := c.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: "agent",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather?")},
		Tools:    []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_weather", Parameters: weatherParams})}})
	if err != nil || cc.Choices[0].FinishReason != "tool_calls" || cc.Choices[0].Message.ToolCalls[0].Function.Name != "get_weather" {
		t.Fatalf("agent: %v %+v", err, cc)
	}
}

// TestEmbeddingsCached (issue 33): an embeddings chain with cache_ttl
// answers a repeated request from the cache, with no call.
func TestEmbeddingsCached(t *testing.T) {
	checkLeaks(t)
	s := startStackWith(t, stackOptions{providers: clientsProviders, config: `
chains:
  vectors:
    routes: [gemini/gemini-embedding-001]
    cache_ttl: 1h
`})
	s.emu.AddModel("gemini", emulator.Model{ID: "gemini-embedding-001", Embedding: true, Dimensions: 3072})
	body := []byte(`{"model":"vectors","input":["free tiers","a gateway"],"dimensions":4}`)
	first := harnessOf(t, s).post("/v1/embeddings", "application/json", body)
	second := harnessOf(t, s).post("/v1/embeddings", "application/json", body)
	if first.status != 200 || second.status != 200 || second.header.Get("X-Tollfree-Cache") != "hit" || first.header.Get("X-Tollfree-Cache") != "miss" {
		t.Fatalf("statuses %d, %d; cache %q then %q", first.status, second.status, first.header.Get("X-Tollfree-Cache"), second.header.Get("X-Tollfree-Cache"))
	}
	if n := s.emu.Calls("gemini", "gemini-embedding-001"); n != 1 {
		t.Errorf("%d calls, want 1: the second answer is the cache's", n)
	}
	var a, b struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if json.Unmarshal(first.body, &a) != nil || json.Unmarshal(second.body, &b) != nil || len(b.Data) != 2 || b.Data[1].Embedding[3] != a.Data[1].Embedding[3] {
		t.Errorf("the cached vectors differ: %s\n%s", first.body, second.body)
	}
}
