package route

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/llm"
)

// The router's side of typed answers (issue 15): what each route is asked,
// what a chain that requires schemas skips, how invalid answers weigh.

// codeSchema asks for a code of three capital letters, with a constant
// kind: pattern is a keyword Gemini cannot enforce, const one it takes as
// an enum.
const codeSchema = `{"type":"object","properties":{"kind":{"const":"airport"},"code":{"type":"string","pattern":"^[A-Z]{3}$"}},"required":["kind","code"]}`

// typedQuestion asks emutest's question with a response_format.
func typedQuestion(rf string) *llm.Request {
	req := question("Which airport? Answer in JSON.")
	req.ResponseFormat = json.RawMessage(rf)
	return req
}

func schemaFormat(schema string) string {
	return `{"type":"json_schema","json_schema":{"name":"x","schema":` + schema + `}}`
}

// sentBodies keeps what the emulator received, per route.
type sentBodies struct {
	mu sync.Mutex
	m  map[string][]string
}

func (s *stack) watch() *sentBodies {
	b := &sentBodies{m: map[string][]string{}}
	s.emu.OnBody(func(provider, model string, body []byte) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.m[provider+"/"+model] = append(b.m[provider+"/"+model], string(body))
	})
	return b
}

func (b *sentBodies) of(route string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.m[route]...)
}

// TestTypedGemmaAskedInWords: Gemma takes no JSON mode (the emulator
// refuses it in Gemini's words), so a json_object request reaches it as a
// system instruction and no responseMimeType; its prose-wrapped answer is
// unwrapped.
func TestTypedGemmaAskedInWords(t *testing.T) {
	s := newStack(t, `
chains:
  one: {routes: [gemini/gemma-3-27b-it], attempt_timeout: 8s, deadline: 20s}
`)
	s.emu.AddModel("gemini", emulator.Model{ID: "gemma-3-27b-it", NoJSONMode: true})
	seen := s.watch()
	s.emu.Script("gemini", "gemma-3-27b-it", emulator.Step{Kind: emulator.Answer, Text: `Sure! Here it is: {"code": "CDG"} Anything else?`})
	a := s.chat(context.Background(), "one", typedQuestion(`{"type":"json_object"}`))
	if a.err != nil || a.content() != `{"code": "CDG"}` {
		t.Fatalf("%v, want the JSON unwrapped", a)
	}
	if recs := s.emu.Records(); len(recs) != 1 || recs[0].Format != "" {
		t.Errorf("records %+v, want one call without a response format", recs)
	}
	body := seen.of("gemini/gemma-3-27b-it")[0]
	if !strings.Contains(body, "Answer with a JSON object, and nothing else.") {
		t.Errorf("Gemma was not asked for JSON in words: %s", body)
	}
}

// plentifulFlash is emutest.Providers with Gemini's Flash declared
// plentiful: a repair is asked only of a route that is not scarce, and
// Flash's 20 a day make it scarce by default.
const plentifulFlash = `
providers:
  groq:     {preset: groq,     base_url: EMU/groq/v1,       api_key: ${GROQ_API_KEY}}
  gemini:
    preset: gemini
    base_url: EMU/gemini/v1beta
    api_key: ${GEMINI_API_KEY}
    models:
      gemini-2.5-flash: {plentiful: true}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`

