package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/internal/clock"
)

// The examples under examples/ (issue 17), one for each kind of user of
// seeds 000-004, each run here as its README says, with its providers'
// base_url pointed at the emulator through the ${NAME_BASE_URL:-...}
// defaults the configs carry, and what that user would see asserted.

// Secrets the example configs read from the environment.
const (
	exampleAdmin = "example-admin-token-0123456789"
	exampleKey   = "example-gateway-key-0123456789"
)

// exampleGateway is one example's config served over HTTP in front of the
// emulator.
type exampleGateway struct {
	t   *testing.T
	clk *clock.Fake
	emu *emulator.Emulator
	url string
}

// exampleEnv points every provider the examples use at the emulator.
func exampleEnv(t *testing.T, emuURL string) map[string]string {
	return map[string]string{
		"TOLLFREE_DATA_DIR":    t.TempDir(),
		"TOLLFREE_ADMIN_TOKEN": exampleAdmin,
		"WEBAPP_KEY":           exampleKey,
		"BOT_KEY":              exampleKey,
		"GROQ_BASE_URL":        emuURL + "/groq/v1",
		"GEMINI_BASE_URL":      emuURL + "/gemini/v1beta",
		"CEREBRAS_BASE_URL":    emuURL + "/cerebras/v1",
		"OPENROUTER_BASE_URL":  emuURL + "/openrouter/v1",
		"KEYLESS_BASE_URL":     emuURL + "/keyless/v1",
	}
}

