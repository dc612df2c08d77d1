// Package openaicompat is the provider adapter for every upstream that
// speaks OpenAI's chat completions API: Groq, Cerebras, OpenRouter, NVIDIA,
// Mistral, GitHub Models, Cloudflare's /ai/v1, Ollama and any other. It
// sends one llm.Request to one model (POST BaseURL+"/chat/completions"),
// reads the answer or the event stream, and reports every failure as a
// *failure.UpstreamError with the status, header and body the failure
// classifier needs; it never decides what a failure means.
//
// Dialect differences it absorbs: reasoning in message.reasoning or
// reasoning_content or a <think> block, usage in "usage" or Groq's x_groq,
// cumulative usage on every chunk (Gemini's OpenAI endpoint), keep-alive
// comments (OpenRouter), "data:" without a space, CRLF framing, mid-stream
// error events, a missing [DONE], and a JSON answer to a stream request.
//
// A message marked llm.Message.Prefix (the partial answer a prefix
// continuation hands back) is sent in the provider's own form: with
// "prefix": true for Mistral, the one provider that takes that flag (and
// refuses a trailing assistant message without it); as a plain trailing
// assistant message, the prefill, for every other flavor, since Groq and
// Cerebras refuse a message field they do not know (issue 13).
package openaicompat

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/internal/sse"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/openai"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/secret"
)

// MaxAnswer is the largest 2xx body Chat reads; a longer one is malformed.
const MaxAnswer = 8 << 20

// maxLine is the longest SSE line a stream accepts.
const maxLine = 4 << 20

// Options configure a Client. The zero value of each field works except
// BaseURL.
type Options struct {
	// Name is the provider's name as configured ("groq"); it goes into
	// every UpstreamError.
	Name string
	// Flavor names the provider's quirks for the failure classifier
	// (groq, openrouter, mistral... or generic); see failure.UpstreamError.
	Flavor string
	// BaseURL is the API root without a trailing slash
	// ("https://api.groq.com/openai/v1"); requests go to
	// BaseURL+"/chat/completions".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <APIKey>" when not empty.
	APIKey string
	// Headers are extra request headers (OpenRouter's HTTP-Referer...).
	Headers map[string]string
	// Client's Transport sends the requests (http.DefaultTransport when
	// it has none). Default: a client of its own on NewTransport
	// (keep-alives, 256 idle connections per host, HTTP/2 when the server
	// offers it, no timeouts: the caller's ctx bounds each call). Pass one
	// Client to several adapters to share connections. Each request goes
	// to the Transport as it is, as a reverse proxy sends it: the Client's
	// Jar, CheckRedirect and Timeout are not used, and a redirect is not
	// followed, since an API that answers a POST with 3xx has the wrong
	// base URL (failure.BadConfig says so).
	Client *http.Client
	// StreamUsage asks every stream for usage (stream_options.include_usage)
	// even when the caller did not, so that token budgets count real
	// numbers. Default false: some upstreams refuse stream_options.
	StreamUsage bool
	// Secrets are scrubbed from every error body and transport error
	// before the UpstreamError leaves the Client, so that a key the
	// provider quotes back ("Incorrect API key provided: ...") is never
	// classified, stored or shown. Default: APIKey alone
	// (config.Plan.Secrets holds every configured secret).
	Secrets *secret.Set
}

// Client calls one OpenAI-compatible provider. It is safe for concurrent
// use.
type Client struct {
	o   Options
	url string
	u   *url.URL
	// errURL is url as errors quote it: without a password.
	errURL string
	hc     *http.Client
	rt     http.RoundTripper // hc's Transport
	// headers are the request headers, for a whole answer ([0]) and a
	// stream ([1]): the same at every call, so made once, and only read
	// (a Transport does not change a request's Header).
	headers [2]http.Header
	// bufs holds *bytes.Buffer for reading answers; readers holds
	// *sse.Reader for streams.
	bufs    sync.Pool
	readers sync.Pool
}

