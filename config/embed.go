package config

import (
	"fmt"
	"strings"
)

// Embedding chains (issue 33). A chain whose routes are embedding models
// serves POST /v1/embeddings. Vectors from different models are not
// comparable, so by default its routes must all be one model (the same
// canonical name, as a same_model chain's are; seed 002): a failover then
// never changes what a stored vector means. A chain that compares vectors
// only within one request (clustering one batch, ranking a few passages
// against one query sent together) may say vectors: per_request, and list
// models of the same dimensions; each request's vectors then come from one
// route, which the answer's model names.

// The values of a chain's vectors.
const (
	VectorsSameModel  = "same_model"
	VectorsPerRequest = "per_request"
)

// validateEmbeddingRoutes checks what an embedding chain may list: only
// embedding routes (and a chat chain none), one model unless vectors is
// per_request, and then known, equal dimensions.
func (l *loader) validateEmbeddingRoutes(c *ChainConfig, report func(sub, format string, args ...any)) {
	type routeInfo struct {
		idx  int
		id   string
		spec modelSpec
	}
	var embed, chat []routeInfo
	for i, ref := range c.Routes {
		id := strings.TrimSpace(ref.Route)
		_, spec, msg := l.lookupRoute(id)
		if msg != "" {
			continue // reported by validateRoutes
		}
		ri := routeInfo{i, id, spec}
		if spec.embedding {
			embed = append(embed, ri)
		} else {
			chat = append(chat, ri)
		}
	}
	switch c.Vectors {
	case "", VectorsSameModel, VectorsPerRequest:
	default:
		report("vectors", "%q is neither same_model nor per_request", c.Vectors)
	}
	if len(embed) == 0 {
		if c.Vectors != "" {
			report("vectors", "only a chain of embedding models takes vectors:")
		}
		return
	}
	if len(chat) > 0 {
		report(fmt.Sprintf("routes[%d]", chat[0].idx), "%s is a chat model, but routes[%d] %s is an embedding model: a chain serves chat or embeddings, not both",
			chat[0].id, embed[0].idx, embed[0].id)
		return
	}
	if c.Assistant != nil {
		report("assistant", "a chain of embedding models cannot be a site assistant")
	}
	if fb := c.Fallback; fb != nil && (fb.Message != "" || fb.Search != "") {
		report("fallback", "a chain of embedding models has no fallback but the error: no text stands in for a vector")
	}
	first := embed[0]
	for _, ri := range embed[1:] {
		if c.Vectors == VectorsPerRequest {
			switch {
			case first.spec.dimensions == 0 || ri.spec.dimensions == 0:
				report(fmt.Sprintf("routes[%d]", ri.idx), "vectors: per_request needs every route's dimensions known; set dimensions: on the models of %s and %s", first.id, ri.id)
			case first.spec.dimensions != ri.spec.dimensions:
				report(fmt.Sprintf("routes[%d]", ri.idx), "vectors: per_request: %s writes %d dimensions, but routes[%d] %s writes %d", ri.id, ri.spec.dimensions, first.idx, first.id, first.spec.dimensions)
			}
			continue
		}
		if !strings.EqualFold(ri.spec.canonical, first.spec.canonical) {
			report(fmt.Sprintf("routes[%d]", ri.idx), "an embedding chain's routes must be one model, whose vectors compare: %s is model %s, but routes[%d] %s is model %s (set canonical: on the model if they are the same, or vectors: per_request to compare vectors only within a request)",
				ri.id, ri.spec.canonical, first.idx, first.id, first.spec.canonical)
		}
	}
}

// validateMedia checks the hosts media may be fetched from: bare host
// names, never a URL, a path or a port.
func (l *loader) validateMedia() {
	m := &l.f.Media
	for i, h := range m.FetchHosts {
		name := strings.TrimPrefix(h, ".")
		if name == "" || strings.ContainsAny(name, "/:@ *?#") {
			l.probs.addf(fmt.Sprintf("media.fetch_hosts[%d]", i), "%q is not a host name (write, say, images.example.com, or .example.com for its subdomains)", h)
		}
	}
	if m.MaxBytes <= 0 {
		l.probs.addf("media.max_bytes", "must be more than 0")
	}
	if *m.Timeout <= 0 {
		l.probs.addf("media.timeout", "must be more than 0 (write, say, 5s)")
	}
}
