package httpapi

import (
	"testing"

	"github.com/tollfree/tollfree/config"
)

func TestHideRoutes(t *testing.T) {
	up := &config.Provider{Name: "up"}
	ch := &config.Chain{Name: "answer", HideRoute: true, Routes: []*config.Route{
		{ID: "up/m3", Model: "m3", Provider: up},
		{ID: "openrouter/openai/gpt-oss-120b:free", Model: "openai/gpt-oss-120b:free", Provider: &config.Provider{Name: "openrouter"}},
	}}
	for _, tc := range []struct{ in, want string }{
		{"up/m3 auth until 2026-06-15T11:00:00Z", "[route] auth until 2026-06-15T11:00:00Z"},
		{"The model `m3` does not support logit_bias.", "The model `[model]` does not support logit_bias."},
		{"model m3.", "model [model]."},
		{"m3: not found", "[model]: not found"},
		{"provider UP failed; support says m30 and m3x are fine", "provider [provider] failed; support says m30 and m3x are fine"},
		{"openai/gpt-oss-120b:free is rate limited", "[model] is rate limited"},
		{"no İstanbul here, m3", "no İstanbul here, [model]"},
	} {
		if got := hideRoutes(ch, tc.in); got != tc.want {
			t.Errorf("hideRoutes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	shown := *ch
	shown.HideRoute = false
	if got := hideRoutes(&shown, "up/m3 auth"); got != "up/m3 auth" {
		t.Errorf("a chain that shows its routes changed the message to %q", got)
	}
}
