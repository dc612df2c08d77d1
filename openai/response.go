package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

type wireResponse struct {
	ID      string          `json:"id"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Message      wireDelta `json:"message"`
	Delta        wireDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

// wireDelta is an answer's message, or a chunk's delta.
type wireDelta struct {
	Role             string          `json:"role"`
	Content          content         `json:"content"`
	Reasoning        string          `json:"reasoning"`
	ReasoningContent string          `json:"reasoning_content"`
	ToolCalls        json.RawMessage `json:"tool_calls"`
}

// reasoning is the delta's reasoning text, wherever the upstream put it:
// "reasoning" (Groq, OpenRouter, Cerebras, Ollama), "reasoning_content"
// (NVIDIA, DeepSeek-style hosts) or Mistral's thinking parts.
func (d *wireDelta) reasoning() string {
	switch {
	case d.Reasoning != "":
		return d.Reasoning
	case d.ReasoningContent != "":
		return d.ReasoningContent
	}
	return d.Content.reasoning
}

type wireUsage struct {
	PromptTokens            int `json:"prompt_tokens"`
	CompletionTokens        int `json:"completion_tokens"`
	TotalTokens             int `json:"total_tokens"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (w *wireUsage) usage() llm.Usage {
	u := llm.Usage{PromptTokens: w.PromptTokens, CompletionTokens: w.CompletionTokens, TotalTokens: w.TotalTokens}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	if d := w.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = d.ReasoningTokens
	}
	if d := w.PromptTokensDetails; d != nil {
		u.CachedTokens = d.CachedTokens
	}
	return u
}

// unmarshalLenient decodes data into v, tolerating a field of an
// unexpected type (encoding/json then decodes the rest): an upstream that
// sends "created" as a string still delivers a good answer.
func unmarshalLenient(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return nil
	}
	return err
}

// DecodeResponse decodes an upstream's chat.completion. It takes the first
// choice; reasoning comes from message.reasoning or reasoning_content, or
// from a <think> block in the content, which is removed from Content. Usage
// includes completion_tokens_details.reasoning_tokens and
// prompt_tokens_details.cached_tokens. A body that is not JSON gives an
// error wrapping failure.ErrMalformed. A body with no choice, or whose
// content is empty or whitespace with no tool calls, gives an error
// wrapping failure.ErrEmptyAnswer, returned together with the decoded
// response so that its usage can still be counted.
func DecodeResponse(body []byte) (*llm.Response, error) {
	var w wireResponse
	if !decodeResponseFast(body, &w) {
		w = wireResponse{}
		if err := unmarshalLenient(body, &w); err != nil {
			return nil, fmt.Errorf("decode response: %w: %w", failure.ErrMalformed, err)
		}
	}
	r := &llm.Response{ID: w.ID, Model: w.Model, Created: w.Created}
	if w.Usage != nil {
		r.Usage, r.UsageKnown = w.Usage.usage(), true
	}
	if len(w.Choices) == 0 {
		if !isNull(w.Error) {
			return r, fmt.Errorf("decode response: an error object in a 2xx answer: %w", failure.ErrEmptyAnswer)
		}
		return r, fmt.Errorf("decode response: no choices: %w", failure.ErrEmptyAnswer)
	}
	c := &w.Choices[0]
	r.FinishReason = c.FinishReason
	r.Content, r.Reasoning = splitThink(c.Message.Content.text)
	if s := c.Message.reasoning(); s != "" {
		r.Reasoning = s
	}
	if !isNull(c.Message.ToolCalls) {
		r.ToolCalls = cleanRaw(c.Message.ToolCalls)
	}
	if r.ToolCalls == nil && strings.TrimSpace(r.Content) == "" {
		return r, fmt.Errorf("decode response: no content (finish_reason %q): %w", r.FinishReason, failure.ErrEmptyAnswer)
	}
	return r, nil
}

// splitThink removes a <think>…</think> block from a whole answer and
// returns it as reasoning. A "</think>" with no opening tag (hosts whose
// chat template opens the block in the prompt) ends reasoning that started
// with the answer.
func splitThink(s string) (content, reasoning string) {
	if !strings.Contains(s, "think>") {
		return s, ""
	}
	if !strings.Contains(s, "<think>") {
		if before, after, ok := strings.Cut(s, "</think>"); ok {
			return strings.TrimLeft(after, " \t\r\n"), strings.TrimSpace(before)
		}
		return s, ""
	}
	var f ThinkFilter
	c1, r1 := f.Push(s)
	c2, r2 := f.Flush()
	return c1 + c2, strings.TrimSpace(r1 + r2)
}

// AppendResponse appends a chat.completion for the client to dst: id,
// created and model as given, one choice with the assistant message
// (content, null when empty with tool calls; reasoning_content only when
// withReasoning and there is some; tool_calls), finish_reason ("stop" when
// r has none) and usage when r.UsageKnown.
func AppendResponse(dst []byte, id, model string, created int64, r *llm.Response, withReasoning bool) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, id)
	dst = append(dst, `,"object":"chat.completion","created":`...)
	dst = strconv.AppendInt(dst, created, 10)
	dst = append(dst, `,"model":`...)
	dst = appendString(dst, model)
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if r.Content == "" && r.ToolCalls != nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendString(dst, r.Content)
	}
	if withReasoning && r.Reasoning != "" {
		dst = append(dst, `,"reasoning_content":`...)
		dst = appendString(dst, r.Reasoning)
	}
	if r.ToolCalls != nil {
		dst = append(dst, `,"tool_calls":`...)
		dst = append(dst, r.ToolCalls...)
	}
	dst = append(dst, `},"finish_reason":`...)
	fr := r.FinishReason
	if fr == "" {
		fr = "stop"
	}
	dst = appendString(dst, fr)
	dst = append(dst, '}', ']')
	if r.UsageKnown {
		dst = append(dst, `,"usage":`...)
		dst = appendUsage(dst, r.Usage)
	}
	return append(dst, '}')
}

func appendUsage(dst []byte, u llm.Usage) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.PromptTokens), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.CompletionTokens), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
	if u.CachedTokens > 0 {
		dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.CachedTokens), 10)
		dst = append(dst, '}')
	}
	if u.ReasoningTokens > 0 {
		dst = append(dst, `,"completion_tokens_details":{"reasoning_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.ReasoningTokens), 10)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}
