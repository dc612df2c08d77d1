package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/internal/testenv"
)

// rescueChains is a chain of two routes with every option at its default:
// no continuation, idle or timeout setting is named, because the defaults
// must rescue a broken stream (issue 13).
const rescueChains = `
chains:
  rescue:
    routes: [groq/llama-3.3-70b-versatile, cerebras/llama3.1-8b]
`

// rescueAnswer is the answer both routes (and, straight from the emulator,
// OpenRouter) give: 61 words, so that a break after 40 leaves a tail to
// continue.
const rescueAnswer = "Tollfree is one OpenAI-compatible endpoint that keeps an AI feature " +
	"answering on the free tiers of many providers. It walks a chain of routes in order, " +
	"skips every route resting or out of budget, races a slow attempt against the next, " +
	"continues a broken stream on another route, logs each call, and falls back to a " +
	"search when nothing else answers."

// rescueCase is one stream the clients read: what the first route does,
// and what the client must see.
type rescueCase struct {
	name string
	// step is the first route's behaviour; zero: it answers.
	step emulator.Step
	// stallAfter, when positive, is the count of content chunks after which
	// the chain's idle timeout passes on the fake clock.
	stallAfter int
	// direct points the client at the emulated OpenRouter, not the gateway:
	// the client's own tolerance of what a provider sends, with no gateway
	// in between to tidy it.
	direct bool
	// calls is how many calls each route gets, first then second.
	calls [2]int
	// comments requires comment lines in the body the client read.
	comments bool
}

// rescueCases: a plain stream and a failover before the first token, which
// tell a failure of the harness apart from one of rescue; a stream cut
// after 40 tokens and one silent past the idle timeout after 40, each
// continued by the next route; and OpenRouter's keep-alive comments
// (": OPENROUTER PROCESSING", https://openrouter.ai/docs/api-reference/streaming),
// through the gateway (which may forward or drop them: the client must
// read a whole answer either way) and straight from the emulated provider,
// so that the clients' tolerance of comment lines is tested whatever the
// gateway does with them.
var rescueCases = []rescueCase{
	{name: "plain", calls: [2]int{1, 0}},
	{name: "break before the first token", step: emulator.Step{Kind: emulator.StreamCut}, calls: [2]int{1, 1}},
	{name: "cut after 40 tokens", step: emulator.Step{Kind: emulator.StreamCut, After: 40}, calls: [2]int{1, 1}},
	{name: "stall after 40 tokens", step: emulator.Step{Kind: emulator.StreamStall, After: 40}, stallAfter: 40, calls: [2]int{1, 1}},
	{name: "keep-alive comments through the gateway", step: emulator.Step{Kind: emulator.StreamKeepAlive}, calls: [2]int{1, 0}},
	{name: "keep-alive comments from OpenRouter", step: emulator.Step{Kind: emulator.StreamKeepAlive}, direct: true, comments: true},
}

// openRouterModel is the emulated OpenRouter model the direct cases call.
const openRouterModel = "openai/gpt-oss-120b:free"

// rescueStack is a gateway over the emulator for one case, scripted: both
// routes (and OpenRouter's model) answer rescueAnswer, and the case's first
// route (or OpenRouter's model) behaves as its step says.
func rescueStack(t *testing.T, tc rescueCase) *stack {
	t.Helper()
	s := startStackWith(t, stackOptions{config: rescueChains})
	emutest.SameAnswer(s.emu, rescueAnswer, "groq/llama-3.3-70b-versatile", "cerebras/llama3.1-8b", "openrouter/"+openRouterModel)
	if tc.step.Kind != "" {
		provider, model := "groq", "llama-3.3-70b-versatile"
		if tc.direct {
			provider, model = "openrouter", openRouterModel
		}
		s.emu.Script(provider, model, tc.step)
	}
	return s
}

// target is where a case's client points: base URL, key and model.
func (tc rescueCase) target(s *stack) (baseURL, key, model string) {
	if tc.direct {
		return s.emuURL + "/openrouter/v1/", emutest.Keys["OPENROUTER_API_KEY"], openRouterModel
	}
	return s.srv.URL + "/v1/", "unused", "rescue"
}

// onChunk is what a case does as the client reads content chunk n: once
// the first route has sent all it will before it goes silent, the idle
// timeout passes.
func (tc rescueCase) onChunk(s *stack) func(n int) {
	return func(n int) {
		if tc.stallAfter > 0 && n == tc.stallAfter {
			s.clk.Advance(s.plan.Chains["rescue"].IdleTimeout)
		}
	}
}

