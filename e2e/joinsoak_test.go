package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/clock"
)

// The join soak of issue 32: streams broken anywhere in answers made to
// trip a join (repeated words, numbers, indented code, CJK), continued by
// routes that continue exactly, repeat the last words first, or start over;
// every answer ends in a checksum. The normal suite runs joinsoak.n
// requests (300); the soak is
//
//	go test ./e2e -run TestJoinSoak -joinsoak.n=10000 -v -count=1
var (
	joinSoakN    = flag.Int("joinsoak.n", 300, "requests TestJoinSoak sends")
	joinSoakC    = flag.Int("joinsoak.c", 8, "concurrent callers in TestJoinSoak")
	joinSoakSeed = flag.Uint64("joinsoak.seed", 32, "seed of TestJoinSoak's answers and breaks")
)

// joinSoakDeadline is the chain's deadline; joinSoakSlack how long past it
// the caller may wait for the end on a loaded 2-core machine.
const (
	joinSoakDeadline = 20 * time.Second
	joinSoakSlack    = 2 * time.Second
)

// joinSoakRoutes continue a broken stream as their presets say (prefix on
// Groq and Gemini Flash, instruct on Cerebras), each as its model does:
// exactly, repeating the last three words first, or starting over.
var joinSoakRoutes = []struct {
	id   string
	cont emulator.Continuation
}{
	{"groq/llama-3.3-70b-versatile", emulator.ContinueExact},
	{"cerebras/gpt-oss-120b", emulator.ContinueOverlap},
	{"groq/llama-3.1-8b-instant", emulator.ContinueExact},
	{"gemini/gemini-2.5-flash", emulator.ContinueRestart},
	{"cerebras/llama3.1-8b", emulator.ContinueExact},
}

// joinSoakProviders turn the budgets off: the joins, not the limits, are
// under test.
const joinSoakProviders = `
providers:
  groq:
    preset: groq
    base_url: EMU/groq/v1
    api_key: ${GROQ_API_KEY}
    limits: {rpm: 0, rpd: 0, tpm: 0, tpd: 0}
    models:
      llama-3.3-70b-versatile: {rpm: 0, rpd: 0, tpm: 0, tpd: 0}
      llama-3.1-8b-instant: {rpm: 0, rpd: 0, tpm: 0, tpd: 0}
  gemini:
    preset: gemini
    base_url: EMU/gemini/v1beta
    api_key: ${GEMINI_API_KEY}
    limits: {rpm: 0, rpd: 0, tpm: 0, tpd: 0}
    models:
      gemini-2.5-flash: {rpm: 0, rpd: 0, tpm: 0, tpd: 0}
  cerebras:
    preset: cerebras
    base_url: EMU/cerebras/v1
    api_key: ${CEREBRAS_API_KEY}
    limits: {rpm: 0, rpd: 0, tpm: 0, tpd: 0}
    models:
      gpt-oss-120b: {rpm: 0, rpd: 0, tpm: 0, tpd: 0}
      llama3.1-8b: {rpm: 0, rpd: 0, tpm: 0, tpd: 0}
`

const joinSoakChains = `
rest: {overloaded: 1ms, timeout: 1ms, empty: 1ms}
chains:
  soak:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b, groq/llama-3.1-8b-instant, gemini/gemini-2.5-flash, cerebras/llama3.1-8b]
    attempt_timeout: 8s
    deadline: 20s
    idle_timeout: 5s
    fallback: {message: "The assistant is resting."}
`

