package emulator

import (
	"net/http"
	"strconv"
)

// Model lists (issue 35): each provider lists its models in its own shape,
// and a test changes the list while it runs, as providers do every few
// weeks: a model removed (Unlist, or Gone for its calls too), one added
// (AddModel), a price changed (SetPrice). OpenAI-compatible flavors answer
// GET /models with {"object":"list","data":[{"id",...}]}; OpenRouter's
// entries add "context_length" and "pricing" ({"prompt","completion"} in
// dollars per token, as strings); Gemini answers models.list with
// {"models":[{"name":"models/ID",...}]}.

// Price is a model's price in dollars per token, as OpenRouter lists it.
type Price struct {
	Prompt, Completion float64
}

// Unlist takes the model out of its provider's model list (true) or puts
// it back (false); its calls are answered as before. It panics on an
// unknown provider or model: that is a mistake in the calling code.
func (e *Emulator) Unlist(providerName, modelID string, unlisted bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mustModel(providerName, modelID).cfg.Unlisted = unlisted
}

// SetPrice changes what the provider's list says the model costs.
func (e *Emulator) SetPrice(providerName, modelID string, p Price) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mustModel(providerName, modelID).cfg.Price = p
}

// listed returns the provider's listed models, sorted by id.
func (e *Emulator) listed(providerName string) []Model {
	var out []Model
	for _, id := range e.Models(providerName) {
		if m, ok := e.modelOf(providerName, id); ok && !m.Unlisted {
			out = append(out, m)
		}
	}
	return out
}

// writeModels answers GET /models in the flavor's shape.
func (e *Emulator) writeModels(w http.ResponseWriter, p Provider) {
	data := []obj{}
	for _, m := range e.listed(p.Name) {
		o := obj{{"id", m.ID}, {"object", "model"}, {"created", 1700000000}, {"owned_by", p.Name}}
		if p.Flavor == FlavorOpenRouter {
			o = obj{{"id", m.ID}, {"name", m.ID}, {"created", 1700000000}}
			if m.ContextLength > 0 {
				o = append(o, kv{"context_length", m.ContextLength})
			}
			o = append(o, kv{"pricing", obj{{"prompt", perToken(m.Price.Prompt)}, {"completion", perToken(m.Price.Completion)}}})
		}
		data = append(data, o)
	}
	w.Header().Set("Content-Type", "application/json")
	if p.Flavor == FlavorOpenRouter {
		w.Write(compact(obj{{"data", data}}))
		return
	}
	w.Write(compact(obj{{"object", "list"}, {"data", data}}))
}

// geminiModels is Gemini's models.list body.
func (e *Emulator) geminiModels(p Provider) obj {
	models := []obj{}
	for _, m := range e.listed(p.Name) {
		methods := []string{"generateContent", "countTokens"}
		if m.Embedding {
			methods = []string{"embedContent", "batchEmbedContents"}
		}
		models = append(models, obj{{"name", "models/" + m.ID}, {"displayName", m.ID}, {"supportedGenerationMethods", methods}})
	}
	return obj{{"models", models}}
}

// perToken writes a price as OpenRouter does: "0" for free.
func perToken(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}