// TestTypedGeminiSchema: Gemini gets the schema as responseJsonSchema, in
// the part of JSON Schema it takes (const as an enum, no pattern); the
// validator checks the pattern it could not, and the route repairs.
func TestTypedGeminiSchema(t *testing.T) {
	s := newStackWith(t, stackOptions{providers: plentifulFlash, chains: `
chains:
  one: {routes: [gemini/gemini-2.5-flash], attempt_timeout: 8s, deadline: 20s}
`})
	seen := s.watch()
	s.emu.Script("gemini", "gemini-2.5-flash",
		emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"cdg"}`},
		emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"CDG"}`})
	a := s.chat(context.Background(), "one", typedQuestion(schemaFormat(codeSchema)))
	if a.err != nil || a.content() != `{"kind":"airport","code":"CDG"}` {
		t.Fatalf("%v, want the repaired answer", a)
	}
	bodies := seen.of("gemini/gemini-2.5-flash")
	if len(bodies) != 2 {
		t.Fatalf("gemini got %d calls, want 2", len(bodies))
	}
	var sent struct {
		GenerationConfig struct {
			ResponseMimeType   string          `json:"responseMimeType"`
			ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal([]byte(bodies[0]), &sent); err != nil {
		t.Fatal(err)
	}
	gc := sent.GenerationConfig
	if gc.ResponseMimeType != "application/json" || !strings.Contains(string(gc.ResponseJSONSchema), `"kind":{"enum":["airport"]}`) || strings.Contains(string(gc.ResponseJSONSchema), "pattern") {
		t.Errorf("generationConfig %+v, want the schema converted to Gemini's part of JSON Schema", gc)
	}
	if classes := strings.Join(s.recs.classesOf("gemini/gemini-2.5-flash"), " "); classes != "invalid ok" {
		t.Errorf("outcomes %q, want invalid ok", classes)
	}
}

// TestTypedRequireSchemaGap: a chain that requires enforced schemas skips
// Gemini for a schema with a keyword Gemini cannot enforce, and says so
// when no other route can take it.
func TestTypedRequireSchemaGap(t *testing.T) {
	s := newStack(t, `
chains:
  two: {routes: [gemini/gemini-2.5-flash, cerebras/gpt-oss-120b], require_schema: true, attempt_timeout: 8s, deadline: 20s}
  one: {routes: [gemini/gemini-2.5-flash], require_schema: true, attempt_timeout: 8s, deadline: 20s}
`)
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"CDG"}`})
	a := s.chat(context.Background(), "two", typedQuestion(schemaFormat(codeSchema)))
	if a.route() != "cerebras/gpt-oss-120b" || s.emu.Calls("gemini", "gemini-2.5-flash") != 0 {
		t.Fatalf("%v (gemini called %d times), want cerebras, gemini skipped", a, s.emu.Calls("gemini", "gemini-2.5-flash"))
	}
	a = s.chat(context.Background(), "one", typedQuestion(schemaFormat(codeSchema)))
	var ce *CallerError
	if !errors.As(a.err, &ce) || ce.Param != "response_format" || !strings.Contains(ce.Message, "cannot enforce the schema's pattern at /properties/code") {
		t.Errorf("%v, want a CallerError naming the keyword Gemini cannot enforce", a)
	}
	// Without a pattern, Gemini enforces the schema itself.
	s.emu.Script("gemini", "gemini-2.5-flash", emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"CDG"}`})
	a = s.chat(context.Background(), "one", typedQuestion(schemaFormat(strings.Replace(codeSchema, `,"pattern":"^[A-Z]{3}$"`, "", 1))))
	if a.err != nil || a.route() != "gemini/gemini-2.5-flash" {
		t.Errorf("%v, want gemini's answer", a)
	}
}

// TestTypedScarceNotRepaired (issue 34): a typed request never repairs on
// a scarce route: Flash (20 a day) that answers invalidly is not asked
// again, the next route is; and a route repaired once is the only one
// repaired: the third route gets one try.
func TestTypedScarceNotRepaired(t *testing.T) {
	s := newStack(t, `
chains:
  three: {routes: [gemini/gemini-2.5-flash, groq/openai/gpt-oss-120b, cerebras/gpt-oss-120b], attempt_timeout: 8s, deadline: 20s}
`)
	bad := emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"Paris"}`}
	s.emu.SetDefault("gemini", "gemini-2.5-flash", bad)
	s.emu.SetDefault("groq", "openai/gpt-oss-120b", bad)
	s.emu.Script("cerebras", "gpt-oss-120b", bad, emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"CDG"}`})
	a := s.chat(context.Background(), "three", typedQuestion(schemaFormat(codeSchema)))
	var ie *InvalidAnswerError
	if !errors.As(a.err, &ie) {
		t.Fatalf("%v, want no valid answer (cerebras's valid one would be its second call)", a)
	}
	var steps []string
	for _, at := range s.recs.forRequest(a.id) {
		steps = append(steps, at.Route+" repair="+strconv.Itoa(at.Repair))
	}
	want := "gemini/gemini-2.5-flash repair=0, groq/openai/gpt-oss-120b repair=0, groq/openai/gpt-oss-120b repair=1, cerebras/gpt-oss-120b repair=0"
	if strings.Join(steps, ", ") != want {
		t.Errorf("attempts %v, want %s", steps, want)
	}
	if ie.Calls != 4 || ie.MaxCalls != config.DefaultTypedCalls || !strings.Contains(ie.Error(), "4 invalid answers in 4 calls, of at most 6") {
		t.Errorf("error %q (calls %d of %d), want the 4 calls counted", ie, ie.Calls, ie.MaxCalls)
	}
}

