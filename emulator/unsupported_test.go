package emulator

import (
	"context"
	"net/http"
	"testing"

	// The gateway's classifier, to show that the refusals read as meant;
	// renamed, since this package has a failure type of its own.
	verdict "github.com/tollfree/tollfree/failure"
)

// TestUnsupportedField: a model that refuses a request field (Model.
// Unsupported) answers a call carrying it with its flavor's refusal, which
// the gateway's classifier reads as that field unsupported (issue 10, item
// 1); a call without the field is answered.
func TestUnsupportedField(t *testing.T) {
	tests := []struct {
		flavor, field, body string
		status              int
		param               string // the Param the classifier finds
	}{
		{FlavorGroq, "logit_bias", `,"logit_bias":{"50256":-100}`, 400, "logit_bias"},
		{FlavorGroq, "store", `,"store":true`, 400, "store"},
		{FlavorCerebras, "logit_bias", `,"logit_bias":{"50256":-100}`, 400, "logit_bias"},
		{FlavorOpenRouter, "logit_bias", `,"logit_bias":{"50256":-100}`, 400, "logit_bias"},
		{FlavorNVIDIA, "logit_bias", `,"logit_bias":{"50256":-100}`, 400, "logit_bias"},
		{FlavorMistral, "frequency_penalty", `,"frequency_penalty":0.5`, 422, "body.frequency_penalty"},
		{FlavorGitHub, "top_p", `,"top_p":0.5`, 400, "top_p"},
		{FlavorGeneric, "reasoning_effort", `,"reasoning_effort":"low"`, 400, "reasoning_effort"},
		{FlavorGemini, "thinkingConfig", `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":0}}}`, 400, "generation_config.thinkingConfig"},
		{"gemini-compat", "reasoning_effort", `,"reasoning_effort":"low"`, 400, "reasoning_effort"},
	}
	for _, tt := range tests {
		t.Run(tt.flavor+"/"+tt.field, func(t *testing.T) {
			v := newEnv(t)
			flavor := tt.flavor
			if flavor == "gemini-compat" {
				flavor = FlavorGemini
			}
			v.add(flavor, Model{ID: "model-a", Unsupported: []string{tt.field}})
			send := func(with bool) reply {
				switch {
				case tt.flavor == FlavorGemini && with:
					return v.gemini(flavor, "model-a", false, tt.body)
				case tt.flavor == FlavorGemini:
					return v.gemini(flavor, "model-a", false, "")
				case tt.flavor == "gemini-compat":
					url := v.e.BaseURL(v.srv.URL, flavor) + "/openai/chat/completions"
					body := `{"model":"model-a","messages":[{"role":"user","content":"Hi"}]`
					if with {
						body += tt.body
					}
					return v.do(context.Background(), http.MethodPost, url, body+"}")
				case with:
					return v.chat(flavor, "model-a", tt.body)
				}
				return v.chat(flavor, "model-a", "")
			}
			r := send(true)
			if r.err != nil || r.status != tt.status {
				t.Fatalf("status %d (%v), want %d: %s", r.status, r.err, tt.status, r.body)
			}
			if recs := v.e.Records(); len(recs) != 1 || recs[0].Behaviour != "unsupported" || recs[0].Status != tt.status {
				t.Errorf("records = %+v, want one unsupported", recs)
			}
			ue := &verdict.UpstreamError{Provider: flavor, Flavor: flavor, Model: "model-a", Status: r.status, Body: []byte(r.body)}
			vd := verdict.Classify(ue, v.clk.Now())
			if vd.Class != verdict.Unsupported || vd.Param != tt.param {
				t.Errorf("classified %s with param %q (%s), want unsupported with %q", vd.Class, vd.Param, vd.Message, tt.param)
			}
			if r := send(false); r.status != http.StatusOK {
				t.Errorf("without the field: status %d: %s", r.status, r.body)
			}
		})
	}
}
