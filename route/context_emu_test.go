package route

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
	"github.com/tollfree/tollfree/llm"
)

// Fitting a request to each route, against the emulator: what each route
// was sent, and what the call log says was cut. (fit_test.go tests the
// fitting functions on their own.)

const contextChains = `
chains:
  recent:
    routes: [groq/llama-3.3-70b-versatile]
    keep_exchanges: 2
  condensed:
    routes: [groq/llama-3.3-70b-versatile, cerebras/llama3.1-8b]
    trim_system: true
  strict:
    routes: [groq/llama-3.3-70b-versatile, cerebras/llama3.1-8b, cerebras/gpt-oss-120b]
  small:
    routes: [cerebras/llama3.1-8b]
  plain:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 25s
`

// conversation is a request of the messages given as role, content pairs.
func conversation(stream bool, pairs ...string) *llm.Request {
	req := &llm.Request{Stream: stream}
	for i := 0; i+1 < len(pairs); i += 2 {
		req.Messages = append(req.Messages, llm.Message{Role: pairs[i], Content: pairs[i+1]})
	}
	return req
}

// lastRecord is the emulator's record of its last call.
func lastRecord(t *testing.T, s *stack) emulator.Record {
	t.Helper()
	rs := s.emu.Records()
	if len(rs) == 0 {
		t.Fatal("no call reached the emulator")
	}
	return rs[len(rs)-1]
}

// answerOrStream answers req on chain, streamed or not, and returns the
// request id and the route that answered.
func (s *stack) answerOrStream(chain string, req *llm.Request) (id, route string, err error) {
	s.t.Helper()
	if !req.Stream {
		a := s.chat(s.t.Context(), chain, req)
		return a.id, a.route(), a.err
	}
	got, err := s.stream(chain, req)
	if err == nil {
		err = got.err
	}
	return got.id, got.route, err
}

// TestChainKeepsLastExchanges: a chain that keeps the last two exchanges (seed 000)
// sends the system prompt and those only, and the call log says so.
func TestChainKeepsLastExchanges(t *testing.T) {
	s := newStackWith(t, stackOptions{providers: emutest.LimitedProviders, chains: contextChains})
	const sys, u3, a3, u4 = "You answer questions about this site.", "And the third?", "The third is here.", "And the last one?"
	got := s.chat(t.Context(), "recent", conversation(false,
		"system", sys, "user", "First question?", "assistant", "First answer.",
		"user", "Second question?", "assistant", "Second answer.",
		"user", u3, "assistant", a3, "user", u4))
	if got.err != nil {
		t.Fatalf("got %v", got)
	}
	if want := emutest.Tokens(sys + u3 + a3 + u4); lastRecord(t, s).PromptTokens != want {
		t.Errorf("the route got %d prompt tokens, want %d: the system prompt and the last two exchanges", lastRecord(t, s).PromptTokens, want)
	}
	atts := s.recs.forRequest(got.id)
	if len(atts) != 1 || atts[0].Cut != "kept the last 2 exchanges: 4 earlier messages dropped" {
		t.Errorf("attempts %+v, want the cut named in the call log", atts)
	}
}

