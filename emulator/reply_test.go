package emulator

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestReplyReadsTheMessages: a model with Reply answers what Reply makes of
// the call's messages, in both dialects (a Gemini systemInstruction is the
// system turn, a model turn the assistant's); a step's Text still wins.
func TestReplyReadsTheMessages(t *testing.T) {
	v := newEnv(t)
	reply := func(turns []Turn) string {
		var parts []string
		for _, tu := range turns {
			parts = append(parts, tu.Role+"="+tu.Text)
		}
		return strings.Join(parts, "|")
	}
	v.add(FlavorGroq, Model{ID: "m", Reply: reply})
	v.add(FlavorGemini, Model{ID: "g", Reply: reply})

	r := v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, FlavorGroq)+"/chat/completions",
		`{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":[{"type":"text","text":"Q1"}]},{"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]}`)
	if want := `system=S|user=Q1|assistant=A1|user=Q2`; r.status != 200 || !strings.Contains(r.body, want) {
		t.Errorf("openai dialect: %d %s, want an answer %q", r.status, r.body, want)
	}
	r = v.gemini(FlavorGemini, "g", false, `{"systemInstruction":{"parts":[{"text":"S"}]},"contents":[{"role":"user","parts":[{"text":"Q1"}]},{"role":"model","parts":[{"text":"A1"}]},{"role":"user","parts":[{"text":"Q2"}]}]}`)
	if want := `system=S|user=Q1|assistant=A1|user=Q2`; r.status != 200 || !strings.Contains(r.body, want) {
		t.Errorf("gemini dialect: %d %s, want an answer %q", r.status, r.body, want)
	}
	v.e.Script(FlavorGroq, "m", Step{Kind: Answer, Text: "scripted"})
	if r := v.chat(FlavorGroq, "m", ""); !strings.Contains(r.body, `"scripted"`) || strings.Contains(r.body, "user=") {
		t.Errorf("a step's Text did not win over Reply: %s", r.body)
	}
}
