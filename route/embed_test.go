package route

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/llm"
)

const embedProviders = `
providers:
  gemini: {preset: gemini, base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  compat:
    dialect: openai
    base_url: EMU/gemini/v1beta/openai
    api_key: ${GEMINI_API_KEY}
    models:
      gemini-embedding-001: {embedding: true, dimensions: 3072, max_context: 2048}
chains:
  vectors: {routes: [gemini/gemini-embedding-001, compat/gemini-embedding-001]}
`

// TestEmbedWalk (issue 33): an embeddings request walks its chain as chat
// does: a 429 rests the first route and the second answers, one call for
// the whole batch; an input longer than a route's context skips the route
// (each input must fit on its own, the batch need not); a probe of an
// embedding route asks for a vector.
func TestEmbedWalk(t *testing.T) {
	s := newStackWith(t, stackOptions{providers: embedProviders})
	s.emu.AddModel("gemini", emulator.Model{ID: "gemini-embedding-001", Embedding: true, Dimensions: 3072})
	ch := s.chain("vectors")
	batch := &llm.EmbedRequest{Input: []string{"one", "two", "three"}, Dimensions: 8}
	res, err := s.r.Embed(context.Background(), ch, s.nextID(), batch)
	if err != nil || res.Route.ID != "gemini/gemini-embedding-001" || len(res.Embeddings.Vectors) != 3 || len(res.Embeddings.Vectors[0]) != 8 {
		t.Fatalf("embed: %v %+v", err, res)
	}
	s.emu.Script("gemini", "gemini-embedding-001", emulator.Step{Kind: emulator.RateMinute})
	res, err = s.r.Embed(context.Background(), ch, s.nextID(), batch)
	if err != nil || res.Route.ID != "compat/gemini-embedding-001" || res.Attempts != 2 {
		t.Fatalf("failover: %v %+v", err, res)
	}
	if _, ok := s.rest("gemini/gemini-embedding-001"); !ok {
		t.Error("the route that answered 429 does not rest")
	}
	// Many inputs, each small, fit; one input over 2,048 tokens does not.
	s.clk.Advance(5 * time.Minute) // the 429's rest is over
	many := &llm.EmbedRequest{Input: make([]string, 300), Dimensions: 8}
	for i := range many.Input {
		many.Input[i] = strings.Repeat("word ", 20)
	}
	if _, err := s.r.Embed(context.Background(), ch, s.nextID(), many); err != nil {
		t.Errorf("300 small inputs: %v", err)
	}
	long := &llm.EmbedRequest{Input: []string{strings.Repeat("word ", 3000)}}
	if _, err := s.r.Embed(context.Background(), ch, s.nextID(), long); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("an input over the context: %v", err)
	}
	if _, err := s.r.Chat(context.Background(), ch, s.nextID(), question("hi")); err == nil {
		t.Error("chat on an embeddings chain answered")
	}
	a, err := s.r.Probe(context.Background(), "compat/gemini-embedding-001", 0)
	if err != nil || a.TokensIn == 0 {
		t.Errorf("probe: %v %+v", err, a)
	}
}
