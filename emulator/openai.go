package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

// errBadText is a body with invalid UTF-8 or a lone surrogate escape.
var errBadText = errors.New("invalid UTF-8 or a lone surrogate")

// maxBody caps a request body the emulator reads.
const maxBody = 8 << 20

// oaiRequest is the part of an OpenAI chat request the emulator reads.
type oaiRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Prefix  *bool           `json:"prefix"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int `json:"max_tokens"`
	MaxCompletionTokens int `json:"max_completion_tokens"`
}

// contentText is the text of a content field: a string, or the text parts
// of an array joined with "\n".
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("decode content: %w", err)
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return h[7:]
	}
	return ""
}

func (e *Emulator) serveOpenAI(w http.ResponseWriter, r *http.Request, p Provider, path string) {
	c := &call{prov: p, compat: p.Flavor == FlavorGemini, gotKey: bearer(r), fieldAt: -1}
	switch {
	case path == "/models" && r.Method == http.MethodGet:
		if p.Key != "" && bearer(r) != p.Key {
			c.kind = Unauthorized
			e.writeFailure(w, e.failureOf(c))
			return
		}
		e.writeModels(w, p)
		return
	case path == "/chat/completions" && r.Method == http.MethodPost:
	case path == "/embeddings" && r.Method == http.MethodPost:
		e.serveOpenAIEmbeddings(w, r, c)
		return
	default:
		http.NotFound(w, r)
		return
	}

	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	var req oaiRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	var top map[string]json.RawMessage
	if err == nil && json.Unmarshal(body, &top) != nil {
		top = nil
	}
	unknown := ""
	if c.compat && err == nil {
		unknown = compatUnknownField(top)
	}
	c.modelID, c.stream = req.Model, req.Stream
	c.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	c.maxTokens = req.MaxTokens
	if req.MaxCompletionTokens > 0 {
		c.maxTokens = req.MaxCompletionTokens
	}
	c.format = openAIFormat(top)
	c.ask = openAIAsk(top)
	e.sawBody(p.Name, req.Model, body)
	n, says := 0, false
	last := len(req.Messages) - 1
	for i, m := range req.Messages {
		text, cerr := contentText(m.Content)
		if cerr != nil && err == nil {
			err = cerr
		}
		n += len(text)
		c.turns = append(c.turns, Turn{Role: m.Role, Text: text})
		says = says || saysJSON(text)
		switch {
		case i == last && m.Role == "assistant":
			c.prefix, c.hasPrefix, c.prefixFlag = text, true, m.Prefix != nil && *m.Prefix
		case i == last-1 && m.Role == "assistant" && req.Messages[last].Role == "user":
			c.partial, c.hasPartial = text, text != ""
		}
		if m.Prefix != nil && c.fieldAt < 0 {
			c.fieldAt, c.fieldRole = i, m.Role
		}
	}
	c.prompt = tokensOf(n)

	if p.Key != "" && bearer(r) != p.Key {
		c.kind = Unauthorized
		f := e.failureOf(c)
		if p.Flavor == FlavorOpenRouter && bearer(r) != "" && p.EchoKey == EchoNone {
			f = orErr(401, "User not found.", nil)
		}
		e.record(c, "auth", f.status)
		e.writeFailure(w, f)
		return
	}
	if unknown != "" {
		f := compatUnknown(unknown)
		e.record(c, "invalid", f.status)
		e.writeFailure(w, f)
		return
	}
	if name, ok := e.refusedField(p.Name, req.Model, sortedFields(top)); ok {
		f := unsupportedFailure(c, name, top[name])
		e.record(c, "unsupported", f.status)
		e.writeFailure(w, f)
		return
	}
	if f, behaviour, ok := e.prefillProblem(c); ok && err == nil {
		e.record(c, behaviour, f.status)
		e.writeFailure(w, f)
		return
	}
	if m, ok := e.modelOf(p.Name, req.Model); ok {
		if f, refused := formatRefusal(c, m, c.format, says); refused {
			e.record(c, "unsupported", f.status)
			e.writeFailure(w, f)
			return
		}
		if f, refused := mediaRefusal(c, m); refused {
			e.record(c, "unsupported", f.status)
			e.writeFailure(w, f)
			return
		}
	}
	if err == nil && badText(body) {
		err = errBadText
	}
	if err == nil && req.Model == "" {
		err = fmt.Errorf("model is required")
	}
	if err == nil && len(req.Messages) == 0 {
		err = fmt.Errorf("messages is required")
	}
	if err != nil {
		c.kind = BadRequest
		c.step.Text = "invalid request body: " + requestProblem(err)
		f := e.failureOf(c)
		e.record(c, "invalid", f.status)
		e.writeFailure(w, f)
		return
	}

	e.admit(c)
	e.finishRecord(c, e.runOpenAI(w, r, c))
}

// compatUnknownField returns the first (sorted) top-level field Gemini's
// OpenAI-compatible endpoint does not know, "" if none: it rejects them
// where OpenAI ignores them (docs/PROVIDERS.md: "store", "web_search_options").
func compatUnknownField(top map[string]json.RawMessage) string {
	first := ""
	for k := range top {
		switch k {
		case "model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens",
			"temperature", "top_p", "n", "stop", "response_format", "tools", "tool_choice",
			"reasoning_effort", "seed", "presence_penalty", "frequency_penalty", "extra_body",
			"logprobs", "top_logprobs", "parallel_tool_calls", "modalities", "audio":
			continue
		}
		if first == "" || k < first {
			first = k
		}
	}
	return first
}

// compatUnknown is the 400 of Gemini's OpenAI-compatible endpoint for a
// field it does not know (docs/PROVIDERS.md), wrapped in its array.
func compatUnknown(name string) failure {
	msg := `Invalid JSON payload received. Unknown name "` + name + `": Cannot find field.`
	f := gErr(400, msg, "INVALID_ARGUMENT", obj{{"@type", "type.googleapis.com/google.rpc.BadRequest"},
		{"fieldViolations", []obj{{{"description", msg}}}}})
	f.body = append(append([]byte("["), f.body...), ']')
	return f
}

// sortedFields returns the keys of a body's top level, sorted.
func sortedFields(top map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// requestProblem names what was wrong with a body without quoting it.
func requestProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case strings.Contains(err.Error(), "required"):
		return err.Error()
	case errors.As(err, &se):
		return "not valid JSON"
	case errors.As(err, &te):
		return "field " + te.Field + " has the wrong type"
	}
	return "could not be decoded"
}

// runOpenAI answers an admitted call and returns the status sent (0 for
// none).
func (e *Emulator) runOpenAI(w http.ResponseWriter, r *http.Request, c *call) int {
	ctx := r.Context()
	if c.kind == Hang {
		e.hang(ctx, c)
		return 0
	}
	if !e.latency(ctx, c) {
		return 0
	}
	if status, ok := e.runChaos(w, c, func() int { return e.streamOpenAI(w, r, c) }); ok {
		return status
	}
	switch {
	case c.kind == Malformed:
		return writeMalformed(w)
	case c.kind.answers() && c.stream:
		return e.streamOpenAI(w, r, c)
	case c.kind.answers():
		return e.answerOpenAI(ctx, w, c)
	}
	f := e.failureOf(c)
	e.writeFailure(w, f)
	return f.status
}

func (e *Emulator) writeFailure(w http.ResponseWriter, f failure) {
	h := w.Header()
	for k, v := range f.header {
		h[k] = v
	}
	h.Set("Content-Type", "application/json")
	if f.google {
		h.Set("Content-Type", "application/json; charset=UTF-8")
	}
	w.WriteHeader(f.status)
	w.Write(f.body)
}

// malformedBody is what a broken proxy in front of a provider answers.
const malformedBody = "upstream connect error or disconnect/reset before headers. reset reason: connection termination"

func writeMalformed(w http.ResponseWriter) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, malformedBody)
	return http.StatusOK
}

// completionID is the flavor's response id.
func (c *call) completionID() string {
	switch c.prov.Flavor {
	case FlavorOpenRouter:
		return fmt.Sprintf("gen-%d-emu%08d", c.start.Unix(), c.seq)
	case FlavorOllama:
		return fmt.Sprintf("chatcmpl-%d", c.seq%999)
	}
	return fmt.Sprintf("chatcmpl-emu%08d", c.seq)
}

func (c *call) requestID() string { return fmt.Sprintf("req_01emulator%015d", c.seq) }

// head is the fields every chat.completion(.chunk) starts with.
func (c *call) head(object string) obj {
	o := obj{{"id", c.completionID()}, {"object", object}, {"created", c.start.Unix()}, {"model", c.modelID}}
	switch c.prov.Flavor {
	case FlavorGroq:
		o = append(o, kv{"system_fingerprint", "fp_emulator"})
	case FlavorOllama:
		o = append(o, kv{"system_fingerprint", "fp_ollama"})
	case FlavorOpenRouter:
		o = append(o, kv{"provider", "Emulator"})
	}
	return o
}

func (c *call) usageObj() obj {
	return obj{{"prompt_tokens", c.prompt}, {"completion_tokens", c.completion}, {"total_tokens", c.prompt + c.completion}}
}

// groqUsage is the x_groq usage of Groq's last chunk; the times are made up
// from the token counts so they stay deterministic.
func (c *call) groqUsage() obj {
	return obj{{"queue_time", 0.01}, {"prompt_tokens", c.prompt}, {"prompt_time", float64(c.prompt) / 10000},
		{"completion_tokens", c.completion}, {"completion_time", float64(c.completion) / 1000},
		{"total_tokens", c.prompt + c.completion}, {"total_time", 0.01 + float64(c.prompt)/10000 + float64(c.completion)/1000}}
}

func (e *Emulator) answerHeaders(w http.ResponseWriter, c *call, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	if c.prov.Flavor == FlavorGroq {
		h.Set("x-request-id", c.requestID())
		h.Set("x-groq-region", "emu")
	}
	e.limitHeaders(h, c)
}

func (e *Emulator) answerOpenAI(ctx context.Context, w http.ResponseWriter, c *call) int {
	content := c.answer
	o := c.head("chat.completion")
	if c.kind == StreamErrorEvent {
		// Not streamed: OpenRouter puts the error in a 200 body.
		o = append(o, kv{"error", obj{{"code", "server_error"}, {"message", "Provider disconnected unexpectedly"}}},
			kv{"choices", []obj{{{"index", 0}, {"message", obj{{"role", "assistant"}, {"content", ""}}}, {"finish_reason", "error"}}}})
	} else {
		msg := obj{{"role", "assistant"}, {"content", content}}
		if tcs := c.toolCallsJSON(); tcs != nil {
			if content == "" {
				msg = obj{{"role", "assistant"}, {"content", nil}}
			}
			msg = append(msg, kv{"tool_calls", tcs})
		}
		if c.step.Reasoning != "" {
			msg = append(msg, kv{"reasoning", c.step.Reasoning})
		}
		o = append(o, kv{"choices", []obj{{{"index", 0}, {"message", msg}, {"logprobs", nil}, {"finish_reason", c.finish}}}},
			kv{"usage", c.usageObj()})
	}
	if c.prov.Flavor == FlavorGroq {
		o = append(o, kv{"x_groq", obj{{"id", c.requestID()}}})
	}
	body := compact(o)
	e.answerHeaders(w, c, "application/json")
	if c.kind == StreamCut || c.kind == StreamStall {
		// Not streamed: half the body, then the connection drops, at once
		// (cut) or once the stall is over (stall after the headers).
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusOK)
		w.Write(body[:len(body)/2])
		flush(w)
		if c.kind == StreamStall {
			e.hang(ctx, c)
		}
		panic(http.ErrAbortHandler)
	}
	w.WriteHeader(http.StatusOK)
	w.Write(body)
	return http.StatusOK
}