// TestTypedCallBudget (issue 34): a typed request on a long chain whose
// every route answers invalidly spends at most typed_calls calls, then
// stops, saying so; the routes past it are not called.
func TestTypedCallBudget(t *testing.T) {
	s := newStack(t, `
chains:
  long:
    routes: [groq/openai/gpt-oss-120b, groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant, cerebras/gpt-oss-120b, cerebras/llama3.1-8b, openrouter/openai/gpt-oss-120b:free, gemini/gemma-3-27b-it]
    typed_calls: 4
    attempt_timeout: 8s
    deadline: 20s
`)
	bad := emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"Paris"}`}
	for _, m := range emutest.Models {
		s.emu.SetDefault(m.Provider, m.ID, bad)
	}
	a := s.chat(context.Background(), "long", typedQuestion(schemaFormat(codeSchema)))
	var ie *InvalidAnswerError
	if !errors.As(a.err, &ie) || ie.Calls != 4 || ie.MaxCalls != 4 {
		t.Fatalf("%v, want no valid answer after 4 calls", a)
	}
	if n := len(s.emu.Records()); n != 4 {
		t.Errorf("the emulator got %d calls, want 4", n)
	}
	for _, m := range []string{"llama3.1-8b"} {
		if n := s.emu.Calls("cerebras", m); n != 0 {
			t.Errorf("cerebras/%s called %d times past the budget", m, n)
		}
	}
}

// TestTypedNoRepairs: with schema_repairs 0, an invalid answer hands the
// request straight to the next route.
func TestTypedNoRepairs(t *testing.T) {
	s := newStack(t, `
chains:
  two: {routes: [groq/openai/gpt-oss-120b, cerebras/gpt-oss-120b], schema_repairs: 0, attempt_timeout: 8s, deadline: 20s}
`)
	s.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"Paris"}`})
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"CDG"}`})
	a := s.chat(context.Background(), "two", typedQuestion(schemaFormat(codeSchema)))
	if a.route() != "cerebras/gpt-oss-120b" || s.emu.Calls("groq", "openai/gpt-oss-120b") != 1 {
		t.Fatalf("%v (groq called %d times), want cerebras after one groq call", a, s.emu.Calls("groq", "openai/gpt-oss-120b"))
	}
	var steps []string
	for _, at := range s.recs.forRequest(a.id) {
		steps = append(steps, at.Class.String())
	}
	if strings.Join(steps, " ") != "invalid ok" {
		t.Errorf("outcomes %v, want invalid ok", steps)
	}
	if n := len(s.rests()); n != 0 {
		t.Errorf("%d rests after an invalid answer, want none", n)
	}
}

// TestTypedLatencyAware: a latency-aware chain treats a route that breaks
// schemas as it would a failing one: groq answers fast but invalidly, and
// is then put behind cerebras, which answers validly, if slower.
func TestTypedLatencyAware(t *testing.T) {
	s := newStack(t, `
chains:
  quick:
    latency_aware: true
    schema_repairs: 0
    routes:
      - {route: groq/openai/gpt-oss-120b, rank: 1}
      - {route: cerebras/gpt-oss-120b, rank: 1}
    attempt_timeout: 8s
    deadline: 30s
