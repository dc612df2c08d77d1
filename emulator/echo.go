package emulator

import "strings"

// Echo is how an auth error quotes the key a call carried. Real providers
// mostly do not (Groq's 401 is a bare "Invalid API Key"), but some do, and
// so do proxies in front of them; tollfree must not publish what comes back
// (issue 10, item 2).
type Echo int

// The echo forms.
const (
	// EchoNone answers the flavor's real auth error, naming no key.
	EchoNone Echo = iota
	// EchoFull quotes the key whole. OpenAI-dialect flavors answer OpenAI's
	// 401 (github.com/Santosl2/wpp-chatgpt/issues/3) with the key unmasked,
	// as a provider that does not mask it writes it
	// (github.com/Unstructured-IO/unstructured-api/pull/578): {"error":
	// {"message":"Incorrect API key provided: <key>. You can find your API
	// key at https://platform.openai.com/account/api-keys.","type":
	// "invalid_request_error","param":null,"code":"invalid_api_key"}}.
	// Gemini answers its 400 API_KEY_INVALID with a google.rpc.DebugInfo
	// detail "Invalid API key: <key>" (github.com/google/timesketch/pull/3703).
	EchoFull
	// EchoMasked quotes the key as OpenAI masks it: its first 8 bytes,
	// '*' for the middle, its last 4 ("sk-WRQsP***...***xQBt",
	// github.com/dKosarevsky/AI-Talks/issues/32); fewer of each for a key
	// under 24 bytes.
	EchoMasked
)

// echoFailure is the auth error of c quoting the key it carried.
func echoFailure(c *call) failure {
	key := c.gotKey
	if c.prov.EchoKey == EchoMasked {
		key = maskKey(key)
	}
	if c.prov.Flavor == FlavorGemini {
		msg := "API key not valid. Please pass a valid API key."
		return gErr(400, msg, "INVALID_ARGUMENT",
			obj{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"}, {"reason", "API_KEY_INVALID"}, {"domain", "googleapis.com"},
				{"metadata", obj{{"service", "generativelanguage.googleapis.com"}}}},
			obj{{"@type", "type.googleapis.com/google.rpc.LocalizedMessage"}, {"locale", "en-US"}, {"message", msg}},
			obj{{"@type", "type.googleapis.com/google.rpc.DebugInfo"}, {"detail", "Invalid API key: " + key}})
	}
	return oai(401, "Incorrect API key provided: "+key+". You can find your API key at https://platform.openai.com/account/api-keys.",
		"invalid_request_error", nil, "invalid_api_key", true)
}

// maskKey keeps a key's first and last bytes and stars the rest, as OpenAI
// does.
func maskKey(k string) string {
	head, tail := min(8, len(k)/3), min(4, len(k)/6)
	return k[:head] + strings.Repeat("*", len(k)-head-tail) + k[len(k)-tail:]
}
