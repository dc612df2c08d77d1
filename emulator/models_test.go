package emulator

import (
	"strings"
	"testing"
)

// TestModelListsChange: each flavor's model list follows what a test does
// while it runs: a model taken off the list (still answering), one added,
// OpenRouter's prices changed; OpenRouter's list carries its pricing and
// context length, Gemini's its models.list names.
func TestModelListsChange(t *testing.T) {
	v := newEnv(t)
	v.add(FlavorGroq, Model{ID: "a"}, Model{ID: "b"})
	v.add(FlavorOpenRouter, Model{ID: "x/free-one:free", ContextLength: 131072}, Model{ID: "x/paid", Price: Price{Prompt: 0.000001, Completion: 0.000002}})
	v.add(FlavorGemini, Model{ID: "gemini-3.6-flash"}, Model{ID: "gemini-embedding-001", Embedding: true})
	list := func(flavor string) string {
		t.Helper()
		r := v.do(t.Context(), "GET", v.e.BaseURL(v.srv.URL, flavor)+"/models", "")
		if r.status != 200 {
			t.Fatalf("%s models: %d %s", flavor, r.status, r.body)
		}
		return r.body
	}
	if got, want := list(FlavorOpenRouter), `{"data":[{"id":"x/free-one:free","name":"x/free-one:free","created":1700000000,"context_length":131072,"pricing":{"prompt":"0","completion":"0"}},{"id":"x/paid","name":"x/paid","created":1700000000,"pricing":{"prompt":"0.000001","completion":"0.000002"}}]}`; got != want {
		t.Errorf("openrouter models:\n got %s\nwant %s", got, want)
	}

	v.e.Unlist(FlavorGroq, "a", true)
	if got := list(FlavorGroq); strings.Contains(got, `"id":"a"`) || !strings.Contains(got, `"id":"b"`) {
		t.Errorf("groq list with a taken off: %s", got)
	}
	if r := v.chat(FlavorGroq, "a", ""); r.status != 200 {
		t.Errorf("an unlisted model stopped answering: %d %s", r.status, r.body)
	}
	v.e.AddModel(FlavorGroq, Model{ID: "c"})
	v.e.Unlist(FlavorGroq, "a", false)
	if got := list(FlavorGroq); !strings.Contains(got, `"id":"a"`) || !strings.Contains(got, `"id":"c"`) {
		t.Errorf("groq list after a came back and c was added: %s", got)
	}

	v.e.SetPrice(FlavorOpenRouter, "x/free-one:free", Price{Prompt: 0.0000005, Completion: 0.0000015})
	if got := list(FlavorOpenRouter); !strings.Contains(got, `"pricing":{"prompt":"0.0000005","completion":"0.0000015"}`) {
		t.Errorf("openrouter price change not listed: %s", got)
	}

	v.e.Unlist(FlavorGemini, "gemini-3.6-flash", true)
	got := list(FlavorGemini)
	if strings.Contains(got, "models/gemini-3.6-flash") || !strings.Contains(got, `"name": "models/gemini-embedding-001"`) || !strings.Contains(got, `"embedContent"`) {
		t.Errorf("gemini models.list: %s", got)
	}
}
