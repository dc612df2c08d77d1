package emulator

import (
	"strings"
	"testing"
)

// TestStreamReasoningAndChunkBytes: Step.Reasoning streams thinking before
// the answer in each dialect's shape, and Step.ChunkBytes cuts the answer
// into byte pieces on character boundaries.
func TestStreamReasoningAndChunkBytes(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "m"})
	v.add(FlavorGemini, Model{ID: "g"})
	const answer = "a <think>é</think>b"
	step := Step{Kind: Answer, Text: answer, Reasoning: "hmm so", ChunkBytes: 4}

	v.e.Script("groq", "m", step)
	got := v.call(FlavorGroq, "m", true).body
	for _, want := range []string{`"delta":{"reasoning":"hmm "}`, `"delta":{"reasoning":"so"}`, `"delta":{"content":"a <t"}`, `"delta":{"content":"hink"}`, `"delta":{"content":">é<"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("groq stream lacks %s:\n%s", want, got)
		}
	}
	if strings.Index(got, `"reasoning":"so"`) > strings.Index(got, `"content":"a <t"`) {
		t.Errorf("reasoning comes after the content:\n%s", got)
	}

	v.e.Script("gemini", "g", step)
	got = v.call(FlavorGemini, "g", true).body
	if !strings.Contains(got, `"thought": true`) {
		t.Errorf("gemini stream lacks a thought part:\n%s", got)
	}
	if byteChunks("é", 1)[0] != "é" {
		t.Errorf("byteChunks cut inside a character")
	}
}

// TestBadTextRefused: a body with a lone surrogate escape or invalid UTF-8
// is refused with a 400 in both dialects, as some real APIs do; a pair, or
// an escaped backslash before "u", is fine.
func TestBadTextRefused(t *testing.T) {
	tests := []struct {
		name    string
		content string
		bad     bool
	}{
		{"lone high", `"\ud83d"`, true},
		{"lone high then text", `"\ud83d x"`, true},
		{"lone low", `"\ude00"`, true},
		{"pair", `"\ud83d\ude00"`, false},
		{"escaped backslash", `"\\ud83d"`, false},
		{"invalid utf-8", "\"\xff\"", true},
		{"plain", `"hi"`, false},
	}
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "m"})
	v.add(FlavorGemini, Model{ID: "g"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := badText([]byte(tt.content)); got != tt.bad {
				t.Errorf("badText(%s) = %v, want %v", tt.content, got, tt.bad)
			}
			want := 200
			if tt.bad {
				want = 400
			}
			r := v.do(t.Context(), "POST", v.e.BaseURL(v.srv.URL, "groq")+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":`+tt.content+`}]}`)
			if r.status != want {
				t.Errorf("openai flavor: status %d, want %d: %s", r.status, want, r.body)
			}
			g := v.gemini("gemini", "g", false, `{"contents":[{"role":"user","parts":[{"text":`+tt.content+`}]}]}`)
			if g.status != want {
				t.Errorf("gemini: status %d, want %d: %s", g.status, want, g.body)
			}
		})
	}
}
