package route

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/llm"
)

// capChains are chains for the capability tests: llama-3.3-70b-versatile
// takes tools but no images (its preset says so), gemini-2.5-flash takes
// both, and llama-3.1-8b-instant is told here it takes no tools.
const capChains = `
chains:
  text:       {routes: [groq/llama-3.3-70b-versatile]}
  vision:     {routes: [groq/llama-3.3-70b-versatile, gemini/gemini-2.5-flash]}
  geminis:    {routes: [gemini/gemini-2.5-flash-lite, gemini/gemini-2.5-flash]}
  gemini:     {routes: [gemini/gemini-2.5-flash]}
  notools:    {routes: [groq/llama-3.1-8b-instant]}
`

const capProviders = `
providers:
  groq:
    preset: groq
    base_url: EMU/groq/v1
    api_key: ${GROQ_API_KEY}
    models:
      llama-3.1-8b-instant: {tools: false}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`

// imageRequest is a question with an image, given inline or by URL.
func imageRequest(url string) *llm.Request {
	parts := `[{"type":"text","text":"What is in this image?"},{"type":"image_url","image_url":{"url":"` + url + `"}}]`
	return &llm.Request{Messages: []llm.Message{{Role: "user", Content: "What is in this image?", Parts: json.RawMessage(parts)}}}
}

const pngURL = "data:image/png;base64,iVBORw0KGgo="

// TestCapabilityRouting (issue 33): a request with an image skips the
// routes whose model takes none, with the reason, and is answered by one
// that does; when no route of the chain can take it, the caller gets a
// CapabilityError naming the capability and the routes, and no route is
// called or rested.
func TestCapabilityRouting(t *testing.T) {
	s := newStackWith(t, stackOptions{providers: capProviders, chains: capChains})
	s.emu.AddModel("gemini", emulator.Model{ID: "gemini-2.5-flash", Follows: true})

	a := s.chat(context.Background(), "text", imageRequest(pngURL))
	var ce *CapabilityError
	if !errors.As(a.err, &ce) || len(ce.Missing) != 1 || ce.Missing[0] != "vision (images)" ||
		len(ce.Routes) != 1 || ce.Routes[0].Route != "groq/llama-3.3-70b-versatile" || ce.Param() != "messages" {
		t.Fatalf("image on a text-only chain: %v", a)
	}
	if !strings.Contains(a.err.Error(), `it needs vision (images); groq/llama-3.3-70b-versatile lacks vision (images)`) {
		t.Errorf("error = %v", a.err)
	}

	a = s.chat(context.Background(), "vision", imageRequest(pngURL))
	if a.err != nil || a.route() != "gemini/gemini-2.5-flash" || !strings.Contains(a.content(), "I was shown an image/png of 8 bytes") {
		t.Fatalf("image with a vision route second: %v", a)
	}
	if n := s.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 0 {
		t.Errorf("the text-only route was called %d times", n)
	}

	// An image by URL: Gemini's API takes none, and the gateway fetches
	// no URL by default.
	a = s.chat(context.Background(), "gemini", imageRequest("https://example.com/cat.png"))
	if !errors.As(a.err, &ce) || len(ce.Missing) != 0 || !strings.Contains(a.err.Error(), "gemini/gemini-2.5-flash cannot carry messages[0].content[1]: an image given by URL") {
		t.Fatalf("remote image on gemini: %v", a)
	}
	if strings.Contains(a.err.Error(), "example.com") {
		t.Errorf("the error quotes the caller's URL: %v", a.err)
	}

	// Tools on a chain whose one route takes none.
	req := question("Weather?")
	req.Extra = map[string]json.RawMessage{"tools": json.RawMessage(`[{"type":"function","function":{"name":"get_weather"}}]`)}
	a = s.chat(context.Background(), "notools", req)
	if !errors.As(a.err, &ce) || len(ce.Missing) != 1 || ce.Missing[0] != "tools" || ce.Param() != "tools" {
		t.Fatalf("tools on a chain without them: %v", a)
	}
	s.noRests()
	if n := s.emu.Calls("groq", "llama-3.1-8b-instant") + s.emu.Calls("gemini", "gemini-2.5-flash-lite"); n != 0 {
		t.Errorf("%d calls to routes that lack what was asked", n)
	}
}

// TestCapabilityLearned (issue 33): a route whose model was thought to
// take images and refuses one is skipped for the request (the next route
// answers) and learned not to take them: the next request with an image
// skips it without a call, nothing rests, and a text request still goes to
// it.
func TestCapabilityLearned(t *testing.T) {
	s := newStackWith(t, stackOptions{providers: capProviders, chains: capChains})
	s.emu.AddModel("gemini", emulator.Model{ID: "gemini-2.5-flash-lite", NoVision: true})
	s.emu.AddModel("gemini", emulator.Model{ID: "gemini-2.5-flash", Follows: true})

	for i := range 2 {
		a := s.chat(context.Background(), "geminis", imageRequest(pngURL))
		if a.err != nil || a.route() != "gemini/gemini-2.5-flash" {
			t.Fatalf("request %d: %v", i+1, a)
		}
	}
	if n := s.emu.Calls("gemini", "gemini-2.5-flash-lite"); n != 1 {
		t.Errorf("the route that refused images was called %d times, want once: its refusal is learned", n)
	}
	learned := false
	for _, r := range s.rests() {
		if r.Key == "trait:novision:gemini/gemini-2.5-flash-lite" {
			learned = true
			continue
		}
		t.Errorf("rest %s: a refusal of content rests nothing", r.Key)
	}
	if !learned {
		t.Error("the refusal of images was not learned")
	}
	if a := s.chat(context.Background(), "geminis", question("Hi")); a.route() != "gemini/gemini-2.5-flash-lite" {
		t.Errorf("a text request: %v, want the route that takes text", a)
	}
}