// startExample serves examples/<name>/tollfree.yaml, unchanged, in front of
// the emulator (with a keyless generic provider added) on a fake clock.
func startExample(t *testing.T, name string) *exampleGateway {
	t.Helper()
	clk := clock.NewFake(t0)
	emu, emuURL := emutest.Start(t, clk, nil)
	emu.AddProvider(emulator.Provider{Name: "keyless"}) // generic, any key or none
	emu.AddModel("keyless", emulator.Model{ID: "openai"})
	// As the example's README runs it: from the checkout's root, where
	// its relative paths (the content folder) are.
	t.Chdir(repoRoot(t))
	path := filepath.Join("examples", name, "tollfree.yaml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := config.Parse(path, src, emutest.Env(exampleEnv(t, emuURL)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	gw, err := tollfree.New(tollfree.Options{Plan: plan, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(func() { srv.Close(); gw.Close() })
	return &exampleGateway{t: t, clk: clk, emu: emu, url: srv.URL}
}

// post sends body as JSON to path with the given bearer ("" none), and
// returns the status, the X-Tollfree-Answer header and the decoded body.
func (g *exampleGateway) post(path, bearer string, body any) (int, http.Header, map[string]any) {
	g.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		g.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, g.url+path, bytes.NewReader(b))
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		g.t.Fatalf("POST %s: %d, not JSON: %.200s", path, resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, out
}

// chat asks chain a question and returns the status and the answer's text
// (or the error's code).
func (g *exampleGateway) chat(bearer, chain, user, question string, extra map[string]any) (int, string) {
	g.t.Helper()
	body := map[string]any{"model": chain, "messages": []map[string]string{{"role": "user", "content": question}}}
	if user != "" {
		body["user"] = user
	}
	for k, v := range extra {
		body[k] = v
	}
	status, _, out := g.post("/v1/chat/completions", bearer, body)
	if status != http.StatusOK {
		e, _ := out["error"].(map[string]any)
		code, _ := e["code"].(string)
		return status, code
	}
	choice := out["choices"].([]any)[0].(map[string]any)
	return status, choice["message"].(map[string]any)["content"].(string)
}

// allDown makes every model of the emulator answer 503 high demand.
func (g *exampleGateway) allDown() {
	for _, m := range emutest.Models {
		g.emu.SetDefault(m.Provider, m.ID, emulator.Step{Kind: emulator.HighDemand})
	}
}

// TestExampleSiteAssistant: a visitor of a public site (seed 000) gets an
// answer from the site's pages with its sources, the same question again
// from the week's cache, a search answer over the pages when every model
// is down, and a refusal past the visitor's 15 questions an hour, while
// the owner still gets through.
func TestExampleSiteAssistant(t *testing.T) {
	checkLeaks(t)
	g := startExample(t, "site-assistant")
	ask := func(bearer, q string) (int, http.Header, map[string]any) {
		return g.post("/v1/ask", bearer, map[string]any{"question": q, "chain": "site"})
	}
	status, hdr, out := ask("", "What projects are there?")
	if status != 200 || hdr.Get("X-Tollfree-Answer") != "model" || len(out["sources"].([]any)) == 0 {
		t.Fatalf("first question: %d %q %v, want a model's answer with sources", status, hdr.Get("X-Tollfree-Answer"), out)
	}
	calls := g.emu.Calls("gemini", "gemini-2.5-flash-lite")
	if _, _, out := ask("", "What projects are there?"); out["cached"] != true || g.emu.Calls("gemini", "gemini-2.5-flash-lite") != calls {
		t.Errorf("the same question again: cached %v, %d calls, want the cached answer and no call", out["cached"], g.emu.Calls("gemini", "gemini-2.5-flash-lite")-calls)
	}
	g.allDown()
	status, hdr, out = ask("", "Which writing have you published?")
	if status != 200 || hdr.Get("X-Tollfree-Answer") != "search" || out["answer"] == "" || len(out["sources"].([]any)) == 0 {
		t.Fatalf("every model down: %d %q %v, want a search answer over the pages", status, hdr.Get("X-Tollfree-Answer"), out)
	}
	asked := 3
	for ; asked < 15; asked++ {
		if status, _, _ := ask("", "What stack do you use, question "+string(rune('a'+asked))+"?"); status != 200 {
			t.Fatalf("question %d: %d, want 200 within the visitor's 15 an hour", asked+1, status)
		}
	}
	if status, _, out := ask("", "One more?"); status != http.StatusTooManyRequests {
		t.Errorf("16th question in the hour: %d %v, want 429", status, out)
	}
	if status, _, _ := ask(exampleAdmin, "One more?"); status != 200 {
		t.Errorf("the owner past a visitor's limit: %d, want 200", status)
	}
}

// TestExamplePortfolio: with every keyed free tier down, the portfolio's
// terminal (seed 001) is answered by the keyless last layer; with that one
// down too, by the chain's message, never an error.
func TestExamplePortfolio(t *testing.T) {
	checkLeaks(t)
	g := startExample(t, "portfolio")
	for _, r := range [][2]string{{"groq", "llama-3.3-70b-versatile"}, {"gemini", "gemini-2.5-flash-lite"}, {"openrouter", "openai/gpt-oss-120b:free"}} {
		g.emu.SetDefault(r[0], r[1], emulator.Step{Kind: emulator.RateDay})
	}
	status, text := g.chat("", "portfolio", "", "What did you build last year?", nil)
	if status != 200 || text != emutest.Answer("keyless/openai") {
		t.Fatalf("keyed tiers out of quota: %d %q, want the keyless layer's answer", status, text)
	}
	g.emu.SetDefault("keyless", "openai", emulator.Step{Kind: emulator.HighDemand})
	status, text = g.chat("", "portfolio", "", "Which languages do you use?", nil)
	if status != 200 || !strings.HasPrefix(text, "The assistant is taking a break.") {
		t.Errorf("every layer down: %d %q, want the chain's message", status, text)
	}
}

// TestExampleWebApp: the app (seed 003) needs its key; its fast chain
// fails over at once past a rate-limited model, without retrying it; its
// routing call gets typed JSON; its long chain is served by the
// long-context model.
func TestExampleWebApp(t *testing.T) {
	checkLeaks(t)
	g := startExample(t, "web-app")
	if status, _ := g.chat("", "fast", "", "Hi", nil); status != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", status)
	}
	g.emu.Script("groq", "llama-3.1-8b-instant", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 2 * time.Second})
	status, text := g.chat(exampleKey, "fast", "", "Suggest a title", nil)
	if status != 200 || text != emutest.Answer("cerebras/llama3.1-8b") || g.emu.Calls("groq", "llama-3.1-8b-instant") != 1 {
		t.Errorf("fast, first model limited: %d %q after %d calls to it, want the next model's answer after one call", status, text, g.emu.Calls("groq", "llama-3.1-8b-instant"))
	}
	g.emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.Answer, Text: `{"use_case":"long"}`})
	schema := map[string]any{"type": "object", "properties": map[string]any{"use_case": map[string]any{"type": "string", "enum": []string{"fast", "long"}}}, "required": []string{"use_case"}, "additionalProperties": false}
	format := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "routing", "strict": true, "schema": schema}}
	status, text = g.chat(exampleKey, "route", "", "Summarise this 80-page contract", map[string]any{"response_format": format})
	var routed struct {
		UseCase string `json:"use_case"`
	}
	if status != 200 || json.Unmarshal([]byte(text), &routed) != nil || routed.UseCase != "long" {
		t.Errorf("routing call: %d %q, want {\"use_case\":\"long\"}", status, text)
	}
	if status, text := g.chat(exampleKey, "long", "", "Summarise this contract", nil); status != 200 || text != emutest.Answer("gemini/gemini-2.5-flash") {
		t.Errorf("long: %d %q, want the long-context model's answer", status, text)
	}
}

