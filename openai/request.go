package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/llm"
)

// RequestError is a client request that DecodeRequest refused. Its Message
// is written for the client (it names the parameter and the rule, never the
// request's text); the server sends it as an OpenAI invalid_request_error.
type RequestError struct {
	// Param is the offending parameter ("temperature", "messages[2].role"),
	// "" when the body as a whole is wrong.
	Param string
	// Message says what is wrong.
	Message string
	// Code is one of invalid_json, invalid_type, missing_required_parameter,
	// invalid_value or unsupported_value.
	Code string
}

// Error returns Message.
func (e *RequestError) Error() string { return e.Message }

// Request error codes.
const (
	CodeInvalidJSON      = "invalid_json"
	CodeInvalidType      = "invalid_type"
	CodeMissingParameter = "missing_required_parameter"
	CodeInvalidValue     = "invalid_value"
	CodeUnsupportedValue = "unsupported_value"
)

// wireRequest holds the top-level fields DecodeRequest understands. Every
// name here must also be in knownField.
type wireRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	Stop                stop            `json:"stop"`
	Seed                *int64          `json:"seed"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	ReasoningEffort     string          `json:"reasoning_effort"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	User                string          `json:"user"`
	N                   *int            `json:"n"`
}

var knownFields = [...]string{
	"model", "messages", "max_tokens", "max_completion_tokens", "temperature",
	"top_p", "stop", "seed", "response_format", "reasoning_effort", "stream",
	"stream_options", "user", "n",
}

// unknownField returns the name of a top-level key (raw, with its quotes)
// that encoding/json did not decode into wireRequest. Like encoding/json,
// it matches case-insensitively. A known key costs no allocation.
func unknownField(rawKey []byte) (string, bool) {
	k := rawKey[1 : len(rawKey)-1]
	if bytes.IndexByte(k, '\\') >= 0 {
		key := unquote(rawKey)
		return key, !knownField([]byte(key))
	}
	if knownField(k) {
		return "", false
	}
	return string(k), true
}