// TestContextFitsEachRoute: a system prompt of 18,000 bytes
// (seed 001) goes whole to the large route, condensed to the small
// safety-net route (max_context 1000) of a chain that allows it, and
// nowhere else: without the declaration the small route is skipped as too
// large, and a request too long for every route is a TooLargeError (which
// the HTTP API answers with a 400 context_length_exceeded: httpapi's
// TestServerOnlyEncodes).
func TestContextFitsEachRoute(t *testing.T) {
	sys := strings.Repeat("Project 🚀 tollfree: a gateway over free tiers. ", 360)
	question := "What have you built?"
	t.Run("condensed for the small route", func(t *testing.T) {
		s := newStackWith(t, stackOptions{providers: emutest.LimitedProviders, chains: contextChains})
		for _, stream := range []bool{false, true} {
			s.clk.Advance(time.Minute)
			s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
			id, route, err := s.answerOrStream("condensed", conversation(stream, "system", sys, "user", question))
			if err != nil || route != "cerebras/llama3.1-8b" {
				t.Fatalf("stream %v: route %q, err %v", stream, route, err)
			}
			// The emulator counts a token per 4 bytes, the gateway's estimate
			// per word and symbol: the two agree only roughly.
			if rec := lastRecord(t, s); rec.PromptTokens >= 1000 || rec.PromptTokens < 500 {
				t.Errorf("the small route got about %d prompt tokens, want a condensed context within its 1000", rec.PromptTokens)
			}
			var cut string
			for _, a := range s.recs.forRequest(id) {
				if a.Route == "cerebras/llama3.1-8b" {
					cut = a.Cut
				}
			}
			if !strings.HasPrefix(cut, fmt.Sprintf("system prompt cut from %d to ", len(sys))) || !strings.HasSuffix(cut, " bytes to fit a context of 1000 tokens") {
				t.Errorf("call log cut = %q, want the system prompt's cut", cut)
			}
		}
		if rs := s.emu.Records(); rs[0].PromptTokens != emutest.Tokens(sys+question) {
			t.Errorf("the large route got %d prompt tokens, want the whole %d", rs[0].PromptTokens, emutest.Tokens(sys+question))
		}
	})
	t.Run("without trim_system the small route is skipped", func(t *testing.T) {
		s := newStackWith(t, stackOptions{providers: emutest.LimitedProviders, chains: contextChains})
		s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
		got := s.chat(t.Context(), "strict", conversation(false, "system", sys, "user", question))
		if got.err != nil || got.route() != "cerebras/gpt-oss-120b" {
			t.Fatalf("got %v", got)
		}
		if n := s.emu.Calls("cerebras", "llama3.1-8b"); n != 0 {
			t.Errorf("the too-small route was called %d times", n)
		}
		for _, a := range s.recs.forRequest(got.id) {
			if a.Cut != "" {
				t.Errorf("attempt %+v: something was cut without the chain's leave", a)
			}
		}
	})
	t.Run("too long for every route", func(t *testing.T) {
		s := newStackWith(t, stackOptions{providers: emutest.LimitedProviders, chains: contextChains})
		for _, stream := range []bool{false, true} {
			_, _, err := s.answerOrStream("small", conversation(stream, "system", sys, "user", question))
			var tl *TooLargeError
			if !errors.As(err, &tl) {
				t.Fatalf("stream %v: err %v, want a TooLargeError", stream, err)
			}
			if m := tl.Error(); !strings.Contains(m, "too long for every route") || !strings.Contains(m, "1000") {
				t.Errorf("message %q does not say the request is too long, and the largest context", m)
			}
		}
		if n := len(s.emu.Records()); n != 0 {
			t.Errorf("%d calls reached a provider", n)
		}
	})
}

// TestNonStreamedProtections: without stream, a body cut short and a stall
// after the headers fail over as before.
func TestNonStreamedProtections(t *testing.T) {
	tests := []struct {
		name    string
		step    emulator.Step
		advance time.Duration
		class   string
	}{
		{"body cut short", emulator.Step{Kind: emulator.StreamCut}, 0, "overloaded"},
		{"stall after the headers", emulator.Step{Kind: emulator.StreamStall}, 8 * time.Second, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t, contextChains)
			s.emu.Script("groq", "llama-3.3-70b-versatile", tt.step)
			done := make(chan answer, 1)
			go func() { done <- s.chat(t.Context(), "plain", question("Hi")) }()
			if tt.advance > 0 {
				s.waitCalls("groq", "llama-3.3-70b-versatile", 1)
				s.clk.Advance(tt.advance)
			}
			got := <-done
			if got.err != nil || got.content() != emutest.Answer("cerebras/gpt-oss-120b") {
				t.Fatalf("got %v", got)
			}
			if r, ok := s.rest("groq/llama-3.3-70b-versatile"); !ok || r.Class != tt.class {
				t.Errorf("rest %+v (%v), want %s", r, ok, tt.class)
			}
		})
	}
}