// TestExampleChatBot: the bot's backend (seed 004) holds one key and names
// each chat user; a user who sends a 5th message within 10 s is muted for
// 2 minutes, counted apart from the others.
func TestExampleChatBot(t *testing.T) {
	checkLeaks(t)
	g := startExample(t, "chat-bot")
	if status, _ := g.chat("", "bot", "alice", "Hi", nil); status != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", status)
	}
	for i := 1; i <= 4; i++ {
		if status, _ := g.chat(exampleKey, "bot", "alice", "Hello again", nil); status != 200 {
			t.Fatalf("alice's message %d: %d, want 200", i, status)
		}
	}
	if status, _ := g.chat(exampleKey, "bot", "alice", "Hello?", nil); status != http.StatusTooManyRequests {
		t.Errorf("alice's 5th message in 10 s: %d, want 429", status)
	}
	if status, _ := g.chat(exampleKey, "bot", "bob", "Hello", nil); status != 200 {
		t.Errorf("bob while alice is muted: %d, want 200", status)
	}
	g.clk.Advance(30 * time.Second)
	if status, _ := g.chat(exampleKey, "bot", "alice", "Still there?", nil); status != http.StatusTooManyRequests {
		t.Errorf("alice 30 s later, within the mute: %d, want 429", status)
	}
	g.clk.Advance(2 * time.Minute)
	if status, _ := g.chat(exampleKey, "bot", "alice", "Back?", nil); status != 200 {
		t.Errorf("alice after the mute: %d, want 200", status)
	}
}

