package config

import (
	"strings"
	"testing"
)

// TestRoleConfigErrors: a role naming a different model, or with the wrong
// syntax, is a config error naming the variable.
func TestRoleConfigErrors(t *testing.T) {
	keys := map[string]string{"GROQ_API_KEY": "gsk_test_groq_key_0001", "CEREBRAS_API_KEY": "csk-test-cerebras-0001"}
	tests := []struct{ value, want string }{
		{"openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:cerebras:llama3.1-8b", "PLANNER_MODEL"},
		{"groq/openai/gpt-oss-120b", "PLANNER_MODEL"},
	}
	for _, tt := range tests {
		env := func(k string) string {
			if k == "PLANNER_MODEL" {
				return tt.value
			}
			return keys[k]
		}
		_, err := Parse("t.yaml", []byte("providers:\n  groq: {}\n  cerebras: {}\n"), env)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want one naming %s", tt.value, err, tt.want)
		}
	}
}
