package openaicompat

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
)

// maxEmbeddings caps an embeddings answer: 2,048 vectors of 3,072 numbers
// written as JSON take some 120 MB.
const maxEmbeddings = 160 << 20

// Embed asks for embeddings: POST {BaseURL}/embeddings with OpenAI's body
// (model, input as an array, encoding_format float, dimensions when asked,
// user) and the route's extra fields, which win. Errors are as Chat's; a
// 2xx without one vector per input is malformed.
func (c *Client) Embed(ctx context.Context, call provider.EmbedCall) (*llm.Embeddings, error) {
	body, err := embedBody(call)
	if err != nil {
		return nil, c.fail(call.Model, 0, nil, nil, fmt.Errorf("encode request: %w", err))
	}
	u := strings.TrimRight(c.o.BaseURL, "/") + "/embeddings"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, c.fail(call.Model, 0, nil, nil, fmt.Errorf("build request: %w", err))
	}
	for k, v := range c.headers[0] {
		hr.Header[k] = v
	}
	resp, err := c.rt.RoundTrip(hr)
	if err != nil {
		return nil, c.fail(call.Model, 0, nil, nil, &url.Error{Op: "Post", URL: c.errURL, Err: err})
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbeddings+1))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, b, nil)
	}
	if err != nil {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, b, fmt.Errorf("read answer: %w", err))
	}
	if len(b) > maxEmbeddings {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, b[:failure.MaxBody], fmt.Errorf("read answer: longer than %d bytes: %w", maxEmbeddings, failure.ErrMalformed))
	}
	e, err := decodeEmbeddings(b, len(call.Request.Input))
	if err != nil {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, b, err)
	}
	e.Header = resp.Header
	return e, nil
}

// embedBody is the upstream's request body.
func embedBody(call provider.EmbedCall) ([]byte, error) {
	m := map[string]any{"model": call.Model, "input": call.Request.Input, "encoding_format": "float"}
	if call.Request.Dimensions > 0 {
		m["dimensions"] = call.Request.Dimensions
	}
	if call.Request.User != "" {
		m["user"] = call.Request.User
	}
	for k, v := range call.Extra {
		if string(bytes.TrimSpace(v)) == "null" {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	return json.Marshal(m)
}

// decodeEmbeddings reads OpenAI's embeddings answer: data[i].embedding, a
// float array (or base64 of little-endian float32s, which some servers
// send whatever was asked), put in order of index.
func decodeEmbeddings(b []byte, n int) (*llm.Embeddings, error) {
	var w struct {
		Data []struct {
			Index     int             `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Model string `json:"model"`
		Usage *struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("decode embeddings: %w: %w", failure.ErrMalformed, err)
	}
	if len(w.Data) != n {
		return nil, fmt.Errorf("decode embeddings: %d vectors for %d inputs: %w", len(w.Data), n, failure.ErrMalformed)
	}
	e := &llm.Embeddings{Vectors: make([][]float32, n), Model: w.Model}
	for i, d := range w.Data {
		at := d.Index
		if at < 0 || at >= n || e.Vectors[at] != nil {
			at = i
		}
		v, err := vector(d.Embedding)
		if err != nil || len(v) == 0 {
			return nil, fmt.Errorf("decode embeddings: vector %d: %w", i, failure.ErrMalformed)
		}
		e.Vectors[at] = v
	}
	for i, v := range e.Vectors {
		if v == nil {
			return nil, fmt.Errorf("decode embeddings: no vector for input %d: %w", i, failure.ErrMalformed)
		}
	}
	if w.Usage != nil {
		e.Usage = llm.Usage{PromptTokens: w.Usage.PromptTokens, TotalTokens: w.Usage.TotalTokens}
		e.UsageKnown = w.Usage.PromptTokens > 0 || w.Usage.TotalTokens > 0
	}
	return e, nil
}

// vector reads one embedding: a JSON array of numbers, or a base64 string
// of little-endian float32s.
func vector(raw json.RawMessage) ([]float32, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b)%4 != 0 {
			return nil, fmt.Errorf("bad base64 vector")
		}
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return v, nil
	}
	var v []float32
	err := json.Unmarshal(raw, &v)
	return v, err
}
