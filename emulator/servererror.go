package emulator

// serverFailure is the flavor's bare server error (ServerError): a failure
// that names no overload, high demand or capacity, which a gateway may
// retry once on the same route (docs/DECISIONS.md's blip).
//
//   - Gemini: 500 INTERNAL, "An internal error has occurred. Please retry
//     or report in https://developers.generativeai.google/guide/troubleshooting"
//     (github.com/PublicAffairs/openai-gemini/issues/15); its
//     OpenAI-compatible endpoint wraps it in an array (failureOf).
//   - OpenRouter: 502, its documented "model is down or we received an
//     invalid response from it" (openrouter.ai/docs/api/reference/errors-and-debugging),
//     with the body {"code":502,"message":"Network connection lost.",
//     "metadata":{"error_type":"provider_unavailable"}} in its envelope
//     (github.com/anomalyco/opencode/issues/22448).
//   - NVIDIA: its problem object with the status's title and no detail, as
//     its 429 (not captured for a 500).
//   - Cerebras and Mistral: their flat objects around OpenAI's sentence
//     (not captured).
//   - Groq, GitHub Models, Ollama and the rest: OpenAI's 500 body, "The
//     server had an error processing your request. ..." with type
//     server_error (github.com/ai-genie/chatgpt-vscode/issues/100); no
//     Groq capture was found, and Groq's other errors follow OpenAI's.
func serverFailure(c *call) failure {
	const openAIMsg = "The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if you keep seeing this error."
	switch c.prov.Flavor {
	case FlavorGemini:
		return gErr(500, "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", "INTERNAL")
	case FlavorOpenRouter:
		return orErr(502, "Network connection lost.", obj{{"error_type", "provider_unavailable"}})
	case FlavorNVIDIA:
		return problem(500, "")
	case FlavorCerebras:
		return cerebras(500, openAIMsg, "server_error", "", "internal_server_error")
	case FlavorMistral:
		return mistral(500, openAIMsg, "server_error", nil)
	}
	return oai(500, openAIMsg, "server_error", nil, nil, true)
}
