package route

import (
	"encoding/json"
	"testing"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

// TestBlame: a refused field rests the route (bad_config) only when the
// route itself sent it; what the caller sent, or what nobody can be shown to
// have sent, stays with the request (issue 10, item 1).
func TestBlame(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	temp := 0.5
	caller := func(f func(*llm.Request)) *llm.Request {
		r := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}}
		if f != nil {
			f(r)
		}
		return r
	}
	withExtra := func(m map[string]json.RawMessage) *config.Route { return &config.Route{ID: "p/m", Extra: m} }
	plain := withExtra(nil)
	unsupported := func(param, msg string) failure.Verdict {
		return failure.Verdict{Class: failure.Unsupported, Scope: failure.ScopeRequest, Param: param, Message: msg}
	}
	tests := []struct {
		name string
		rt   *config.Route
		req  *llm.Request
		v    failure.Verdict
		want failure.Class
	}{
		{"caller's logit_bias", plain, caller(func(r *llm.Request) { r.Extra = map[string]json.RawMessage{"logit_bias": raw(`{"1":-100}`)} }),
			unsupported("logit_bias", "`logit_bias` is not supported with this model"), failure.Unsupported},
		{"caller's reasoning_effort, xAI spelling", plain, caller(func(r *llm.Request) { r.ReasoningEffort = "high" }),
			unsupported("reasoningEffort", "Model grok-4 does not support parameter reasoningEffort."), failure.Unsupported},
		{"route's reasoning_effort", withExtra(map[string]json.RawMessage{"reasoning_effort": raw(`"low"`)}), caller(nil),
			unsupported("reasoning_effort", "`reasoning_effort` is not supported with this model"), failure.BadConfig},
		{"route's value wins over the caller's", withExtra(map[string]json.RawMessage{"reasoning_effort": raw(`"low"`)}), caller(func(r *llm.Request) { r.ReasoningEffort = "high" }),
			unsupported("reasoning_effort", "`reasoning_effort` is not supported with this model"), failure.BadConfig},
		{"route's nested thinking config", withExtra(map[string]json.RawMessage{"generationConfig": raw(`{"thinkingConfig":{"thinkingLevel":"LOW"}}`)}), caller(nil),
			unsupported("thinkingConfig", "Thinking level is not supported for this model."), failure.BadConfig},
		{"route's thinking config, Google's path spelling", withExtra(map[string]json.RawMessage{"thinkingConfig": raw(`{"thinkingLevel":"LOW"}`)}), caller(nil),
			unsupported("generation_config.thinking_config.thinking_level", `Unknown name "thinking_level" at 'generation_config.thinking_config'`), failure.BadConfig},
		{"caller's reasoning_effort became a thinking config", plain, caller(func(r *llm.Request) { r.ReasoningEffort = "none" }),
			unsupported("thinkingConfig", "Thinking level MINIMAL is not supported for this model."), failure.Unsupported},
		{"route's dotted field", withExtra(map[string]json.RawMessage{"chat_template_kwargs": raw(`{"enable_thinking":true}`)}), caller(nil),
			unsupported("chat_template_kwargs.enable_thinking", "chat_template_kwargs.enable_thinking is not supported for this model"), failure.BadConfig},
		{"a null extra is not sent", withExtra(map[string]json.RawMessage{"temperature": raw(`null`)}), caller(func(r *llm.Request) { r.Temperature = &temp }),
			unsupported("temperature", "Unsupported parameter: 'temperature' is not supported with this model."), failure.Unsupported},
		{"max_tokens the router set", plain, caller(nil),
			unsupported("max_tokens", "Unsupported parameter: 'max_tokens' is not supported with this model."), failure.BadConfig},
		{"max_tokens the caller set", plain, caller(func(r *llm.Request) { r.MaxTokens = 100 }),
			unsupported("max_tokens", "Unsupported parameter: 'max_tokens' is not supported with this model."), failure.Unsupported},
		{"stream_options of the provider", plain, caller(nil),
			unsupported("body.stream_options", "Extra inputs are not permitted: body.stream_options"), failure.BadConfig},
		{"stream_options the caller asked for", plain, caller(func(r *llm.Request) { r.IncludeUsage = true }),
			unsupported("body.stream_options", "Extra inputs are not permitted: body.stream_options"), failure.Unsupported},
		{"route's setting refused with the caller's JSON mode", withExtra(map[string]json.RawMessage{"reasoning_format": raw(`"raw"`)}),
			caller(func(r *llm.Request) { r.ResponseFormat = raw(`{"type":"json_object"}`) }),
			unsupported("reasoning_format", "reasoning_format=raw is not supported with JSON mode or tool calling"), failure.Unsupported},
		{"route's setting refused, caller sent nothing it names", withExtra(map[string]json.RawMessage{"reasoning_format": raw(`"raw"`)}),
			caller(func(r *llm.Request) { r.Temperature = &temp }),
			unsupported("reasoning_format", "reasoning_format=raw is not supported with JSON mode or tool calling"), failure.BadConfig},
		{"no field named", withExtra(map[string]json.RawMessage{"reasoning_format": raw(`"parsed"`)}), caller(nil),
			unsupported("", "This parameter is not supported with this model."), failure.Unsupported},
		{"a field nobody sent", plain, caller(nil),
			unsupported("systemInstruction", "Developer instruction is not enabled for models/gemma-3-27b-it"), failure.Unsupported},
		{"other classes pass", withExtra(map[string]json.RawMessage{"reasoning_effort": raw(`"low"`)}), caller(nil),
			failure.Verdict{Class: failure.BadRequest, Scope: failure.ScopeRequest, Param: "reasoning_effort"}, failure.BadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := blame(tt.v, tt.rt, tt.req)
			if got.Class != tt.want {
				t.Fatalf("class = %s, want %s", got.Class, tt.want)
			}
			wantScope := failure.ScopeRequest
			if tt.want == failure.BadConfig {
				wantScope = failure.ScopeRoute
			}
			if got.Scope != wantScope {
				t.Errorf("scope = %s, want %s", got.Scope, wantScope)
			}
			if got.Message != tt.v.Message || got.Param != tt.v.Param {
				t.Errorf("message or param changed: %+v", got)
			}
		})
	}
}
