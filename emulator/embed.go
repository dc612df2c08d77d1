package emulator

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
)

// Embeddings (issue 33). An embedding model (Model.Embedding) answers
// OpenAI's POST /embeddings (every OpenAI flavor, and Gemini's
// OpenAI-compatible endpoint) and Gemini's :embedContent and
// :batchEmbedContents. Its vectors are made from the model and the text
// alone, so two routes of one model give the same vector for the same
// text, as a failover over same-model routes must: a unit vector of the
// model's Dimensions (default 768). A request for fewer dimensions gets the
// vector's first numbers, as Matryoshka models (Gemini's, OpenAI's
// text-embedding-3) give them: from OpenAI flavors scaled back to unit
// length, as OpenAI does; from Gemini not ("you need to normalize the
// embeddings", https://ai.google.dev/gemini-api/docs/embeddings). Calls are
// counted, limited and scripted as chat calls are; a failing step answers
// the flavor's error.

// defaultDims is an embedding model's length when Model.Dimensions is 0.
const defaultDims = 768

// Vector is the emulator's embedding of text by model, at its full length
// dims: unit length, the same at every call.
func Vector(model, text string, dims int) []float32 {
	v := make([]float32, dims)
	var sum float64
	for i := 0; i < dims; i += 8 {
		h := sha256.Sum256([]byte(model + "\x00" + text + "\x00" + string(rune(i/8))))
		for j := 0; j < 8 && i+j < dims; j++ {
			x := float64(int32(binary.LittleEndian.Uint32(h[4*j:]))) / math.MaxInt32
			v[i+j] = float32(x)
			sum += x * x
		}
	}
	n := math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// cut is v's first n numbers, scaled to unit length when norm is set.
func cut(v []float32, n int, norm bool) []float32 {
	if n <= 0 || n >= len(v) {
		return v
	}
	out := append([]float32(nil), v[:n]...)
	if norm {
		var sum float64
		for _, x := range out {
			sum += float64(x) * float64(x)
		}
		s := math.Sqrt(sum)
		for i := range out {
			out[i] = float32(float64(out[i]) / s)
		}
	}
	return out
}

// embedModel checks that the call's model embeds; it returns the flavor's
// refusal otherwise.
func (e *Emulator) embedModel(c *call) (Model, failure, bool) {
	m, ok := e.modelOf(c.prov.Name, c.modelID)
	switch {
	case !ok:
		return m, failure{}, true // admit answers the flavor's not-found
	case !m.Embedding && c.prov.Flavor == FlavorGemini && !c.compat:
		return m, gErr(400, "models/"+c.modelID+" is not supported for embedContent. Call ListModels to see the list of available models and their supported methods.", "INVALID_ARGUMENT"), false
	case !m.Embedding:
		return m, oai(400, "This model does not support embeddings.", "invalid_request_error", "model", nil, true), false
	}
	return m, failure{}, true
}

func (m Model) dims() int {
	if m.Dimensions > 0 {
		return m.Dimensions
	}
	return defaultDims
}

// serveOpenAIEmbeddings answers POST /embeddings.
func (e *Emulator) serveOpenAIEmbeddings(w http.ResponseWriter, r *http.Request, c *call) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
	}
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	c.embed, c.modelID, c.dims = true, req.Model, req.Dimensions
	var one string
	switch {
	case err != nil:
	case json.Unmarshal(req.Input, &one) == nil:
		c.inputs = []string{one}
	default:
		err = json.Unmarshal(req.Input, &c.inputs)
	}
	n := 0
	for _, s := range c.inputs {
		n += len(s)
	}
	c.prompt = tokensOf(n)
	if p := c.prov; p.Key != "" && bearer(r) != p.Key {
		c.kind = Unauthorized
		f := e.failureOf(c)
		e.record(c, "auth", f.status)
		e.writeFailure(w, f)
		return
	}
	if err != nil || req.Model == "" || len(c.inputs) == 0 {
		c.kind = BadRequest
		c.step.Text = "invalid request body: input must be a string or an array of strings, and model is required"
		f := e.failureOf(c)
		e.record(c, "invalid", f.status)
		e.writeFailure(w, f)
		return
	}
	m, f, ok := e.embedModel(c)
	if !ok {
		e.record(c, "unsupported", f.status)
		e.writeFailure(w, f)
		return
	}
	e.admit(c)
	e.finishRecord(c, e.runEmbed(w, r, c, func() int {
		data := make([]obj, len(c.inputs))
		for i, text := range c.inputs {
			v := cut(Vector(c.modelID, text, m.dims()), c.dims, true)
			var emb any = v
			if req.EncodingFormat == "base64" {
				b := make([]byte, 4*len(v))
				for j, x := range v {
					binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
				}
				emb = base64.StdEncoding.EncodeToString(b)
			}
			data[i] = obj{{"object", "embedding"}, {"index", i}, {"embedding", emb}}
		}
		e.answerHeaders(w, c, "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(compact(obj{{"object", "list"}, {"data", data}, {"model", c.modelID},
			{"usage", obj{{"prompt_tokens", c.prompt}, {"total_tokens", c.prompt}}}}))
		return http.StatusOK
	}))
}

