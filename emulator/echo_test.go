package emulator

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestEchoKey: with EchoKey, a refused key is quoted back in the forms
// real providers and proxies use; without it the bodies stay the flavor's
// own (TestVerbatimBodies).
func TestEchoKey(t *testing.T) {
	const sent = "tfk.Zq9-weird+KEY/with=signs"
	v := newEnv(t)
	for _, p := range []Provider{
		{Name: "full", Flavor: FlavorGroq, Key: "gsk_good", EchoKey: EchoFull},
		{Name: "masked", Flavor: FlavorGeneric, Key: "sk-good", EchoKey: EchoMasked},
		{Name: "router", Flavor: FlavorOpenRouter, Key: "sk-or-good", EchoKey: EchoFull},
		{Name: "google", Flavor: FlavorGemini, Key: "AIza-good", EchoKey: EchoFull},
		{Name: "plain", Flavor: FlavorGroq, Key: "gsk_good"},
	} {
		v.addProvider(p, Model{ID: "m"})
	}
	v.e.Script("full", "m", Step{Kind: Unauthorized}) // a key revoked: the right key, echoed
	cases := []struct {
		name   string
		got    reply
		status int
		want   string
	}{
		{"full", v.chat("full", "m", "", "Authorization", "Bearer "+sent), 401,
			`{"error":{"message":"Incorrect API key provided: ` + sent + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
		{"scripted", v.chat("full", "m", "", "Authorization", "Bearer gsk_good"), 401, `provided: gsk_good.`},
		{"masked", v.chat("masked", "m", "", "Authorization", "Bearer "+sent), 401, `provided: tfk.Zq9-****************igns.`},
		{"openrouter", v.chat("router", "m", "", "Authorization", "Bearer "+sent), 401, `provided: ` + sent + `.`},
		{"gemini", v.gemini("google", "m", false, "", "x-goog-api-key", sent), 400, `"detail": "Invalid API key: ` + sent + `"`},
		{"gemini compat", v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, "google")+"/openai/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"Hi"}]}`, "Authorization", "Bearer "+sent), 400, `"detail": "Invalid API key: ` + sent + `"`},
		{"no echo", v.chat("plain", "m", "", "Authorization", "Bearer "+sent), 401,
			`{"error":{"message":"Invalid API Key","type":"invalid_request_error","code":"invalid_api_key"}}`},
		{"no key sent", v.chat("router", "m", ""), 401, `{"error":{"message":"No auth credentials found","code":401}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got.status != tc.status || !strings.Contains(tc.got.body, tc.want) {
				t.Errorf("got %d %s\nwant %d with %s", tc.got.status, tc.got.body, tc.status, tc.want)
			}
		})
	}
}

func TestMaskKey(t *testing.T) {
	for in, want := range map[string]string{
		"sk-WRQsPabcdefghijklmnopqrstuvwxyz0123456789ABCxQBt": "sk-WRQsP***************************************xQBt",
		"abcdefghijkl": "abcd******kl",
		"ab":           "**",
	} {
		if got := maskKey(in); got != want {
			t.Errorf("maskKey(%q) = %q, want %q", in, got, want)
		}
	}
}