// soakText is the answer to question seed: pieces that a trimming join
// gets wrong, and a checksum of them at the end.
func soakText(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0x32))
	words := []string{"lima", "four", "the", "1000", "東京", "data", "x"}
	var b strings.Builder
	for range 6 + r.IntN(6) {
		switch r.IntN(5) {
		case 0: // a word said again and again
			w := words[r.IntN(len(words))]
			for range 2 + r.IntN(5) {
				b.WriteString(w + " ")
			}
			b.WriteString("five. ")
		case 1: // numbers that repeat their tails
			fmt.Fprintf(&b, "%d %d0 %d00 %d %d. ", r.IntN(100), r.IntN(100), r.IntN(10), r.IntN(1000), r.IntN(1000))
		case 2: // indented code
			n := r.IntN(9)
			fmt.Fprintf(&b, "\ndef f%d(x):\n    if x:\n        return [x, x, x]\n", n)
			for range r.IntN(3) {
				b.WriteString("        x = x + 1\n")
			}
			b.WriteString("    return None\n\n")
		case 3: // CJK, with repeats
			b.WriteString("東京 東京 大阪。数字 一 一 二 二二。 ")
		default:
			b.WriteString("Tollfree keeps an answer whole: ")
		}
	}
	body := b.String()
	return fmt.Sprintf("%s\nchecksum %08x", body, crc32.ChecksumIEEE([]byte(body)))
}

// soakReply answers the soak's question: its seed is in the first user
// turn, so that every route, and a continuation, answers the same text.
func soakReply(turns []emulator.Turn) string {
	for _, t := range turns {
		if rest, ok := strings.CutPrefix(t.Text, "soak question "); ok && t.Role == "user" {
			if seed, err := strconv.ParseUint(rest, 10, 64); err == nil {
				return soakText(seed)
			}
		}
	}
	return "not a soak question"
}

// soakMix is each route's behaviour: three answers in five whole, in
// pieces of 1 to 9 bytes; the other two (40 %) cut after a random number
// of pieces, so that a break falls mid-word, mid-indentation and
// mid-repetition.
func soakMix(seed uint64) []emulator.Weighted {
	r := rand.New(rand.NewPCG(seed, 7))
	var steps []emulator.Weighted
	for range 20 {
		cb := 1 + r.IntN(9)
		steps = append(steps, emulator.Weighted{Weight: 3, Step: emulator.Step{Kind: emulator.Answer, ChunkBytes: cb}})
		steps = append(steps, emulator.Weighted{Weight: 2, Step: emulator.Step{Kind: emulator.StreamCut, ChunkBytes: cb, After: 1 + r.IntN(400/cb)}})
	}
	return steps
}

// soakOutcome is what one request came to.
type soakOutcome struct {
	kind    string // joined (a stream with [DONE]), whole, broken (error event), fallback, 5xx, altered, failed
	problem string
	wall    time.Duration
}

// TestJoinSoak holds the join to issue 32's rule over joinsoak.n requests:
// no answer is ever altered (a stream with [DONE] has exactly the text,
// checksum included; one ended by an error event has a prefix of it), no
// 5xx, no request past its deadline.
func TestJoinSoak(t *testing.T) {
	checkLeaks(t)
	clk := clock.NewScaled(t0, 1)
	s := startStackWith(t, stackOptions{providers: joinSoakProviders, config: joinSoakChains, clock: clk})
	for i, r := range joinSoakRoutes {
		p, m, _ := strings.Cut(r.id, "/")
		s.emu.AddModel(p, emulator.Model{ID: m, Reply: soakReply, Continue: r.cont})
		s.emu.SetMix(p, m, emulator.Mix{Seed: *joinSoakSeed*100 + uint64(i), Steps: soakMix(*joinSoakSeed*100 + uint64(i))})
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *joinSoakC}}
	outcomes := make([]soakOutcome, *joinSoakN)
	next := make(chan int)
	var wg sync.WaitGroup
	begin := time.Now()
	for range *joinSoakC {
		wg.Go(func() {
			for i := range next {
				outcomes[i] = soakOne(client, s.srv.URL, *joinSoakSeed*1_000_000+uint64(i), i%5 != 4)
			}
		})
	}
	for i := range *joinSoakN {
		next <- i
	}
	close(next)
	wg.Wait()
	took := time.Since(begin)

	counts := map[string]int{}
	var slowest time.Duration
	shown := 0
	for i, o := range outcomes {
		counts[o.kind]++
		slowest = max(slowest, o.wall)
		switch o.kind {
		case "joined", "whole", "broken", "fallback":
			if o.wall <= joinSoakDeadline+joinSoakSlack {
				continue
			}
			o.problem = fmt.Sprintf("ended %v after it was sent, past the %v deadline", o.wall, joinSoakDeadline)
		}
		if shown++; shown <= 10 {
			t.Errorf("request %d: %s: %s", i, o.kind, o.problem)
		}
	}
	// The continuations, by method and by what the join made of them: ok
	// (joined), unsupported (abandoned: no proven join), or the break of
	// the continuation itself.
	parts := map[string]int{}
	for _, a := range s.recs.all() {
		if a.Part > 0 {
			parts[a.Method+" "+a.Class.String()]++
		}
	}
	t.Logf("join soak: %d requests in %v (%d at a time): %v; continuations %v; slowest %v; upstream calls %d",
		*joinSoakN, took.Round(time.Millisecond), *joinSoakC, counts, parts, slowest.Round(time.Millisecond), len(s.emu.Records()))
	if counts["joined"] == 0 || counts["altered"] > 0 || counts["5xx"] > 0 {
		t.Errorf("%d joined, %d altered, %d 5xx; want some joined, none altered, no 5xx", counts["joined"], counts["altered"], counts["5xx"])
	}
}

