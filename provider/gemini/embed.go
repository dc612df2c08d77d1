package gemini

import (
	"bytes"
	"context"
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

// maxEmbeddings caps an embeddings answer: 2,048 vectors of 3,072 numbers,
// pretty-printed, take some 150 MB.
const maxEmbeddings = 192 << 20

// Embed asks for embeddings (issue 33): POST
// {BaseURL}/models/{model}:batchEmbedContents, one request per input, each
// with outputDimensionality when dimensions were asked and the route's
// extra fields (taskType...). Gemini's vectors below their full length are
// not normalized ("you need to normalize the embeddings",
// https://ai.google.dev/gemini-api/docs/embeddings): every vector is
// returned at unit length, as OpenAI's are, so that a dot product is the
// cosine either way. Gemini reports no usage for embeddings: UsageKnown is
// false and the router counts its estimate.
func (c *Client) Embed(ctx context.Context, call provider.EmbedCall) (*llm.Embeddings, error) {
	model := "models/" + strings.TrimPrefix(call.Model, "models/")
	reqs := make([]map[string]any, len(call.Request.Input))
	for i, text := range call.Request.Input {
		r := map[string]any{"model": model, "content": map[string]any{"parts": []map[string]string{{"text": text}}}}
		if d := call.Request.Dimensions; d > 0 {
			r["outputDimensionality"] = d
		}
		for k, v := range call.Extra {
			if !isNull(v) {
				r[k] = v
			}
		}
		reqs[i] = r
	}
	body, err := json.Marshal(map[string]any{"requests": reqs})
	if err != nil {
		return nil, c.fail(call.Model, 0, nil, nil, fmt.Errorf("gemini: encode request: %w", err))
	}
	u := c.baseURL + "/models/" + url.PathEscape(strings.TrimPrefix(call.Model, "models/")) + ":batchEmbedContents"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, c.fail(call.Model, 0, nil, nil, fmt.Errorf("gemini: new request: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	if c.apiKey != "" {
		req.Header.Set("x-goog-api-key", c.apiKey)
	}
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return nil, c.fail(call.Model, 0, nil, nil, fmt.Errorf("gemini: post: %w", &url.Error{Op: "Post", URL: req.URL.Redacted(), Err: err}))
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	defer resp.Body.Close()
	b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxEmbeddings+1))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, capBody(b), nil)
	}
	if rerr != nil {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, nil, fmt.Errorf("gemini: read response: %w", rerr))
	}
	if len(b) > maxEmbeddings {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, capBody(b), fmt.Errorf("gemini: embeddings larger than %d bytes: %w", maxEmbeddings, failure.ErrMalformed))
	}
	var w struct {
		Embeddings []struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, capBody(b), fmt.Errorf("gemini: decode embeddings: %w: %w", failure.ErrMalformed, err))
	}
	if len(w.Embeddings) != len(call.Request.Input) {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, capBody(b),
			fmt.Errorf("gemini: %d embeddings for %d inputs: %w", len(w.Embeddings), len(call.Request.Input), failure.ErrMalformed))
	}
	e := &llm.Embeddings{Vectors: make([][]float32, len(w.Embeddings)), Model: strings.TrimPrefix(call.Model, "models/"), Header: resp.Header}
	for i, emb := range w.Embeddings {
		if len(emb.Values) == 0 {
			return nil, c.fail(call.Model, resp.StatusCode, resp.Header, capBody(b), fmt.Errorf("gemini: embedding %d is empty: %w", i, failure.ErrMalformed))
		}
		e.Vectors[i] = unit(emb.Values)
	}
	return e, nil
}

// unit scales v to length 1 in place (a zero vector stays as it is).
func unit(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	n := math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}
