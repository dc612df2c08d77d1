package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/openai"
)

// Embedder is a Gateway that also answers embeddings (issue 33):
// *tollfree.Gateway is one. The Server serves POST /v1/embeddings only
// with one.
type Embedder interface {
	Embed(ctx context.Context, ch *config.Chain, c llm.EmbedCall) (*llm.EmbedAnswer, error)
}

// embeddings serves POST /v1/embeddings: OpenAI's request (input a string
// or an array of strings, encoding_format float or base64, dimensions,
// user) on a chain of embedding routes, and OpenAI's answer. The model
// field names the route that gave the vectors (the chain, when it hides
// its routes), so that a caller storing vectors knows which model made
// them.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		return
	}
	id := s.ids.Next()
	w.Header().Set(HeaderRequestID, id)
	emb, ok := s.gw.(Embedder)
	if !ok {
		writeError(w, http.StatusNotFound, "this gateway serves no embeddings", "invalid_request_error", "", "not_found")
		return
	}
	who, buf, ok := s.intake(w, r)
	if !ok {
		return
	}
	defer s.putBuf(buf)
	er, err := openai.DecodeEmbeddingsRequest(*buf, openai.Limits{ContentBytes: s.plan.Server.MaxContentBytes})
	if err != nil {
		writeRequestError(w, err)
		return
	}
	ch := s.lookupModel(w, er.Model, who)
	if ch == nil {
		return
	}
	if !ch.Embeddings {
		writeError(w, http.StatusBadRequest, "the model "+strconv.Quote(er.Model)+" is a chat chain; /v1/embeddings takes a chain of embedding models (GET /v1/models lists them)", "invalid_request_error", "model", "model_not_embeddings")
		return
	}
	who = who.Narrow(er.Request.User)
	a, err := emb.Embed(r.Context(), ch, llm.EmbedCall{Request: er.Request, Caller: who.Caller(), NoCache: noCache(r), ID: id})
	if err != nil {
		s.fail(w, r, ch, who, err)
		return
	}
	s.issueVisitor(w, r, who)
	servedHeaders(w.Header(), ch, a.ServedBy, a.Route, a.CacheMiss)
	out := s.getBuf()
	defer s.putBuf(out)
	*out = openai.AppendEmbeddings(*out, modelName(ch, a.Route), a.Vectors, er.Base64, a.Usage.PromptTokens)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(*out)))
	w.Write(*out)
}

// writeRequestError answers a request that did not decode: 400 with the
// decoder's parameter, message and code.
func writeRequestError(w http.ResponseWriter, err error) {
	var re *openai.RequestError
	if errors.As(err, &re) {
		writeError(w, http.StatusBadRequest, re.Message, "invalid_request_error", re.Param, re.Code)
		return
	}
	writeError(w, http.StatusBadRequest, err.Error(), "invalid_request_error", "", "invalid_request")
}

// chatChain refuses a chat request (chat completions, responses) to a
// chain of embedding models.
func chatChain(w http.ResponseWriter, ch *config.Chain) bool {
	if ch.Embeddings {
		writeError(w, http.StatusBadRequest, "the model "+strconv.Quote(ch.Name)+" is a chain of embedding models; send it to /v1/embeddings", "invalid_request_error", "model", "model_not_chat")
		return false
	}
	return true
}
