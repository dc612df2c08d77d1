package route

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
)

// What a route that thinks before answering (config.Route.Reasoning) gets
// that others do not (seed 004: "Reasoning models can think for a minute
// before saying anything ... Heavy requests get a longer timeout and a much
// larger token budget, since thinking tokens count against max_tokens").
const (
	// reasoningTimeoutFactor multiplies the chain's attempt timeout and
	// first-token timeout for a thinking route without a timeout of its
	// own: 20s becomes 60s, and a stream's 10s wait for its first token
	// 30s. A route's own timeout (models: {id: {timeout: 90s}}) is used as
	// set.
	reasoningTimeoutFactor = 3
	// minReserve is the room kept for the answer when checking a request
	// that set no max_tokens against a route's context.
	minReserve = 256
)

// attemptTimeout is the timeout of one attempt of rt on ch, before it is
// clipped to the chain's deadline: the route's own, else the chain's, times
// reasoningTimeoutFactor for a thinking route.
func attemptTimeout(rt *config.Route, ch *config.Chain) time.Duration {
	if rt.Timeout > 0 {
		return rt.Timeout
	}
	if rt.Reasoning {
		return ch.AttemptTimeout * reasoningTimeoutFactor
	}
	return ch.AttemptTimeout
}

// firstTokenTimeout is how long a stream of rt on ch waits for its first
// token, before it is clipped to the chain's deadline (issue 13: a first
// token 20 s late used to be waited for): the chain's first-token timeout,
// times reasoningTimeoutFactor for a thinking route, and never longer than
// the attempt timeout. A route's own timeout is used as set, for its first
// token too: it is what the operator (or the preset: Ollama's 2 min, for a
// CPU slow to its first token) knows of that model, and the chain's
// timeouts are for the routes that say nothing. A chain without a
// first-token timeout (one built by hand) waits the attempt timeout, as
// before.
func firstTokenTimeout(rt *config.Route, ch *config.Chain) time.Duration {
	at := attemptTimeout(rt, ch)
	if rt.Timeout > 0 || ch.FirstTokenTimeout <= 0 {
		return at
	}
	ft := ch.FirstTokenTimeout
	if rt.Reasoning {
		ft *= reasoningTimeoutFactor
	}
	return min(ft, at)
}

// keepExchanges keeps the system messages and the last n user turns with
// what followed each (seed 000 sends only the last two exchanges). n == 0
// keeps everything. The request is copied, never modified; note says what
// was dropped ("" when nothing was).
func keepExchanges(req *llm.Request, n int) (out *llm.Request, note string) {
	if n <= 0 {
		return req, ""
	}
	// start is the n-th user turn from the end: the first exchange kept.
	users, start := 0, -1
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			if users++; users == n {
				start = i
				break
			}
		}
	}
	if start <= 0 {
		return req, ""
	}
	cp := *req
	cp.Messages = make([]llm.Message, 0, len(req.Messages))
	for i, m := range req.Messages {
		if i < start && m.Role != "system" && m.Role != "developer" {
			continue
		}
		cp.Messages = append(cp.Messages, m)
	}
	if len(cp.Messages) == len(req.Messages) {
		return req, ""
	}
	return &cp, fmt.Sprintf("kept the last %d exchanges: %d earlier messages dropped", n, len(req.Messages)-len(cp.Messages))
}

// outputReserve is the room kept for the answer when checking a request
// against a route's context: what the caller asked for (capped by the
// route's max_output), else minReserve.
func outputReserve(req *llm.Request, rt *config.Route) int {
	n := req.MaxTokens
	if rt.MaxOutput > 0 && n > rt.MaxOutput {
		n = rt.MaxOutput
	}
	if n == 0 {
		n = minReserve
	}
	return n
}