// clientView is what a client saw of one streamed completion. The npm
// script prints it as JSON; the openai-go run fills it in.
type clientView struct {
	Text          string      `json:"text"` // the content deltas, joined
	FinishReason  string      `json:"finish_reason"`
	Chunks        int         `json:"chunks"`
	ContentChunks int         `json:"content_chunks"`
	Usage         *tokenUsage `json:"usage"`
	Error         string      `json:"error"` // the error the client raised, if any
	// Comments is the count of SSE comment lines in the raw body, and Done
	// whether it held "data: [DONE]".
	Comments int  `json:"comments"`
	Done     bool `json:"done"`
	// Final is the completion the client's own accumulator built from the
	// chunks: openai-go's ChatCompletionAccumulator, the npm helper's
	// finalChatCompletion(). Nil when the client has none (npm's create).
	Final *completion `json:"final"`
}

type tokenUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// completion is the part of an accumulated completion the tests compare.
type completion struct {
	Text         string `json:"text"`
	FinishReason string `json:"finish_reason"`
}

// check asserts that a client saw an ordinary successful stream: the whole
// answer once, a finish_reason "stop", [DONE], the usage, no error, and an
// accumulated completion that agrees.
func (v clientView) check(t *testing.T, tc rescueCase) {
	t.Helper()
	if v.Error != "" {
		t.Fatalf("the client raised %q after %d content chunks, want an ordinary stream", v.Error, v.ContentChunks)
	}
	if v.Text != rescueAnswer {
		t.Errorf("the client read %d words, want the %d of one whole answer: %s",
			len(strings.Fields(v.Text)), len(strings.Fields(rescueAnswer)), wordDiff(v.Text, rescueAnswer))
	}
	if v.FinishReason != "stop" || !v.Done {
		t.Errorf("finish_reason %q, [DONE] %v; want stop and [DONE]", v.FinishReason, v.Done)
	}
	if v.Usage == nil || v.Usage.PromptTokens == 0 || v.Usage.CompletionTokens == 0 {
		t.Errorf("usage %+v, want the answer's", v.Usage)
	}
	if f := v.Final; f != nil && (f.Text != v.Text || f.FinishReason != v.FinishReason) {
		t.Errorf("the client's accumulated completion has %d words and finish_reason %q; the chunks had %d and %q",
			len(strings.Fields(f.Text)), f.FinishReason, len(strings.Fields(v.Text)), v.FinishReason)
	}
	if tc.comments && v.Comments == 0 {
		t.Error("no comment line reached the client: the case does not test what it says")
	}
}

// wordDiff says where got first departs from want, word by word, naming
// only positions and counts.
func wordDiff(got, want string) string {
	g, w := strings.Fields(got), strings.Fields(want)
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return "they differ from word " + strconv.Itoa(i+1)
		}
	}
	return "one is the other's first " + strconv.Itoa(min(len(g), len(w))) + " words"
}

// checkCalls asserts how many calls each route of the chain got.
func checkCalls(t *testing.T, s *stack, tc rescueCase) {
	t.Helper()
	if tc.direct {
		return
	}
	first, second := s.emu.Calls("groq", "llama-3.3-70b-versatile"), s.emu.Calls("cerebras", "llama3.1-8b")
	if [2]int{first, second} != tc.calls {
		t.Errorf("routes called %d and %d times, want %v", first, second, tc.calls)
	}
}

// TestRescuedStreamOpenAIGo (issue 13): the official openai-go client reads
// a stream broken by the first route and continued by the next, with the
// chain's defaults, as an ordinary successful stream: the whole answer,
// finish_reason "stop", no error, and its ChatCompletionAccumulator takes
// every chunk and agrees. Keep-alive comments are no trouble to it.
func TestRescuedStreamOpenAIGo(t *testing.T) {
	checkLeaks(t)
	for _, tc := range rescueCases {
		t.Run(tc.name, func(t *testing.T) {
			s := rescueStack(t, tc)
			v := goStream(t, tc, s)
			t.Logf("%d chunks, %d comment lines", v.Chunks, v.Comments)
			v.check(t, tc)
			if v.Final == nil {
				t.Error("the accumulator holds no choice")
			}
			checkCalls(t, s, tc)
		})
	}
}

// goStream streams the case's completion through openai-go and reports
// what it saw.
func goStream(t *testing.T, tc rescueCase, s *stack) clientView {
	t.Helper()
	baseURL, key, model := tc.target(s)
	raw := &rawTap{}
	c := openai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey(key), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: raw}))
	stream := c.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:         model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(emutest.Question)},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	defer stream.Close()
	var v clientView
	var acc openai.ChatCompletionAccumulator
	onChunk := tc.onChunk(s)
	for stream.Next() {
		chunk := stream.Current()
		v.Chunks++
		if !acc.AddChunk(chunk) {
			t.Errorf("the accumulator refused chunk %d (id %q after %q)", v.Chunks, chunk.ID, acc.ID)
		}
		if chunk.Usage.CompletionTokens > 0 {
			v.Usage = &tokenUsage{chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens}
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		if d := chunk.Choices[0].Delta.Content; d != "" {
			v.Text += d
			v.ContentChunks++
			onChunk(v.ContentChunks)
		}
		if f := chunk.Choices[0].FinishReason; f != "" {
			v.FinishReason = f
		}
	}
	if err := stream.Err(); err != nil {
		v.Error = err.Error()
	}
	stream.Close()
	v.Comments, v.Done = raw.seen()
	if len(acc.Choices) == 1 {
		v.Final = &completion{acc.Choices[0].Message.Content, acc.Choices[0].FinishReason}
	}
	return v
}

