package emulator

// Refusals of what a model does not take (issue 33): function tools, an
// image, audio (Model.NoTools, NoVision, NoAudio), and chat asked of an
// embedding model. Each flavor refuses in its words; where no provider's
// exact words were captured, the message is OpenAI's own, which
// OpenAI-compatible servers copy, and the comment says so.

// mediaRefusal returns the flavor's refusal of what c asks that m does not
// take; ok is false when m takes it all.
func mediaRefusal(c *call, m Model) (failure, bool) {
	a := &c.ask
	gemini := c.prov.Flavor == FlavorGemini && !c.compat
	switch {
	case m.Embedding:
		if gemini {
			return gErr(400, "models/"+c.modelID+" is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.", "INVALID_ARGUMENT"), true
		}
		// OpenAI's answer to a chat call of an embedding model.
		return oai(404, "This is not a chat model and thus not supported in the v1/chat/completions endpoint. Did you mean to use v1/completions?",
			"invalid_request_error", "model", nil, true), true
	case m.NoTools && len(a.tools) > 0:
		switch {
		case gemini:
			// Gemma on Gemini's API, quoted in public projects.
			return gErr(400, "Function calling is not enabled for models/"+c.modelID, "INVALID_ARGUMENT"), true
		case c.prov.Flavor == FlavorOpenRouter:
			// docs/PROVIDERS.md, OpenRouter's 404 for a feature no
			// endpoint of the model serves.
			return orErr(404, "No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing", nil), true
		}
		return oai(400, "tools is not supported with this model.", "invalid_request_error", "tools", "unsupported_parameter", true), true
	case m.NoVision && len(a.images) > 0:
		switch {
		case gemini:
			// Illustrative: the words of Gemini's refusal of an image
			// were not captured.
			return gErr(400, "Image input modality is not enabled for models/"+c.modelID, "INVALID_ARGUMENT"), true
		case c.prov.Flavor == FlavorOpenRouter:
			return orErr(404, "No endpoints found that support image input", nil), true
		}
		// OpenAI's refusal of an image for a text-only model.
		return oai(400, "Invalid content type. image_url is only supported by certain models.", "invalid_request_error", "messages.[0].content.[1].type", "invalid_value", true), true
	case m.NoAudio && a.audio > 0:
		if gemini {
			return gErr(400, "Audio input modality is not enabled for models/"+c.modelID, "INVALID_ARGUMENT"), true
		}
		return oai(400, "Invalid content type. input_audio is only supported by certain models.", "invalid_request_error", "messages.[0].content.[0].type", "invalid_value", true), true
	}
	return failure{}, false
}