`)
	valid := `{"kind":"airport","code":"CDG"}`
	ask := func() answer { return s.chat(context.Background(), "quick", typedQuestion(schemaFormat(codeSchema))) }
	// Groq answers validly in 100 ms: it is measured fast.
	s.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: valid, Delay: 100 * time.Millisecond})
	done := make(chan answer, 1)
	go func() { done <- ask() }()
	s.waitCalls("groq", "openai/gpt-oss-120b", 1)
	s.clk.Advance(100 * time.Millisecond)
	if a := <-done; a.route() != "groq/openai/gpt-oss-120b" {
		t.Fatalf("request 1: %v", a)
	}
	// Groq answers invalidly, fast; cerebras validly in 500 ms.
	s.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"?"}`, Delay: 100 * time.Millisecond})
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: valid, Delay: 500 * time.Millisecond})
	go func() { done <- ask() }()
	s.waitCalls("groq", "openai/gpt-oss-120b", 2)
	s.clk.Advance(100 * time.Millisecond)
	s.waitCalls("cerebras", "gpt-oss-120b", 1)
	s.clk.Advance(500 * time.Millisecond)
	if a := <-done; a.route() != "cerebras/gpt-oss-120b" {
		t.Fatalf("request 2: %v", a)
	}
	// Cerebras now goes first.
	s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: valid})
	if a := ask(); a.route() != "cerebras/gpt-oss-120b" || s.emu.Calls("groq", "openai/gpt-oss-120b") != 2 {
		t.Errorf("request 3: %v (groq called %d times), want cerebras first", a, s.emu.Calls("groq", "openai/gpt-oss-120b"))
	}
}

// TestTypedHedged: an invalid answer from a hedge is repaired on the
// hedge's route while the first route still hangs; the repaired answer
// wins and the hung route is wound down.
func TestTypedHedged(t *testing.T) {
	s := newStack(t, `
chains:
  hedged:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    hedge_delay: 3s
    attempt_timeout: 8s
    deadline: 20s
`)
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Hang})
	s.emu.Script("cerebras", "gpt-oss-120b",
		emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"cdg"}`},
		emulator.Step{Kind: emulator.Answer, Text: `{"kind":"airport","code":"CDG"}`})
	done := make(chan answer, 1)
	go func() { done <- s.chat(context.Background(), "hedged", typedQuestion(schemaFormat(codeSchema))) }()
	s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	s.clk.Advance(3 * time.Second)
	a := <-done
	if a.err != nil || a.route() != "cerebras/gpt-oss-120b" || a.content() != `{"kind":"airport","code":"CDG"}` {
		t.Fatalf("%v, want cerebras's repaired answer", a)
	}
	s.r.Close() // wait for the hung route's wind-down
	var steps []string
	for _, at := range s.recs.forRequest(a.id) {
		if at.Route == "cerebras/gpt-oss-120b" {
			steps = append(steps, at.Class.String()+" repair="+string(rune('0'+at.Repair)))
		}
	}
	if strings.Join(steps, ", ") != "invalid repair=0, ok repair=1" {
		t.Errorf("cerebras's steps %v, want invalid, then ok as repair 1", steps)
	}
}

// TestTypedRequireJSONMode: for a json_object request, a chain that
// requires enforcement skips a route without JSON mode (Gemma) and asks
// one with it.
func TestTypedRequireJSONMode(t *testing.T) {
	s := newStack(t, `
chains:
  two: {routes: [gemini/gemma-3-27b-it, groq/llama-3.1-8b-instant], require_schema: true, attempt_timeout: 8s, deadline: 20s}
`)
	s.emu.Script("groq", "llama-3.1-8b-instant", emulator.Step{Kind: emulator.Answer, Text: `{"code":"CDG"}`})
	a := s.chat(context.Background(), "two", typedQuestion(`{"type":"json_object"}`))
	if a.err != nil || a.route() != "groq/llama-3.1-8b-instant" || s.emu.Calls("gemini", "gemma-3-27b-it") != 0 {
		t.Fatalf("%v (gemma called %d times), want groq, gemma skipped", a, s.emu.Calls("gemini", "gemma-3-27b-it"))
	}
	if recs := s.emu.Records(); len(recs) != 1 || recs[0].Format != emulator.FormatJSONObject {
		t.Errorf("records %+v, want groq asked in JSON mode", recs)
	}
}
