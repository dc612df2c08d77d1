package emulator

import (
	"strconv"
	"strings"
)

// Continuations: how an emulated model answers a request to continue a
// partial answer, for a gateway that continues a broken stream on another
// route (issue 13). Two shapes are recognised, by their messages alone,
// never by a gateway's wording:
//
//   - a prefill: the conversation ends with an assistant message (Gemini:
//     a model turn), whose text the model continues; Mistral wants it
//     marked "prefix": true;
//   - an instruct continuation: the conversation ends with an assistant
//     message followed by a user message, and the assistant message's text
//     is the start of the model's answer (shorter than it): the user message
//     asked for the rest.
//
// A model refuses a prefill (Model.RefusePrefill) in its flavor's words,
// and answers either shape as Model.Continue says.

// Continuation is how a model answers a continuation (Model.Continue).
type Continuation string

// The ways to answer a continuation.
const (
	// ContinueExact answers exactly the rest of the answer (the default).
	ContinueExact Continuation = ""
	// ContinueOverlap repeats the last three words of the partial answer
	// (a partial last word included) before the rest.
	ContinueOverlap Continuation = "overlap"
	// ContinueRestart starts the answer over and reproduces it whole.
	ContinueRestart Continuation = "restart"
	// ContinueRestartDiverge starts the answer over with its first half,
	// then words the rest differently (restartTail): it cannot be joined.
	ContinueRestartDiverge Continuation = "restart_diverge"
)

// restartTail ends a ContinueRestartDiverge answer.
const restartTail = "or, to put it another way, it answers from many free tiers at once."

// prefillRefusal is the sentence of Anthropic's API for a trailing
// assistant message to a model that takes none, as OpenAI-compatible
// proxies pass it on (github.com/smallmain/vscode-unify-chat-provider/issues/249,
// github.com/anomalyco/opencode/issues/19981 [2026]).
const prefillRefusal = "This model does not support assistant message prefill. The conversation must end with a user message."

// continued is the answer text to a continuation: text (the whole answer)
// answered as the model's Continue says, when the call is one (a prefill,
// or an instruct continuation whose partial answer starts text); text
// otherwise.
func (c *call) continued(text string) string {
	shown, ok := c.prefix, c.hasPrefix
	if !ok {
		shown, ok = c.partial, c.hasPartial && len(c.partial) < len(text)
	}
	if !ok || !strings.HasPrefix(text, shown) {
		return text
	}
	switch c.model.Continue {
	case ContinueOverlap:
		return text[overlapStart(shown):]
	case ContinueRestart:
		return text
	case ContinueRestartDiverge:
		w := strings.SplitAfter(text, " ")
		n := min(max(3, len(w)/2), len(w)-1)
		return strings.Join(w[:max(n, 0)], "") + restartTail
	}
	return text[len(shown):]
}

// overlapStart is where the last three words of s start (its last word may
// be cut short).
func overlapStart(s string) int {
	w := strings.SplitAfter(s, " ")
	if w[len(w)-1] == "" {
		w = w[:len(w)-1]
	}
	if len(w) <= 3 {
		return 0
	}
	return len(strings.Join(w[:len(w)-3], ""))
}

// prefillFailure is the flavor's 400 for a trailing assistant message (a
// model turn) from a model that takes none: Mistral's for one without its
// flag (github.com/QuantumNous/new-api/issues/2858 [2026-02]), Gemini's
// since 3.6 Flash (github.com/NousResearch/hermes-agent/issues/75121,
// github.com/pipecat-ai/pipecat/pull/5821 [2026]), a chat template's for
// NVIDIA and generic vLLM-style servers (the sentence of Hugging Face chat
// templates, github.com/unslothai/unsloth/issues/334), and Anthropic's
// sentence passed on by OpenRouter (in metadata.raw, as it passes upstream
// errors) and the other OpenAI-compatible flavors (not captured for them:
// their bad-request envelope around it).
func prefillFailure(c *call) failure {
	const template = "Conversation roles must alternate user/assistant/user/assistant/..."
	switch c.prov.Flavor {
	case FlavorMistral:
		return mistral(400, "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant", "invalid_request_message_order", "3230")
	case FlavorGemini:
		f := gErr(400, "Requests ending with a model turn are not supported.", "INVALID_ARGUMENT")
		if c.compat {
			f.body = append(append([]byte("["), f.body...), ']')
		}
		return f
	case FlavorNVIDIA:
		return problem(400, template)
	case FlavorGeneric:
		return mistral(400, template, "BadRequestError", 400)
	case FlavorOpenRouter:
		raw := compact(obj{{"type", "error"}, {"error", obj{{"type", "invalid_request_error"}, {"message", prefillRefusal}}}})
		return orErr(400, "Provider returned error", obj{{"raw", string(raw)}, {"provider_name", "Anthropic"}})
	}
	bad := *c
	bad.kind, bad.step = BadRequest, Step{Kind: BadRequest, Text: prefillRefusal}
	switch c.prov.Flavor {
	case FlavorGroq:
		return groqFailure(&bad)
	case FlavorCerebras:
		return cerebrasFailure(&bad)
	case FlavorGitHub:
		return githubFailure(&bad)
	}
	return ollamaFailure(&bad)
}

// messageFieldFailure is the 400 of a flavor that checks the fields of
// each message, for a "prefix" field on message i (of role): Groq
// ("'messages.4' : for 'role:assistant' the following must be
// satisfied[('messages.4' : property 'reasoning_content' is unsupported)]")
// and Cerebras ("messages.2.assistant.reasoning_content: property
// 'messages.2.assistant.reasoning_content' is unsupported"), both as
// quoted for another field in a client's fixtures
// (github.com/ServiceStack/llms/issues/17 for Groq's form). ok is false
// for a flavor that takes the field.
func messageFieldFailure(c *call, i int, role string) (failure, bool) {
	at := "messages." + strconv.Itoa(i)
	switch c.prov.Flavor {
	case FlavorGroq:
		msg := "'" + at + "' : for 'role:" + role + "' the following must be satisfied[('" + at + "' : property 'prefix' is unsupported)]"
		return failure{status: 400, body: compact(errEnv(kv{"message", msg}, kv{"type", "invalid_request_error"}))}, true
	case FlavorCerebras:
		field := at + "." + role + ".prefix"
		return cerebras(400, field+": property '"+field+"' is unsupported", "invalid_request_error", "validation_error", "wrong_api_format"), true
	}
	return failure{}, false
}

// refusesPrefill reports whether the model refuses a prefill
// (Model.RefusePrefill).
func (e *Emulator) refusesPrefill(providerName, modelID string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.providers[providerName]; p != nil {
		if m := p.models[modelID]; m != nil {
			return m.cfg.RefusePrefill
		}
	}
	return false
}

// prefillProblem is the failure a call's prefill gets before anything
// else is looked at, with the behaviour recorded for it: a message field
// the flavor does not take ("unsupported"), or a trailing assistant
// message the model refuses ("prefill_refused"). ok is false for none.
func (e *Emulator) prefillProblem(c *call) (f failure, behaviour string, ok bool) {
	if c.fieldAt >= 0 {
		if f, ok := messageFieldFailure(c, c.fieldAt, c.fieldRole); ok {
			return f, "unsupported", true
		}
	}
	if !c.hasPrefix {
		return failure{}, "", false
	}
	if c.prov.Flavor == FlavorMistral && !c.prefixFlag || e.refusesPrefill(c.prov.Name, c.modelID) {
		return prefillFailure(c), "prefill_refused", true
	}
	return failure{}, "", false
}