// rawTap keeps a copy of the response bodies a client reads. The body is
// read by the goroutine that reads the stream, so it needs no lock.
type rawTap struct{ body bytes.Buffer }

func (r *rawTap) RoundTrip(req *http.Request) (*http.Response, error) {
	// The default transport, whose idle connections the test servers close.
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = tappedBody{ReadCloser: resp.Body, copy: &r.body}
	return resp, nil
}

// seen counts the comment lines in the bodies read, and says whether they
// held the [DONE] event.
func (r *rawTap) seen() (comments int, done bool) {
	for line := range strings.Lines(r.body.String()) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, ":") {
			comments++
		}
		done = done || line == "data: [DONE]"
	}
	return comments, done
}

type tappedBody struct {
	io.ReadCloser
	copy *bytes.Buffer
}

func (b tappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.copy.Write(p[:n])
	return n, err
}

// TestRescuedStreamOpenAINpm (issue 13): the official openai npm client
// (testdata/openai-npm, its version pinned by the lockfile) reads the same
// streams as an ordinary successful stream, both through
// chat.completions.create({stream: true}) and through the SDK's
// chat.completions.stream() helper, whose finalChatCompletion() must agree.
// It needs node and npm, and the npm registry once for `npm ci`; without
// them it is skipped, except under CI (.ci/run installs them).
func TestRescuedStreamOpenAINpm(t *testing.T) {
	checkLeaks(t)
	node, dir := npmClient(t)
	for _, tc := range rescueCases {
		for _, mode := range []string{"create", "helper"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				s := rescueStack(t, tc)
				v := npmStream(t, node, dir, mode, tc, s)
				t.Logf("%d chunks, %d comment lines", v.Chunks, v.Comments)
				v.check(t, tc)
				if mode == "helper" && v.Final == nil {
					t.Error("the helper gave no finalChatCompletion()")
				}
				checkCalls(t, s, tc)
			})
		}
	}
}

// npmClient returns node's path and the npm client's folder, its
// node_modules installed from the lockfile beforehand (.ci/run runs npm ci:
// a test never installs packages).
func npmClient(t *testing.T) (node, dir string) {
	t.Helper()
	node = node18(t, "the openai npm client's tests")
	dir, err := filepath.Abs(filepath.Join("testdata", "openai-npm"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		testenv.Unavailable(t, "the openai npm client is not installed: run npm ci --prefix e2e/testdata/openai-npm (once; .ci/run does)")
	}
	return node, dir
}

// node18 returns node's path, or marks the test unavailable (a failure
// under CI) when node is missing or older than 18; what names the tests
// that need it.
func node18(t *testing.T, what string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Unavailable(t, "node is not installed: "+what+" need node 18 or later and npm (Debian's nodejs and npm packages)")
	}
	out, err := exec.CommandContext(t.Context(), node, "--version").Output()
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".", 2)[0])
	if err != nil || major < 18 {
		testenv.Unavailable(t, "node "+strings.TrimSpace(string(out))+" is too old: "+what+" need node 18 or later")
	}
	return node
}

// testContext is the test's context, ended early enough before the test
// binary's own timeout that a child process is killed, and the test fails
// with a message, rather than the binary panicking with the child alive.
func testContext(t *testing.T) (context.Context, context.CancelFunc) {
	if d, ok := t.Deadline(); ok {
		return context.WithDeadline(t.Context(), d.Add(-10*time.Second))
	}
	return context.WithCancel(t.Context())
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// npmStream runs the npm client's script on the case, calling the case's
// onChunk as the script reports each content chunk, and returns its summary.
func npmStream(t *testing.T, node, dir, mode string, tc rescueCase, s *stack) clientView {
	t.Helper()
	baseURL, key, model := tc.target(s)
	ctx, cancel := testContext(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "stream.mjs", mode, baseURL, model)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY="+key)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("node: %v", err)
	}
	var v clientView
	var summary, bad int // lines
	onChunk := tc.onChunk(s)
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var line struct {
			Type          string `json:"type"`
			ContentChunks int    `json:"content_chunks"`
		}
		switch err := json.Unmarshal(lines.Bytes(), &line); {
		case err != nil:
			bad++
		case line.Type == "chunk":
			onChunk(line.ContentChunks)
		case line.Type == "summary" && json.Unmarshal(lines.Bytes(), &v) == nil:
			summary++
		}
	}
	if err := cmd.Wait(); err != nil || summary != 1 || bad > 0 {
		t.Fatalf("node stream.mjs %s: %v; %d summaries, %d lines not JSON\n%s", mode, err, summary, bad, lastLines(stderr.String(), 20))
	}
	return v
}
