package openai

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
)

// ChunkError is an error an upstream reported inside a stream with status
// 200: OpenRouter's top-level "error" next to the chunk's choices, vLLM's
// {"object":"error"}, or a generic {"error":{...}}.
type ChunkError struct {
	// Code is the upstream's error code ("server_error", "429"), "" if none.
	Code string
	// Message is the upstream's message. It may quote the request: do not
	// log it.
	Message string
}

// Error returns a text naming the code only.
func (e *ChunkError) Error() string {
	if e.Code == "" {
		return "upstream error event"
	}
	return "upstream error event: code " + e.Code
}

type wireChunk struct {
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	XGroq   *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"x_groq"`
	Error json.RawMessage `json:"error"`
	// vLLM's error object is the whole payload.
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Status  string          `json:"status"` // Google's errors
}

// DecodeChunk decodes one SSE data payload of an upstream stream, a
// chat.completion.chunk (the caller handles "[DONE]"). It takes the first
// choice's delta: role, content, reasoning (delta.reasoning or
// reasoning_content), tool_calls, finish_reason, and usage from "usage" or
// Groq's x_groq.usage. A payload that reports an error (a top-level
// "error", vLLM's "object":"error", or Gemini's array-wrapped error) gives
// a *ChunkError and no chunk. A payload that does not parse gives an error
// wrapping failure.ErrMalformed.
//
// Content is passed as sent, <think> tags included: a tag may be split
// across chunks, so separating it takes a ThinkFilter over the stream.
func DecodeChunk(data []byte) (llm.Chunk, *ChunkError, error) {
	if c, ok := decodeChunkFast(data); ok {
		return c, nil, nil
	}
	var w wireChunk
	if len(data) > 0 && data[0] == '[' {
		// Gemini's OpenAI-compatible endpoint wraps errors in an array.
		var arr []wireChunk
		if err := unmarshalLenient(data, &arr); err != nil || len(arr) != 1 {
			return llm.Chunk{}, nil, fmt.Errorf("decode chunk: %w: not a chunk object", failure.ErrMalformed)
		}
		w = arr[0]
	} else if err := unmarshalLenient(data, &w); err != nil {
		return llm.Chunk{}, nil, fmt.Errorf("decode chunk: %w: %w", failure.ErrMalformed, err)
	}
	if ce := w.chunkError(); ce != nil {
		return llm.Chunk{}, ce, nil
	}
	var c llm.Chunk
	if len(w.Choices) > 0 {
		ch := &w.Choices[0]
		d := &ch.Delta
		c.Role = d.Role
		c.Content = d.Content.text
		c.Reasoning = d.reasoning()
		if !isNull(d.ToolCalls) {
			c.ToolCalls = cleanRaw(d.ToolCalls)
		}
		c.FinishReason = ch.FinishReason
	}
	switch {
	case w.Usage != nil:
		u := w.Usage.usage()
		c.Usage = &u
	case w.XGroq != nil && w.XGroq.Usage != nil:
		u := w.XGroq.Usage.usage()
		c.Usage = &u
	}
	return c, nil, nil
}

func (w *wireChunk) chunkError() *ChunkError {
	if !isNull(w.Error) {
		switch w.Error[0] {
		case '{':
			var e wireError
			_ = json.Unmarshal(w.Error, &e)
			code := rawCode(e.Code)
			if code == "" {
				code = e.Status
			}
			if code == "" {
				code = e.Type
			}
			return &ChunkError{Code: code, Message: e.Message}
		case '"':
			return &ChunkError{Message: unquote(w.Error)}
		default:
			return &ChunkError{Message: string(w.Error)}
		}
	}
	if w.Object == "error" {
		code := rawCode(w.Code)
		if code == "" {
			code = w.Type
		}
		return &ChunkError{Code: code, Message: w.Message}
	}
	return nil
}

// rawCode renders an error code sent as a string or a number.
func rawCode(v json.RawMessage) string {
	switch {
	case isNull(v):
		return ""
	case v[0] == '"':
		return unquote(v)
	default:
		return string(v)
	}
}

// AppendChunk appends one SSE event, "data: {chat.completion.chunk}\n\n",
// for the client to dst. The delta has role when c.Role is set, content
// when there is some (and "" with a role), reasoning_content only when
// withReasoning, tool_calls when set; finish_reason is null until the last
// chunk. c.Usage is not written: the client gets usage from
// AppendUsageChunk when it asked for it. A chunk with nothing to say is
// still written; callers skip those.
func AppendChunk(dst []byte, id, model string, created int64, c llm.Chunk, withReasoning bool) []byte {
	return appendChunkBody(appendChunkHead(dst, id, model, created), c, withReasoning)
}

// AppendChunkHead appends what every chunk of one answer begins with (its
// id, model and created), for AppendChunkAfter: a stream encodes it once,
// not once a chunk.
func AppendChunkHead(dst []byte, id, model string, created int64) []byte {
	return appendChunkHead(dst, id, model, created)
}

// AppendChunkAfter appends the chunk c as AppendChunk does, with head from
// AppendChunkHead.
func AppendChunkAfter(dst, head []byte, c llm.Chunk, withReasoning bool) []byte {
	return appendChunkBody(append(dst, head...), c, withReasoning)
}

func appendChunkBody(dst []byte, c llm.Chunk, withReasoning bool) []byte {
	dst = append(dst, `[{"index":0,"delta":{`...)
	comma := false
	field := func(name string) {
		if comma {
			dst = append(dst, ',')
		}
		comma = true
		dst = append(dst, name...)
	}
	if c.Role != "" {
		field(`"role":`)
		dst = appendString(dst, c.Role)
	}
	if c.Content != "" || c.Role != "" {
		field(`"content":`)
		dst = appendString(dst, c.Content)
	}
	if withReasoning && c.Reasoning != "" {
		field(`"reasoning_content":`)
		dst = appendString(dst, c.Reasoning)
	}
	if c.ToolCalls != nil {
		field(`"tool_calls":`)
		dst = append(dst, c.ToolCalls...)
	}
	dst = append(dst, `},"finish_reason":`...)
	if c.FinishReason == "" {
		dst = append(dst, "null"...)
	} else {
		dst = appendString(dst, c.FinishReason)
	}
	return append(dst, "}]}\n\n"...)
}

func appendChunkHead(dst []byte, id, model string, created int64) []byte {
	dst = append(dst, `data: {"id":`...)
	dst = appendString(dst, id)
	dst = append(dst, `,"object":"chat.completion.chunk","created":`...)
	dst = strconv.AppendInt(dst, created, 10)
	dst = append(dst, `,"model":`...)
	dst = appendString(dst, model)
	return append(dst, `,"choices":`...)
}

// AppendUsageChunk appends the chunk a client that set
// stream_options.include_usage gets before [DONE]: "choices": [] and usage.
func AppendUsageChunk(dst []byte, id, model string, created int64, u llm.Usage) []byte {
	dst = appendChunkHead(dst, id, model, created)
	dst = append(dst, `[],"usage":`...)
	dst = appendUsage(dst, u)
	return append(dst, "}\n\n"...)
}

// AppendErrorEvent appends an SSE event that ends a broken stream for the
// client: data: {"error":{"message","type","code"}}; code is null when "".
func AppendErrorEvent(dst []byte, message, typ, code string) []byte {
	dst = append(dst, "data: "...)
	dst = appendErrorBody(dst, message, typ, "", code, false)
	return append(dst, "\n\n"...)
}

// AppendError appends an error body as OpenAI sends it:
// {"error":{"message","type","param","code"}}, with param and code null
// when "".
func AppendError(dst []byte, message, typ, param, code string) []byte {
	return appendErrorBody(dst, message, typ, param, code, true)
}

func appendErrorBody(dst []byte, message, typ, param, code string, withParam bool) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = appendString(dst, message)
	dst = append(dst, `,"type":`...)
	dst = appendString(dst, typ)
	if withParam {
		dst = append(dst, `,"param":`...)
		dst = appendStringOrNull(dst, param)
	}
	dst = append(dst, `,"code":`...)
	dst = appendStringOrNull(dst, code)
	return append(dst, '}', '}')
}

func appendStringOrNull(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendString(dst, s)
}