// New returns a Client for the provider o describes.
func New(o Options) *Client {
	c := &Client{o: o, url: strings.TrimRight(o.BaseURL, "/") + "/chat/completions", hc: o.Client}
	if c.o.Secrets == nil {
		c.o.Secrets = secret.New(o.APIKey)
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: NewTransport()}
	}
	c.rt = c.hc.Transport
	if c.rt == nil {
		c.rt = http.DefaultTransport
	}
	// A base URL that does not parse fails each call, as a request
	// built from it would.
	c.u, _ = url.Parse(c.url)
	c.errURL = c.url
	if c.u != nil {
		c.errURL = c.u.Redacted()
	}
	for i, accept := range []string{"application/json", "text/event-stream"} {
		h := http.Header{"Content-Type": {"application/json"}, "Accept": {accept}}
		switch {
		case o.APIKey != "":
			h["Authorization"] = []string{"Bearer " + o.APIKey}
		case c.u != nil && c.u.User != nil:
			// user:password@ in the base URL, as http.Client sends it.
			pw, _ := c.u.User.Password()
			h["Authorization"] = []string{"Basic " + base64.StdEncoding.EncodeToString([]byte(c.u.User.Username()+":"+pw))}
		}
		for k, v := range o.Headers {
			h.Set(k, v)
		}
		c.headers[i] = h
	}
	c.bufs.New = func() any { return new(bytes.Buffer) }
	c.readers.New = func() any { return sse.NewReader(nil, maxLine) }
	return c
}

// NewTransport returns the tuned transport a Client uses by default:
// keep-alives, 1024 idle connections (256 per host) kept 90 s, HTTP/2 when
// the server offers it, 10 s to dial and for the TLS handshake, the
// environment's proxy, and no response timeouts (each call's ctx bounds
// it). Build one and pass it, in an http.Client, to every adapter that
// should share connections.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// CloseIdleConnections closes the idle connections of the Client's
// transport (at shutdown or when the configuration is replaced).
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// fail builds the UpstreamError of a call, with every secret scrubbed from
// its body and error: this is where a provider's words enter tollfree.
func (c *Client) fail(model string, status int, h http.Header, body []byte, err error) *failure.UpstreamError {
	if len(body) > failure.MaxBody {
		body = body[:failure.MaxBody]
	}
	return &failure.UpstreamError{
		Provider: c.o.Name, Flavor: c.o.Flavor, Model: model,
		Status: status, Header: h, Body: bytes.Clone(c.o.Secrets.ScrubBytes(body)), Err: c.o.Secrets.Err(err),
	}
}

// send posts the request and returns the response once its headers are
// in. A non-2xx status is returned as an UpstreamError with the body read
// and closed.
func (c *Client) send(ctx context.Context, call provider.Call, stream bool) (*http.Response, error) {
	req := *call.Request // a shallow copy: the call's request is shared
	req.Stream = stream
	if stream && c.o.StreamUsage {
		req.IncludeUsage = true
	}
	if !stream {
		req.IncludeUsage = false
	}
	if c.o.Flavor != flavorMistral {
		req.Messages = plainPrefill(req.Messages)
	}
	n := req.TextLen()
	body := openai.AppendRequest(make([]byte, 0, 512+n+n/8), call.Model, &req, call.Extra)
	hr, err := c.request(ctx, body, stream)
	if err != nil {
		return nil, c.fail(call.Model, 0, nil, nil, fmt.Errorf("build request: %w", err))
	}
	resp, err := c.rt.RoundTrip(hr)
	if err != nil {
		return nil, c.fail(call.Model, 0, nil, nil, &url.Error{Op: "Post", URL: c.errURL, Err: err})
	}
	if resp.Body == nil { // a RoundTripper of a test's may leave it
		resp.Body = http.NoBody
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		buf := c.getBuf()
		defer c.bufs.Put(buf)
		// A read error leaves what was read: the status says enough.
		_, _ = buf.ReadFrom(io.LimitReader(resp.Body, failure.MaxBody))
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, buf.Bytes(), nil)
	}
	return resp, nil
}