// soakOne asks question seed, streamed or whole, and judges the answer.
func soakOne(client *http.Client, url string, seed uint64, stream bool) soakOutcome {
	want := soakText(seed)
	body := fmt.Sprintf(`{"model":"soak","stream":%v,"messages":[{"role":"user","content":"soak question %d"}]}`, stream, seed)
	ctx, cancel := context.WithTimeout(context.Background(), joinSoakDeadline+time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return soakOutcome{kind: "failed", problem: err.Error(), wall: time.Since(start)}
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	o := soakOutcome{wall: time.Since(start)}
	if err != nil && stream && bytes.Contains(raw, []byte(`"code":"stream_broken"`)) {
		err = nil // a broken stream's connection is cut after its error event
	}
	switch {
	case err != nil:
		o.kind, o.problem = "failed", fmt.Sprintf("stream %v: %v after %q", stream, err, raw[max(0, len(raw)-300):])
	case resp.StatusCode >= 500:
		o.kind, o.problem = "5xx", fmt.Sprintf("status %d: %.200s", resp.StatusCode, raw)
	case resp.StatusCode != http.StatusOK:
		o.kind, o.problem = "failed", fmt.Sprintf("status %d: %.200s", resp.StatusCode, raw)
	case !stream:
		o.kind, o.problem = soakWhole(raw, want)
	default:
		o.kind, o.problem = soakStream(raw, want)
	}
	return o
}

// soakWhole judges a whole answer: the text exactly, or the fallback.
func soakWhole(raw []byte, want string) (string, string) {
	var r struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	if json.Unmarshal(raw, &r) != nil || len(r.Choices) != 1 {
		return "failed", fmt.Sprintf("not a chat completion: %.200s", raw)
	}
	switch got := r.Choices[0].Message.Content; got {
	case want:
		return "whole", ""
	case "The assistant is resting.":
		return "fallback", ""
	default:
		return "altered", fmt.Sprintf("got %q, want %q", got, want)
	}
}

// soakStream judges a stream: with [DONE], one finish and exactly the
// text; without, an error event after a prefix of it.
func soakStream(raw []byte, want string) (string, string) {
	var text strings.Builder
	finishes, done, errored := 0, false, false
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var ev struct {
			Error   json.RawMessage
			Choices []struct {
				Delta        struct{ Content string }
				FinishReason *string `json:"finish_reason"`
			}
		}
		if json.Unmarshal([]byte(data), &ev) != nil {
			return "failed", "an event that is not JSON: " + data
		}
		if len(ev.Error) > 0 {
			errored = true
		}
		for _, c := range ev.Choices {
			text.WriteString(c.Delta.Content)
			if c.FinishReason != nil {
				finishes++
			}
		}
	}
	got := text.String()
	switch {
	case done && !errored && finishes == 1 && got == want:
		return "joined", ""
	case done && got == "The assistant is resting.":
		return "fallback", ""
	case !done && errored && finishes == 0 && strings.HasPrefix(want, got):
		return "broken", ""
	}
	return "altered", fmt.Sprintf("[DONE] %v, error event %v, %d finishes; got %q, want %q", done, errored, finishes, got, want)
}
