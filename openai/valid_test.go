package openai

import (
	"encoding/json"
	"testing"
)

// TestValidJSON: validJSON agrees with json.Valid on what upstreams send and
// on the usual ways a payload is broken, so that the fast path is taken.
func TestValidJSON(t *testing.T) {
	for _, s := range []string{
		string(benchChunk),
		`{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":330,"completion_tokens":18,"total_tokens":348}}`,
		` {"a" : [ 0, -1, 2.5, 1e9, -3.25E-2, true, false, null, "\"\\\/\b\f\n\r\t\u00e9" ] } `,
		`[]`, `{}`, `""`, `0`,
		`{"a":1,}`, `[1 2]`, `01`, `1.`, `-`, `1e`, `"\x"`, `"\u12G4"`, "\"\x01\"", `{"a"}`, `{"a":}`, `{1:2}`, `[`, `{"a":1}}`, `tru`, `nul`,
	} {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid says %v", s, got, want)
		}
	}
}