// serveGeminiEmbed answers :embedContent (batch false) and
// :batchEmbedContents.
func (e *Emulator) serveGeminiEmbed(w http.ResponseWriter, r *http.Request, c *call, batch bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	type embedReq struct {
		Model   string     `json:"model"`
		Content gemContent `json:"content"`
		Dims    int        `json:"outputDimensionality"`
	}
	var reqs []embedReq
	if err == nil {
		if batch {
			var b struct {
				Requests []embedReq `json:"requests"`
			}
			err = json.Unmarshal(body, &b)
			reqs = b.Requests
		} else {
			var one embedReq
			err = json.Unmarshal(body, &one)
			reqs = []embedReq{one}
		}
	}
	c.embed = true
	problem := ""
	switch {
	case err != nil:
		problem = "Invalid JSON payload received. Unexpected token."
	case len(reqs) == 0:
		problem = "* BatchEmbedContentsRequest.requests: requests is not specified\n"
	}
	n := 0
	for i, rq := range reqs {
		text := rq.Content.text()
		c.inputs = append(c.inputs, text)
		n += len(text)
		if batch && strings.TrimPrefix(rq.Model, "models/") != c.modelID && problem == "" {
			// Each request of a batch names the batch's model.
			problem = "* BatchEmbedContentsRequest.requests[" + itoa(i) + "].model: The model in the request does not match the model in the batch.\n"
		}
		if text == "" && problem == "" {
			problem = "* BatchEmbedContentsRequest.requests[" + itoa(i) + "].content: contents must not be empty\n"
		}
		c.dims = rq.Dims
	}
	c.prompt = tokensOf(n)
	if c.prov.Key != "" && googleKey(r) != c.prov.Key {
		c.kind = Unauthorized
		f := e.failureOf(c)
		e.record(c, "auth", f.status)
		e.writeFailure(w, f)
		return
	}
	if problem != "" {
		f := gErr(400, problem, "INVALID_ARGUMENT")
		e.record(c, "invalid", f.status)
		e.writeFailure(w, f)
		return
	}
	m, f, ok := e.embedModel(c)
	if !ok {
		e.record(c, "unsupported", f.status)
		e.writeFailure(w, f)
		return
	}
	e.admit(c)
	e.finishRecord(c, e.runEmbed(w, r, c, func() int {
		values := func(text string) obj {
			return obj{{"values", cut(Vector(c.modelID, text, m.dims()), c.dims, false)}}
		}
		out := obj{{"embedding", values(c.inputs[0])}}
		if batch {
			list := make([]obj, len(c.inputs))
			for i, text := range c.inputs {
				list[i] = values(text)
			}
			out = obj{{"embeddings", list}}
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(http.StatusOK)
		w.Write(pretty(out))
		return http.StatusOK
	}))
}

// runEmbed answers an admitted embeddings call: its failure, or answer().
func (e *Emulator) runEmbed(w http.ResponseWriter, r *http.Request, c *call, answer func() int) int {
	ctx := r.Context()
	if c.kind == Hang || c.kind == StreamStall {
		e.hang(ctx, c)
		return 0
	}
	if !e.latency(ctx, c) {
		return 0
	}
	switch {
	case c.kind == Malformed:
		return writeMalformed(w)
	case c.kind.answers():
		return answer()
	}
	f := e.failureOf(c)
	e.writeFailure(w, f)
	return f.status
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
