package provider

import (
	"encoding/json"

	"github.com/tollfree/tollfree/llm"
)

// EmbedCall is one attempt of an embedding route (issue 33). Adapters that
// serve embeddings have a third method beside Chat and Stream:
//
//	Embed(ctx context.Context, call provider.EmbedCall) (*llm.Embeddings, error)
//
// and report failures as Chat does, so that the same classifier, rests
// and budgets apply.
type EmbedCall struct {
	// Model is the provider's id for the model.
	Model string
	// Request is what to embed. Adapters must not modify it.
	Request *llm.EmbedRequest
	// Extra are the route's extra body fields (an input_type...).
	Extra map[string]json.RawMessage
}
