package llm

import (
	"encoding/json"
	"testing"
)

func TestNeeds(t *testing.T) {
	img := json.RawMessage(`[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]`)
	remote := json.RawMessage(`[{"type":"image_url","image_url":{"url":"https://example.com/a.png","detail":"low"}}]`)
	audio := json.RawMessage(`[{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]`)
	for _, tc := range []struct {
		name string
		req  Request
		want Needs
	}{
		{"text", Request{Messages: []Message{{Role: "user", Content: "hi"}}}, 0},
		{"text parts", Request{Messages: []Message{{Role: "user", Parts: json.RawMessage(`[{"type":"text","text":"hi"}]`)}}}, 0},
		{"tools", Request{Messages: []Message{{Role: "user", Content: "hi"}}, Extra: map[string]json.RawMessage{"tools": json.RawMessage(`[{"type":"function","function":{"name":"f"}}]`)}}, NeedTools},
		{"empty tools", Request{Messages: []Message{{Role: "user", Content: "hi"}}, Extra: map[string]json.RawMessage{"tools": json.RawMessage(`[]`)}}, 0},
		{"tool loop", Request{Messages: []Message{{Role: "assistant", ToolCalls: json.RawMessage(`[{}]`)}, {Role: "tool", Content: "42"}}}, NeedTools},
		{"image", Request{Messages: []Message{{Role: "user", Parts: img}}}, NeedVision},
		{"remote image", Request{Messages: []Message{{Role: "user", Parts: remote}}}, NeedVision | NeedMediaURL},
		{"audio", Request{Messages: []Message{{Role: "user", Parts: audio}}}, NeedAudio},
	} {
		if got := tc.req.Needs(); got != tc.want {
			t.Errorf("%s: Needs = %b, want %b", tc.name, got, tc.want)
		}
	}
	parts, err := ParseParts(remote)
	if err != nil || len(parts) != 1 || parts[0].URL != "https://example.com/a.png" || parts[0].Detail != "low" || !parts[0].Remote() {
		t.Errorf("ParseParts = %+v, %v", parts, err)
	}
}
