package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/emulator"
)

// TestRescuesAndRetriesCounted: real traffic, defaults only (issue 13 item
// 5). A stream cut after 40 tokens and finished by the next route, and a
// bare 500 retried politely on the same route, show on the status page's
// JSON, on its HTML and in /metrics, counted on the routes that did them.
func TestRescuesAndRetriesCounted(t *testing.T) {
	checkLeaks(t)
	h := newContHarness(t, stackOptions{})
	// The blip first: the cut then rests the route it broke on.
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.ServerError})
	if r := h.post("/v1/chat/completions", "application/json", streamBody("story", false)); r.status != http.StatusOK {
		t.Fatalf("the request with a blip: %d %s", r.status, r.body)
	}
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.StreamCut, After: 40})
	rescued(t, h.post("/v1/chat/completions", "application/json", streamBody("story", true)))

	var snap struct {
		Chains []struct {
			Name           string `json:"name"`
			StreamsRescued uint64 `json:"streams_rescued"`
		} `json:"chains"`
		Routes []struct {
			ID                    string            `json:"id"`
			PoliteRetries         uint64            `json:"polite_retries"`
			PoliteRetriesAnswered uint64            `json:"polite_retries_answered"`
			StreamsRescued        uint64            `json:"streams_rescued"`
			RescuedBy             map[string]uint64 `json:"rescued_by"`
		} `json:"routes"`
	}
	js := h.get("/status.json")
	if err := json.Unmarshal(js.body, &snap); err != nil {
		t.Fatalf("/status.json: %v: %.300s", err, js.body)
	}
	for _, c := range snap.Chains {
		if c.Name == "story" && c.StreamsRescued != 1 {
			t.Errorf("chain story: %d streams rescued, want 1", c.StreamsRescued)
		}
	}
	for _, r := range snap.Routes {
		switch r.ID {
		case "groq/llama-3.3-70b-versatile":
			if r.PoliteRetries != 1 || r.PoliteRetriesAnswered != 1 || r.StreamsRescued != 0 {
				t.Errorf("%s: %+v, want 1 polite retry, answered, and no rescue", r.ID, r)
			}
		case "groq/llama-3.1-8b-instant":
			if r.StreamsRescued != 1 || r.RescuedBy["prefix"] != 1 || r.PoliteRetries != 0 {
				t.Errorf("%s: %+v, want 1 stream rescued by prefix", r.ID, r)
			}
		}
	}
	page := string(h.get("/status").body)
	for _, want := range []string{"rescued 1 broken stream (prefix 1)", "1 polite retry, 1 answered"} {
		if !strings.Contains(page, want) {
			t.Errorf("the status page lacks %q", want)
		}
	}
	metrics := string(h.get("/metrics").body)
	for _, want := range []string{
		`tollfree_stream_rescues_total{chain="story",method="prefix",route="groq/llama-3.1-8b-instant"} 1`,
		`tollfree_polite_retries_total{chain="story",outcome="answered",route="groq/llama-3.3-70b-versatile"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
