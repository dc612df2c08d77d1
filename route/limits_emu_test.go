package route

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/failure"
)

// tpmOnlyProviders is emutest.Providers with Groq's 70b model given no
// context size, so that only its TPM (12,000, the preset's) can see that a
// request is too large.
const tpmOnlyProviders = `
providers:
  groq:
    preset: groq
    base_url: EMU/groq/v1
    api_key: ${GROQ_API_KEY}
    models:
      llama-3.3-70b-versatile: {max_context: 0}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`

// TestHugeMaxTokensIsTooLarge: max_tokens 2^63-1 is a request too large
// for every route (by TPM, or by context): a TooLargeError that names
// max_tokens (the HTTP API's 400: httpapi's TestHugeMaxTokens), and no
// call reaches a route. It used to wrap the token reservation negative,
// which every TPM check passed (issue 10).
func TestHugeMaxTokensIsTooLarge(t *testing.T) {
	const chains = `
chains:
  tpm:
    routes: [groq/llama-3.3-70b-versatile]
  context:
    routes: [groq/llama-3.1-8b-instant]
`
	for _, chain := range []string{"tpm", "context"} {
		t.Run(chain, func(t *testing.T) {
			s := newStackWith(t, stackOptions{providers: tpmOnlyProviders, chains: chains})
			req := question(emutest.Question)
			req.MaxTokens = math.MaxInt64
			got := s.chat(t.Context(), chain, req)
			var tl *TooLargeError
			if !errors.As(got.err, &tl) {
				t.Fatalf("got %v; want a TooLargeError", got)
			}
			if msg := tl.Error(); !strings.Contains(msg, "max_tokens 9223372036854775807") {
				t.Errorf("message %q does not name max_tokens", msg)
			}
			if n := len(s.emu.Records()); n != 0 {
				t.Errorf("%d calls reached a route, want none", n)
			}
		})
	}
}

// TestStreamEndsAtTheChainDeadline: the chain's deadline caps a whole
// stream, after its first token too. A route sending a token every 0.9 s
// on a chain with a 6 s deadline is cut at 6 s: the caller gets the tokens
// so far and a BrokenError saying so (the HTTP API's error event, never a
// finish or [DONE]: httpapi's TestStreamBrokenEvent); no continuation is
// tried past the deadline and the route does not rest (it was answering).
// Such a stream used to run on for the whole answer (issue 10: 17 s).
func TestStreamEndsAtTheChainDeadline(t *testing.T) {
	const chains = `
chains:
  slow:
    routes: [groq/llama-3.3-70b-versatile, groq/llama-3.1-8b-instant]
    attempt_timeout: 5s
    deadline: 6s
    idle_timeout: 5s
`
	const tick = 900 * time.Millisecond
	s := newStackWith(t, stackOptions{providers: emutest.LimitedProviders, chains: chains})
	s.emu.AddModel("groq", emulator.Model{ID: "llama-3.3-70b-versatile", ChunkDelay: tick, Answer: strings.TrimSpace(strings.Repeat("word ", 30))})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, rs, err := s.openStream(context.Background(), "slow", streamRequest(false))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	for i := 0; i <= 6; i++ { // tokens at 0, 0.9 ... 5.4 s
		if i > 0 {
			at := t0.Add(time.Duration(i) * tick)
			if err := s.clk.BlockUntilDeadline(ctx, at); err != nil {
				t.Fatalf("the route does not wait for its token %d: %v", i, err)
			}
			s.clk.Set(at)
		}
		if c, err := rs.Next(); err != nil || c.Content != "word " {
			t.Fatalf("chunk %d = %+v, %v; want a word", i, c, err)
		}
	}
	// The next token is due at 6.3 s; the chain's deadline is 6 s.
	if err := s.clk.BlockUntilDeadline(ctx, t0.Add(7*tick)); err != nil {
		t.Fatalf("the route does not wait for its token 7: %v", err)
	}
	s.clk.Set(t0.Add(6 * time.Second))
	done := make(chan streamed, 1)
	go func() { done <- drain(id, rs) }()
	var end streamed
	select {
	case end = <-done:
	case <-ctx.Done():
		t.Fatal("at the chain's 6s deadline the stream is still open")
	}
	var be *BrokenError
	if !errors.As(end.err, &be) || !be.Deadline || be.Route != "groq/llama-3.3-70b-versatile" || len(end.chunks) != 0 {
		t.Errorf("after the deadline: chunks %+v, then %#v; want nothing more and a BrokenError at the deadline", end.chunks, end.err)
	}
	if !s.clk.Now().Equal(t0.Add(6 * time.Second)) {
		t.Errorf("the clock moved on to %v", s.clk.Now())
	}
	atts := s.recs.forRequest(id)
	if len(atts) != 1 || atts[0].Class.String() != "timeout" || !atts[0].RestKey.IsZero() {
		t.Errorf("attempts %+v, want one timeout without a rest", atts)
	}
	if n := s.emu.Calls("groq", "llama-3.1-8b-instant"); n != 0 {
		t.Errorf("%d continuations tried past the deadline", n)
	}
}

// TestStreamClosedMidwayIsCancelled: a stream its reader closes halfway
// (the HTTP API does, once a write to a client that stopped reading times
// out: httpapi's TestSlowReaderIsDropped) lets the upstream call go: the
// attempt is logged as cancelled, and nothing rests.
func TestStreamClosedMidwayIsCancelled(t *testing.T) {
	s := newStack(t, streamChains)
	answer := strings.TrimSpace(strings.Repeat("word ", 1<<20/5))
	s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.Answer, Text: answer, ChunkBytes: 16 << 10})
	id, rs, err := s.openStream(context.Background(), "single", streamRequest(false))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if _, err := rs.Next(); err != nil {
		t.Fatalf("first chunk: %v", err)
	}
	rs.Close()
	s.r.Close()
	atts := s.recs.forRequest(id)
	if len(atts) != 1 || atts[0].Class != failure.Cancelled {
		t.Errorf("attempts %+v, want one cancelled: the upstream call is let go", atts)
	}
	s.noRests()
}