// TestExampleEvalBatch builds and runs examples/eval-batch, a Go program
// outside this module (run from a copy, as TestEmbedExample does), with
// its three roles from the environment and its providers on the emulator
// (on the real clock: the program has its own). The judge's answers are
// typed; a second run of the same job is answered from the cache, with no
// call to any provider.
func TestExampleEvalBatch(t *testing.T) {
	checkLeaks(t)
	emu, emuURL := emutest.Start(t, clock.Real{}, nil)
	emu.SetDefault("openrouter", "openai/gpt-oss-120b:free", emulator.Step{Kind: emulator.Answer, Text: `{"score":4,"reason":"every claim is in the facts"}`})
	env := exampleEnv(t, emuURL)
	env["PLANNER_MODEL"] = "openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:cerebras:gpt-oss-120b"
	env["EXTRACTOR_MODEL"] = "openai-compatible:groq:llama-3.1-8b-instant"
	env["JUDGE_MODEL"] = "openai-compatible:openrouter:openai/gpt-oss-120b:free"
	for k, v := range emutest.Keys {
		env[k] = v
	}
	root := repoRoot(t)
	dir := copyExampleModule(t, root, "eval-batch")
	run := func() string {
		t.Helper()
		return goIn(t, dir, env, "run", ".", "-config", filepath.Join(root, "examples", "eval-batch", "tollfree.yaml"), "-cases", "2")
	}
	out := run()
	for _, want := range []string{
		"case 1: planner groq/openai/gpt-oss-120b, extractor groq/llama-3.1-8b-instant, judge openrouter/openai/gpt-oss-120b:free: score 4\n",
		// The emulator's planner writes the same report for both cases:
		// the second case's extractor and judge are asked what the first's
		// were, and answered from the cache.
		"case 2: planner groq/openai/gpt-oss-120b, extractor groq/llama-3.1-8b-instant (cached), judge openrouter/openai/gpt-oss-120b:free (cached): score 4\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("first run lacks %q:\n%s", want, out)
		}
	}
	calls := len(emu.Records())
	out = run()
	if want := "case 2: planner groq/openai/gpt-oss-120b (cached), extractor groq/llama-3.1-8b-instant (cached), judge openrouter/openai/gpt-oss-120b:free (cached): score 4\n"; !strings.Contains(out, want) {
		t.Errorf("second run lacks %q:\n%s", want, out)
	}
	if n := len(emu.Records()) - calls; n != 0 {
		t.Errorf("second run made %d provider calls, want none (all cached)", n)
	}
}

// copyExampleModule copies examples/<name>'s Go files, go.mod and go.sum to
// a temporary folder, its replace directive pointed at this checkout, so
// that the example's own files are never rewritten.
func copyExampleModule(t *testing.T, root, name string) string {
	t.Helper()
	src, dir := filepath.Join(root, "examples", name), t.TempDir()
	files, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.IsDir() || !(strings.HasSuffix(f.Name(), ".go") || f.Name() == "go.mod" || f.Name() == "go.sum") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goIn(t, dir, nil, "mod", "edit", "-replace", "github.com/tollfree/tollfree="+root)
	return dir
}

// goIn runs the go command in dir, offline (the module cache holds every
// dependency), with env added to this process's environment. go.mod is
// read only, as a reader's `go run .` reads it: an example whose go.mod
// lacks a requirement fails here.
func goIn(t *testing.T, dir string, env map[string]string, args ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the example: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly -buildvcs=false", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestExampleConfigsDefaultToRealEndpoints: run as their READMEs say, with
// keys and no *_BASE_URL, the examples call each provider's real endpoint
// (its preset's), not a leftover test address.
func TestExampleConfigsDefaultToRealEndpoints(t *testing.T) {
	checkLeaks(t)
	real := map[string]string{}
	for _, p := range config.Presets() {
		real[p.Name] = p.BaseURL
	}
	real["keyless"] = "https://text.pollinations.ai/openai"
	env := map[string]string{"TOLLFREE_ADMIN_TOKEN": exampleAdmin, "WEBAPP_KEY": exampleKey, "BOT_KEY": exampleKey,
		"TOLLFREE_DATA_DIR": t.TempDir(), "PLANNER_MODEL": "openai-compatible:groq:openai/gpt-oss-120b"}
	for _, name := range []string{"site-assistant", "portfolio", "eval-batch", "web-app", "chat-bot"} {
		path := repoPath("examples", name, "tollfree.yaml")
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := config.Parse(path, src, emutest.Env(env))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		for pname, p := range plan.Providers {
			if want, ok := real[pname]; !ok || p.BaseURL != want {
				t.Errorf("%s: provider %s calls %q, want %q", path, pname, p.BaseURL, want)
			}
		}
	}
}