func knownField(key []byte) bool {
	for _, k := range knownFields {
		if len(k) == len(key) && (k == string(key) || bytes.EqualFold([]byte(k), key)) {
			return true
		}
	}
	return false
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    content         `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Prefix     bool            `json:"prefix"`
}

// stop is "stop": a string, an array of strings, or null.
type stop struct {
	list    []string
	invalid bool
}

func (s *stop) UnmarshalJSON(data []byte) error {
	switch data[0] {
	case '"':
		s.list = []string{unquote(data)}
	case '[':
		if json.Unmarshal(data, &s.list) != nil {
			s.invalid = true
		}
	case 'n':
	default:
		s.invalid = true
	}
	return nil
}

// DecodeRequest decodes a client's chat completion request and checks it.
// model is the request's "model" ("" when absent: the caller picks a
// default chain). Every top-level field it does not know goes verbatim into
// req.Extra. It checks the JSON syntax ("invalid JSON at byte 123: ..."),
// that messages is a non-empty array of messages with a known role (system,
// developer, user, assistant, tool) and a string or array-of-parts content
// (only an assistant's may be null or absent), that n is absent or 1, the
// ranges of temperature (0..2), top_p (0..1), max_tokens and
// max_completion_tokens (>= 1; max_completion_tokens wins when both are
// set), that stream_options comes only with stream, and the fields passed
// on that no upstream takes broken (checkPassed). Every error is a
// *RequestError. Strings hold no lone surrogate and no invalid UTF-8 (see
// the package doc).
func DecodeRequest(body []byte) (req *llm.Request, model string, err error) {
	var w wireRequest
	extra, fast := decodeRequestFast(body, &w)
	if !fast {
		w = wireRequest{}
		if err := json.Unmarshal(body, &w); err != nil {
			return nil, "", decodeError(err)
		}
	}
	if w.Messages == nil {
		return nil, "", &RequestError{Param: "messages", Message: "messages is required", Code: CodeMissingParameter}
	}
	if len(w.Messages) == 0 {
		return nil, "", &RequestError{Param: "messages", Message: llm.ErrNoMessages.Error(), Code: CodeInvalidValue}
	}
	r := &llm.Request{
		Messages:        make([]llm.Message, len(w.Messages)),
		Temperature:     w.Temperature,
		TopP:            w.TopP,
		Seed:            w.Seed,
		ReasoningEffort: w.ReasoningEffort,
		Stream:          w.Stream,
		User:            w.User,
	}
	for i := range w.Messages {
		if err := convertMessage(&r.Messages[i], &w.Messages[i], i); err != nil {
			return nil, "", err
		}
	}
	if err := checkParams(&w, r); err != nil {
		return nil, "", err
	}
	if !isNull(w.ResponseFormat) {
		r.ResponseFormat = cleanRaw(w.ResponseFormat)
	}
	if fast {
		r.Extra = extra
	} else if err := eachField(body, func(rawKey, value []byte) {
		if key, ok := unknownField(rawKey); ok {
			if r.Extra == nil {
				r.Extra = make(map[string]json.RawMessage)
			}
			r.Extra[key] = cleanRaw(value)
		}
	}); err != nil {
		return nil, "", &RequestError{Message: err.Error(), Code: CodeInvalidJSON}
	}
	if err := checkPassed(r); err != nil {
		return nil, "", err
	}
	return r, w.Model, nil
}

func decodeError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &RequestError{Message: fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, se.Error()), Code: CodeInvalidJSON}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return &RequestError{Message: "the request body must be a JSON object, got " + te.Value, Code: CodeInvalidType}
		}
		return &RequestError{
			Param:   te.Field,
			Message: fmt.Sprintf("invalid type for %s at byte %d: expected %s, got %s", te.Field, te.Offset, jsonType(te.Type.String()), te.Value),
			Code:    CodeInvalidType,
		}
	}
	return &RequestError{Message: "invalid JSON: " + err.Error(), Code: CodeInvalidJSON}
}

// jsonType names a Go type the way a client thinks of it.
func jsonType(goType string) string {
	goType = strings.TrimPrefix(goType, "*")
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	default:
		return "an object"
	}
}

func convertMessage(m *llm.Message, w *wireMessage, i int) error {
	param := func(f string) string { return "messages[" + strconv.Itoa(i) + "]." + f }
	switch w.Role {
	case "system", "developer", "user", "assistant", "tool":
	case "":
		return &RequestError{Param: param("role"), Message: param("role") + " is required", Code: CodeMissingParameter}
	default:
		return &RequestError{
			Param:   param("role"),
			Message: param("role") + " must be one of system, developer, user, assistant, tool",
			Code:    CodeInvalidValue,
		}
	}
	switch w.Content.kind {
	case contentInvalid:
		return &RequestError{
			Param:   param("content"),
			Message: param("content") + " must be a string or an array of content parts",
			Code:    CodeInvalidType,
		}
	case contentAbsent, contentNull:
		if w.Role != "assistant" {
			return &RequestError{Param: param("content"), Message: param("content") + " is required", Code: CodeMissingParameter}
		}
	}
	m.Role = w.Role
	m.Content = w.Content.text
	m.Parts = w.Content.parts
	m.Name = w.Name
	m.ToolCallID = w.ToolCallID
	m.Prefix = w.Prefix
	if !isNull(w.ToolCalls) {
		m.ToolCalls = cleanRaw(w.ToolCalls)
	}
	return nil
}

func checkParams(w *wireRequest, r *llm.Request) error {
	if w.N != nil && *w.N != 1 {
		return &RequestError{Param: "n", Message: "n must be 1: only one choice is supported", Code: CodeUnsupportedValue}
	}
	if t := w.Temperature; t != nil && !(*t >= 0 && *t <= 2) {
		return &RequestError{Param: "temperature", Message: "temperature must be between 0 and 2, got " + strconv.FormatFloat(*t, 'g', -1, 64), Code: CodeInvalidValue}
	}
	if p := w.TopP; p != nil && !(*p >= 0 && *p <= 1) {
		return &RequestError{Param: "top_p", Message: "top_p must be between 0 and 1, got " + strconv.FormatFloat(*p, 'g', -1, 64), Code: CodeInvalidValue}
	}
	if m := w.MaxTokens; m != nil {
		if *m < 1 {
			return &RequestError{Param: "max_tokens", Message: "max_tokens must be at least 1, got " + strconv.Itoa(*m), Code: CodeInvalidValue}
		}
		r.MaxTokens = *m
	}
	if m := w.MaxCompletionTokens; m != nil {
		if *m < 1 {
			return &RequestError{Param: "max_completion_tokens", Message: "max_completion_tokens must be at least 1, got " + strconv.Itoa(*m), Code: CodeInvalidValue}
		}
		r.MaxTokens = *m
	}
	if w.Stop.invalid {
		return &RequestError{Param: "stop", Message: "stop must be a string or an array of strings", Code: CodeInvalidType}
	}
	r.Stop = w.Stop.list
	if w.StreamOptions != nil {
		if !w.Stream {
			return &RequestError{Param: "stream_options", Message: "stream_options is only allowed when stream is true", Code: CodeInvalidValue}
		}
		r.IncludeUsage = w.StreamOptions.IncludeUsage
	}
	return nil
}

// eachField calls fn with each key (raw, quoted) and value of the top-level object in
// body, which encoding/json has already found to be one valid JSON object.
// It only skips over values, which is much cheaper than decoding them again.
func eachField(body []byte, fn func(rawKey, value []byte)) error {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return errors.New("the request body must be a JSON object")
	}
	i++
	for {
		i = skipSpace(body, i)
		if i >= len(body) {
			return errors.New("invalid JSON: unexpected end of object")
		}
		switch body[i] {
		case '}':
			return nil
		case ',':
			i++
			continue
		}
		kend := skipString(body, i)
		key := body[i:kend]
		i = skipSpace(body, kend)
		if i >= len(body) || body[i] != ':' {
			return errors.New("invalid JSON: expected a colon")
		}
		i = skipSpace(body, i+1)
		vend := skipValue(body, i)
		fn(key, body[i:vend])
		i = vend
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		if i = plainEnd(b, i); i >= len(b) {
			break
		}
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	default: // number, true, false, null
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\r' && b[i] != '\t' {
			i++
		}
		return i
	}
}