// request is the POST of body for send: http.NewRequestWithContext's
// request, less its costs at every call (parsing the URL, making the
// headers) and, sent with the Transport's RoundTrip, less http.Client's
// (a copy of the headers for redirects). The body is a *bytes.Reader, as
// there: the Transport writes it with the headers in one write, and
// GetBody lets it send it again on a keep-alive connection that turned
// out closed.
func (c *Client) request(ctx context.Context, body []byte, stream bool) (*http.Request, error) {
	if c.u == nil || c.u.Host == "" {
		_, err := url.Parse(c.url)
		if err == nil {
			err = fmt.Errorf("base URL %q has no host", c.o.BaseURL)
		}
		return nil, err
	}
	h := c.headers[0]
	if stream {
		h = c.headers[1]
	}
	r := &http.Request{
		Method: http.MethodPost, URL: c.u, Host: strings.TrimSuffix(c.u.Host, ":"), Header: h,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		GetBody: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
	}
	return r.WithContext(ctx), nil
}

// flavorMistral is the flavor whose API takes "prefix": true on an
// assistant message.
const flavorMistral = "mistral"

// plainPrefill returns msgs with no message marked Prefix: a copy when one
// was, msgs itself otherwise (the call's request is shared).
func plainPrefill(msgs []llm.Message) []llm.Message {
	for i := range msgs {
		if msgs[i].Prefix {
			out := append([]llm.Message(nil), msgs...)
			for j := range out {
				out[j].Prefix = false
			}
			return out
		}
	}
	return msgs
}

func (c *Client) getBuf() *bytes.Buffer {
	buf := c.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	return buf
}

// Chat sends call as one non-streamed request and returns the answer, with
// the response header (rate-limit headers) in Response.Header. Every error
// is a *failure.UpstreamError: Status 0 with Err set for a transport or
// context error; the status and body for a non-2xx answer; Status 2xx with
// Err wrapping failure.ErrMalformed (a body that does not parse),
// failure.ErrEmptyAnswer (no content) or the read error (a body cut short,
// or ctx ending during a stalled read). ctx bounds the whole call,
// reading the body included.
func (c *Client) Chat(ctx context.Context, call provider.Call) (*llm.Response, error) {
	resp, err := c.send(ctx, call, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r, err := c.readAnswer(resp, call.Model)
	if err != nil {
		return nil, err
	}
	r.Header = resp.Header
	return r, nil
}

// Stream sends call as a streamed request and returns once the response
// headers are in; a non-2xx status is an UpstreamError at once. The
// returned llm.Stream is an *EventStream; see its Next for what it yields.
// ctx bounds the whole stream: when it ends, a blocked Next returns.
func (c *Client) Stream(ctx context.Context, call provider.Call) (llm.Stream, error) {
	resp, err := c.send(ctx, call, true)
	if err != nil {
		return nil, err
	}
	s := &EventStream{c: c, model: call.Model, resp: resp}
	if isJSON(resp.Header.Get("Content-Type")) {
		// The upstream ignored "stream": read the whole answer and play it
		// back as one chunk.
		r, err := c.readAnswer(resp, call.Model)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		s.queue = append(s.queue, llm.Chunk{Role: "assistant", Content: r.Content, Reasoning: r.Reasoning, ToolCalls: r.ToolCalls, FinishReason: r.FinishReason})
		if r.UsageKnown {
			s.queue = append(s.queue, llm.Chunk{Usage: &r.Usage})
		}
		s.err = io.EOF
		return s, nil
	}
	s.rd = c.readers.Get().(*sse.Reader)
	s.rd.Reset(resp.Body)
	return s, nil
}

// readAnswer reads and decodes the JSON answer of a 2xx response.
func (c *Client) readAnswer(resp *http.Response, model string) (*llm.Response, error) {
	buf := c.getBuf()
	defer c.bufs.Put(buf)
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, MaxAnswer+1)); err != nil {
		return nil, c.fail(model, resp.StatusCode, resp.Header, buf.Bytes(), fmt.Errorf("read answer: %w", err))
	}
	if buf.Len() > MaxAnswer {
		return nil, c.fail(model, resp.StatusCode, resp.Header, buf.Bytes(),
			fmt.Errorf("read answer: longer than %d bytes: %w", MaxAnswer, failure.ErrMalformed))
	}
	r, err := openai.DecodeResponse(buf.Bytes())
	if err != nil {
		return nil, c.fail(model, resp.StatusCode, resp.Header, buf.Bytes(), err)
	}
	return r, nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}
