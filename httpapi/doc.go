// Package httpapi is tollfree's HTTP face: the OpenAI-compatible API
// (POST /v1/chat/completions, GET /v1/models), the health check, and the
// mapping of every failure to the status code and error envelope an OpenAI
// client expects.
//
// It owns no step of the request's flow: a chat request is decoded, its
// chain looked up (once: the Gateway and the router take it as it is), its
// caller worked out as the operator configured it (callers.go, package
// caller: a gateway key, a signed visitor id, the client's address; 401 for
// a missing or unknown key), and the Gateway interface (*tollfree.Gateway)
// runs the caller check (a chain the key may not use, 403; a caller limit,
// 429 with Retry-After and X-RateLimit-* headers naming it; the gateway at
// its cap, 503), the cache, the routes and the fallback, exactly as for a
// Go program embedding tollfree. The answer is encoded whatever gave it
// (a route, the cache, a fallback; whole or streamed), with headers saying
// which: X-Tollfree-Route, X-Tollfree-Cache, X-Tollfree-Fallback.
//
// A stream that has sent nothing for the server's stream_keepalive (while
// the routes race for its first token, while a broken one waits for its
// continuation) gets an SSE comment (keepalive.go), so that proxies and
// clients do not cut it as idle (issue 13). The first one commits the
// status: from then on, a failure is written as an error event in the
// stream, never as a second status.
//
// Every request with a body must be application/json, on every endpoint
// (media.go), so that a web page cannot make a browser post to a gateway.
// A chain's hide_route holds in everything a caller reads (hide.go), and
// RequireToken guards what a gateway with keys must not show to all
// (access.go).
//
// Bad input never reaches a provider: a wrong method or content type, a body
// over the size limit, malformed JSON, a request without messages or naming
// no chain, or over the message or text limit, or a response_format or tool
// schema that cannot be checked (invalid_schema), each get a 4xx with a
// precise message in OpenAI's error envelope. A typed request that routes
// answered, but never as asked, is a 502 invalid_answer naming the
// violations' paths and keywords (issue 15).
//
// No request or client takes unbounded work (issue 10): the plan's limits
// are checked while the request is decoded, every write to the client has a
// deadline (a client that stops reading is dropped), and LimitListener caps
// the connections a server holds, all together and per client address,
// reclaiming idle ones first and answering a refused one with a 503 (issue
// 32: one client's idle connections locked everyone else out).
//
// What the client sees is chosen here (a public message); the cause goes to
// the log, never the raw upstream error.
package httpapi
