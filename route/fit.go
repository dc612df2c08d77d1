package route

import (
	"fmt"
	"unicode/utf8"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
)

// keepExchanges keeps the system messages and the last n user turns with
// what followed each (seed 000 sends only the last two exchanges). n == 0
// keeps everything. The request is copied, never modified.
func keepExchanges(req *llm.Request, n int) *llm.Request {
	if n <= 0 {
		return req
	}
	users := 0
	cut := -1
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			users++
			if users == n+1 {
				cut = i
				break
			}
		}
	}
	if cut < 0 {
		return req
	}
	out := *req
	out.Messages = make([]llm.Message, 0, len(req.Messages))
	for i, m := range req.Messages {
		if i <= cut && m.Role != "system" && m.Role != "developer" {
			continue
		}
		out.Messages = append(out.Messages, m)
	}
	return &out
}

// outputReserve is the room kept for the answer when checking a request
// against a route's context.
func outputReserve(req *llm.Request, rt *config.Route) int {
	n := req.MaxTokens
	if rt.MaxOutput > 0 && (n == 0 || n > rt.MaxOutput) {
		n = rt.MaxOutput
	}
	if n == 0 {
		n = 256
	}
	return n
}

// fit returns the request as it may be sent to rt: as is when it fits the
// route's context (or the context is unknown), with the system prompt cut
// when the chain allows it, or not at all. cut describes what was cut.
func fit(req *llm.Request, est int, rt *config.Route, ch *config.Chain) (*llm.Request, string, bool) {
	if rt.MaxContext <= 0 {
		return req, "", true
	}
	over := est + outputReserve(req, rt) - rt.MaxContext
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
		return req, "", false
	}
	keep := len(sys) * (sysTokens - over) / sysTokens
	keep = keep * 95 / 100 // the estimate is not exact: leave a little room
	cutText := truncate(sys, keep)
	out := *req
	out.Messages = append([]llm.Message(nil), req.Messages...)
	out.Messages[si].Content = cutText
	out.Messages[si].Parts = nil
	return &out, fmt.Sprintf("system prompt cut from %d to %d bytes", len(sys), len(cutText)), true
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
