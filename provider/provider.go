// Package provider holds what every provider adapter shares: the Call the
// router hands to one route. The adapters themselves live in the
// sub-packages openaicompat (every OpenAI-shaped API) and gemini (Google's
// native generateContent); both have the same two methods,
//
//	Chat(ctx context.Context, call provider.Call) (*llm.Response, error)
//	Stream(ctx context.Context, call provider.Call) (llm.Stream, error)
//
// and report every failure as a *failure.UpstreamError, so one classifier
// decides what a failure means whatever the dialect.
package provider

import (
	"encoding/json"

	"github.com/tollfree/tollfree/llm"
)

// Call is one attempt of one route: which model, what to ask, and the
// route's own extra body fields.
type Call struct {
	// Model is the provider's id for the model (openai/gpt-oss-120b at Groq).
	Model string
	// Request is the caller's request, already fitted to the route. It is
	// shared between attempts: adapters must not modify it.
	Request *llm.Request
	// Extra are the route's extra top-level body fields (a thinking level,
	// reasoning_format...). They override the caller's fields of the same
	// name. For Gemini, keys name generationConfig fields (thinkingConfig...)
	// unless they are top-level generateContent fields (safetySettings,
	// tools, toolConfig, cachedContent).
	Extra map[string]json.RawMessage
}
