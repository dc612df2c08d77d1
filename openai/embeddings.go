package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/tollfree/tollfree/llm"
)

// Embeddings (issue 33): OpenAI's POST /v1/embeddings, both ways.

// MaxEmbedInputs is the most inputs one embeddings request may carry,
// OpenAI's own cap.
const MaxEmbedInputs = 2048

// EmbeddingsRequest is a decoded embeddings request.
type EmbeddingsRequest struct {
	Model   string
	Request *llm.EmbedRequest
	// Base64 asks for the vectors as base64 of little-endian float32s
	// (encoding_format base64), as OpenAI's SDKs ask by default.
	Base64 bool
}

// DecodeEmbeddingsRequest decodes and checks an embeddings request: model;
// input, a string or an array of strings (token arrays are refused: the
// gateway routes text), none empty, at most MaxEmbedInputs and lim's bytes
// of text; encoding_format float or base64; dimensions of at least 1;
// user. Any other field is refused, so that nothing asked is dropped.
func DecodeEmbeddingsRequest(body []byte, lim Limits) (*EmbeddingsRequest, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, decodeError(err)
	}
	if top == nil {
		return nil, &RequestError{Message: "the request body must be a JSON object", Code: CodeInvalidType}
	}
	for k := range top {
		switch k {
		case "model", "input", "encoding_format", "dimensions", "user":
		default:
			return nil, &RequestError{Param: k, Message: strconv.Quote(k) + " is not a parameter of /v1/embeddings", Code: CodeUnsupportedValue}
		}
	}
	er := &EmbeddingsRequest{Request: &llm.EmbedRequest{}}
	if err := str(top, "model", &er.Model); err != nil {
		return nil, err
	}
	in := bytes.TrimSpace(top["input"])
	switch {
	case len(in) == 0 || isNull(in):
		return nil, &RequestError{Param: "input", Message: "input is required: a string or an array of strings", Code: CodeMissingParameter}
	case in[0] == '"':
		er.Request.Input = []string{unquote(in)}
	default:
		if err := json.Unmarshal(in, &er.Request.Input); err != nil {
			return nil, &RequestError{Param: "input", Message: "input must be a string or an array of strings; token arrays are not supported (send the text)", Code: CodeInvalidType}
		}
	}
	n := len(er.Request.Input)
	if n == 0 {
		return nil, &RequestError{Param: "input", Message: "input must hold at least one string", Code: CodeInvalidValue}
	}
	if n > MaxEmbedInputs {
		return nil, &RequestError{Param: "input", Message: fmt.Sprintf("Invalid 'input': array too long. Expected an array with maximum length %d, but got an array with length %d instead.", MaxEmbedInputs, n), Code: CodeArrayTooLong}
	}
	for i, s := range er.Request.Input {
		if s == "" {
			return nil, &RequestError{Param: "input[" + strconv.Itoa(i) + "]", Message: "input[" + strconv.Itoa(i) + "] is empty: each input must hold text", Code: CodeInvalidValue}
		}
	}
	if lim.ContentBytes > 0 && int64(er.Request.TextLen()) > lim.ContentBytes {
		return nil, &RequestError{Param: "input", Message: fmt.Sprintf("Invalid 'input': its text is %d bytes, over this gateway's limit of %d bytes for a request.", er.Request.TextLen(), lim.ContentBytes), Code: CodeStringTooLong}
	}
	var format string
	if err := str(top, "encoding_format", &format); err != nil {
		return nil, err
	}
	switch format {
	case "", "float":
	case "base64":
		er.Base64 = true
	default:
		return nil, &RequestError{Param: "encoding_format", Message: "encoding_format must be float or base64", Code: CodeInvalidValue}
	}
	if v, ok := top["dimensions"]; ok && !isNull(v) {
		d, err := strconv.Atoi(string(bytes.TrimSpace(v)))
		if err != nil || d < 1 {
			return nil, &RequestError{Param: "dimensions", Message: "dimensions must be an integer of at least 1", Code: CodeInvalidValue}
		}
		er.Request.Dimensions = d
	}
	if err := str(top, "user", &er.Request.User); err != nil {
		return nil, err
	}
	return er, nil
}

// AppendEmbeddings appends OpenAI's embeddings answer: a list of embedding
// objects in input order (floats, or base64 of little-endian float32s),
// the model and the usage (prompt tokens).
func AppendEmbeddings(dst []byte, model string, vectors [][]float32, b64 bool, promptTokens int) []byte {
	dst = append(dst, `{"object":"list","data":[`...)
	for i, v := range vectors {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"object":"embedding","index":`...)
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = append(dst, `,"embedding":`...)
		if b64 {
			raw := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(x))
			}
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, raw)
			dst = append(dst, '"')
		} else {
			dst = append(dst, '[')
			for j, x := range v {
				if j > 0 {
					dst = append(dst, ',')
				}
				f := float64(x)
				if math.IsNaN(f) || math.IsInf(f, 0) {
					f = 0
				}
				dst = strconv.AppendFloat(dst, f, 'g', -1, 32)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"model":`...)
	dst = appendString(dst, model)
	dst = append(dst, `,"usage":{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(promptTokens), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(promptTokens), 10)
	return append(dst, "}}"...)
}
