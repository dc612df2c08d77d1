package gemini

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

// wireResponse is a GenerateContentResponse: the whole answer of
// generateContent, or one event of streamGenerateContent.
type wireResponse struct {
	Candidates     []wireCandidate `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *wireUsage `json:"usageMetadata"`
	ModelVersion  string     `json:"modelVersion"`
	ResponseID    string     `json:"responseId"`
	// Error is set on an error event in a stream (and never, as far as is
	// known, on a 200 generateContent answer).
	Error *wireError `json:"error"`
}

// wireCandidate is one candidate answer; tollfree asks for one.
type wireCandidate struct {
	Content struct {
		Parts []wirePart `json:"parts"`
	} `json:"content"`
	FinishReason string `json:"finishReason"`
}

// wireUsage is usageMetadata. thoughtsTokenCount is part of
// totalTokenCount but not of candidatesTokenCount.
type wireUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
}

// wireError is Google's error object, {"code", "message", "status"}.
type wireError struct {
	Code   int    `json:"code"`
	Status string `json:"status"`
}

// usage translates usageMetadata: thoughts count as completion tokens, as
// OpenAI counts reasoning tokens.
func (u *wireUsage) usage() llm.Usage {
	return llm.Usage{
		PromptTokens:     u.PromptTokenCount,
		CompletionTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount,
		TotalTokens:      u.TotalTokenCount,
		ReasoningTokens:  u.ThoughtsTokenCount,
		CachedTokens:     u.CachedContentTokenCount,
	}
}

// functionCalls returns the candidate's functionCall parts as OpenAI's
// tool_calls (a whole answer's form, without index), numbered from first;
// nil when it has none. Each call's id is Gemini's when it gave one, else
// one made from the response's id and the call's place in the answer, so
// that the same answer, whole or streamed, gives the same ids (callID).
func (c *wireCandidate) functionCalls(responseID string, first int) []openAICall {
	var out []openAICall
	for _, p := range c.Content.Parts {
		fc := p.FunctionCall
		if fc == nil || fc.Name == "" {
			continue
		}
		args := "{}"
		if len(fc.Args) > 0 && !isNull(fc.Args) {
			args = string(fc.Args)
		}
		id := fc.ID
		if id == "" {
			id = callID(responseID, first+len(out), fc.Name)
		}
		oc := openAICall{ID: id, Type: "function"}
		oc.Function.Name, oc.Function.Arguments = fc.Name, args
		out = append(out, oc)
	}
	return out
}

// openAICall is one call of OpenAI's tool_calls; Index is set in a
// stream's delta only.
type openAICall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// callID is a tool call's id when Gemini gave none: "call_" and 24 hex
// digits of a hash of the response's id, the call's place and its name.
func callID(responseID string, n int, name string) string {
	h := sha256.Sum256([]byte(responseID + "\x00" + strconv.Itoa(n) + "\x00" + name))
	return "call_" + hex.EncodeToString(h[:12])
}

// text returns the candidate's answer text and its thought text, each the
// concatenation of its parts.
func (c *wireCandidate) text() (content, reasoning string) {
	var cb, rb strings.Builder
	for _, p := range c.Content.Parts {
		if p.Thought {
			rb.WriteString(p.Text)
		} else {
			cb.WriteString(p.Text)
		}
	}
	return cb.String(), rb.String()
}

// finishReason maps Gemini's finishReason onto OpenAI's. Reasons with no
// OpenAI counterpart (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL...) map to
// stop; "" stays "" (not finished yet).
func finishReason(r string) string {
	switch r {
	case "":
		return ""
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY":
		return "content_filter"
	default:
		return "stop"
	}
}

// decodeResponse translates a generateContent answer: its text, thoughts
// and function calls (tool_calls, finish_reason tool_calls). Its errors
// wrap failure.ErrMalformed (the body does not parse), failure.ErrRefused
// (the prompt or the answer was blocked) or failure.ErrEmptyAnswer (no
// text and no call).
func decodeResponse(body []byte) (*llm.Response, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("gemini: decode response: %w: %w", failure.ErrMalformed, err)
	}
	if w.Error != nil {
		return nil, fmt.Errorf("gemini: error object (%d %s) in a 2xx response: %w", w.Error.Code, w.Error.Status, failure.ErrMalformed)
	}
	r := &llm.Response{
		ID:    w.ResponseID,
		Model: strings.TrimPrefix(w.ModelVersion, "models/"),
	}
	if w.UsageMetadata != nil {
		r.Usage, r.UsageKnown = w.UsageMetadata.usage(), true
	}
	if len(w.Candidates) == 0 {
		if err := blocked(&w); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("gemini: no candidates: %w", failure.ErrEmptyAnswer)
	}
	c := &w.Candidates[0]
	r.Content, r.Reasoning = c.text()
	r.FinishReason = finishReason(c.FinishReason)
	if calls := c.functionCalls(w.ResponseID, 0); calls != nil {
		r.ToolCalls, _ = json.Marshal(calls)
		if r.FinishReason == "stop" {
			r.FinishReason = "tool_calls"
		}
	}
	if r.Content == "" && r.ToolCalls == nil {
		if err := blocked(&w); err != nil {
			return nil, err
		}
		if r.FinishReason == "content_filter" {
			return nil, fmt.Errorf("gemini: answer blocked (%s): %w", c.FinishReason, failure.ErrRefused)
		}
		return nil, fmt.Errorf("gemini: no answer text (finish %q): %w", c.FinishReason, failure.ErrEmptyAnswer)
	}
	return r, nil
}

// blocked returns the refusal of a prompt Gemini blocked, or nil.
func blocked(w *wireResponse) error {
	if w.PromptFeedback != nil && w.PromptFeedback.BlockReason != "" {
		return fmt.Errorf("gemini: prompt blocked (%s): %w", w.PromptFeedback.BlockReason, failure.ErrRefused)
	}
	return nil
}