// fit returns the request as it may be sent to rt: as is when it fits the
// route's context (or the context is unknown), with the system prompt cut
// when the chain allows it (seed 001: the small safety-net route gets a
// condensed context rather than a refusal), or not at all (ok false: the
// route is too small for this request). cut says what was cut. Without
// ch.TrimSystem nothing is ever cut. The request is then adjusted to the
// route's output settings (see forRoute). req is never modified.
func fit(req *llm.Request, est int, rt *config.Route, ch *config.Chain) (out *llm.Request, cut string, ok bool) {
	out, cut, ok = trimToContext(req, est, rt, ch)
	if !ok {
		return req, "", false
	}
	if out != req {
		est = quota.Estimate(out)
	}
	return forRoute(out, est, rt), cut, true
}

func trimToContext(req *llm.Request, est int, rt *config.Route, ch *config.Chain) (*llm.Request, string, bool) {
	if rt.MaxContext <= 0 {
		return req, "", true
	}
	reserve := outputReserve(req, rt)
	over := quota.AddTokens(est, reserve) - rt.MaxContext
	if over <= 0 {
		return req, "", true
	}
	if !ch.TrimSystem {
		return req, "", false
	}
	si := -1
	for i, m := range req.Messages {
		if m.Role == "system" || m.Role == "developer" {
			si = i
			break
		}
	}
	if si < 0 {
		return req, "", false
	}
	sys := req.Messages[si].Content
	sysTokens := quota.Estimate(&llm.Request{Messages: []llm.Message{{Role: "system", Content: sys}}})
	if sysTokens <= over {
		return req, "", false // even without its system prompt it would not fit
	}
	out := *req
	out.Messages = append([]llm.Message(nil), req.Messages...)
	keep := len(sys)
	// The estimate is not linear in bytes (the framing, words against
	// punctuation), so cut, measure, and cut again while still over.
	for range 6 {
		keep = keep * (sysTokens - over) / sysTokens
		keep = keep * 97 / 100 // leave a little room for the estimate's error
		out.Messages[si].Content = truncate(sys, keep)
		out.Messages[si].Parts = nil
		if quota.AddTokens(quota.Estimate(&out), reserve) <= rt.MaxContext {
			cutText := out.Messages[si].Content
			return &out, fmt.Sprintf("system prompt cut from %d to %d bytes to fit a context of %d tokens", len(sys), len(cutText), rt.MaxContext), true
		}
		sysTokens = quota.Estimate(&llm.Request{Messages: []llm.Message{{Role: "system", Content: out.Messages[si].Content}}})
		over = quota.AddTokens(quota.Estimate(&out), reserve) - rt.MaxContext
		keep = len(out.Messages[si].Content)
		if sysTokens <= over {
			break
		}
	}
	return req, "", false
}

// forRoute applies the route's output settings: max_tokens capped by its
// max_output, and, for a thinking route where the caller set none, raised
// to its whole max_output (within what its context leaves): thinking
// tokens count against max_tokens, so a small default can be spent on
// thinking and leave an empty answer (seed 004). A thinking route without a
// declared max_output keeps the provider's default, which for the free
// tiers' thinking models is their whole output; sending a smaller number
// would cut answers (Gemini 2.5 Flash answers up to 65,536 tokens).
func forRoute(req *llm.Request, est int, rt *config.Route) *llm.Request {
	n := req.MaxTokens
	switch {
	case n > 0 && rt.MaxOutput > 0 && n > rt.MaxOutput:
		n = rt.MaxOutput
	case n == 0 && rt.Reasoning && rt.MaxOutput > 0:
		n = rt.MaxOutput
		if rt.MaxContext > 0 && est+n > rt.MaxContext {
			n = rt.MaxContext - est
			if n < minReserve {
				n = 0 // leave it to the provider
			}
		}
	}
	if n == req.MaxTokens {
		return req
	}
	out := *req
	out.MaxTokens = n
	return &out
}

// truncate cuts s to at most n bytes on a character boundary (seed 004: a
// cut inside an emoji leaves a broken character some APIs reject).
func truncate(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// joinCut joins what was cut from a request for the call log.
func joinCut(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
