// Package gemini is the adapter for Google's native Gemini API
// (generateContent and streamGenerateContent?alt=sse). It owns the
// translation between tollfree's provider-neutral llm types and Gemini's
// wire format, both ways, and reports every failure as a
// *failure.UpstreamError with Flavor "gemini" so that one classifier decides
// what it means.
//
// The native API is used rather than Gemini's OpenAI-compatible endpoint
// because only the native one takes a thinkingConfig reliably, returns
// thought summaries as separate parts, and answers errors as plain objects
// (docs/PROVIDERS.md, "Gemini, native API").
//
// Translation of a request, in short:
//
//   - system and developer messages become systemInstruction (joined with a
//     blank line); user stays user; assistant becomes model. A user
//     message's content parts go as parts: text, images as inlineData
//     (data: URLs; an https URL only from a host the operator allows, see
//     Fetch), input_audio and data: URL files as inlineData (parts.go,
//     media.go). An assistant's tool_calls become functionCall parts (with
//     the thought signature Google documents for replayed calls, on models
//     that check one), and tool messages functionResponse parts naming the
//     call's function (issue 33). Empty messages are skipped, and
//     consecutive messages of one role are merged, their texts joined by a
//     blank line, because Gemini wants turns to alternate. A request made
//     only of system messages sends their text as the one user turn.
//   - The caller's function tools become functionDeclarations, parameters
//     converted as responseJsonSchema is; tool_choice auto, none, required
//     and a named function become functionCallingConfig AUTO, NONE, ANY
//     and ANY with allowedFunctionNames (tools.go); frequency_penalty and
//     presence_penalty their generationConfig fields.
//   - Nothing is dropped silently: what has no place in Gemini's API (a
//     field it has no counterpart for, a tool that is not a function, an
//     image by URL it may not fetch, a part type it does not take) makes
//     the request one this adapter cannot carry: Uncarried names it, the
//     router skips the route, and Chat and Stream make no call
//     (failure.ErrCannotCarry). Hints for OpenAI's own servers (store,
//     metadata, service_tier...) ask nothing of the answer and are left
//     out.
//   - An assistant message with Prefix set must be the last message: it is
//     then sent as the last "model" turn, which Gemini continues rather
//     than answers.
//   - MaxTokens, Temperature, TopP, Stop and Seed map to generationConfig's
//     maxOutputTokens, temperature, topP, stopSequences and seed.
//     response_format json_object sets responseMimeType application/json;
//     json_schema also sends the schema as responseJsonSchema (JSON
//     Schema, not the OpenAPI subset of responseSchema), converted to the
//     keywords Gemini takes (schema.go: const becomes a one-value enum,
//     what it cannot enforce is dropped; SchemaGaps names it).
//   - ReasoningEffort low/medium/high/none becomes a thinkingConfig for the
//     model's family unless the route's Extra sets one: gemini-2.5
//     thinkingBudget 1024/8192/24576/0, gemini-3.x thinkingLevel
//     LOW/MEDIUM/HIGH/MINIMAL; Pro models, which cannot stop thinking, get
//     budget 128 or LOW for none; other models (Gemma, 2.0) get none.
//   - The route's Extra keys name generationConfig fields, except
//     safetySettings, tools, toolConfig and cachedContent, which go at the
//     top level; a generationConfig key merges its fields in. A JSON null
//     removes the field. The route's tools go before the caller's function
//     declarations.
//
// Translation of an answer: the first candidate's text parts are joined
// into Content and its "thought" parts into Reasoning; its functionCall
// parts become ToolCalls, with Gemini's id or one made from the response's
// id and the call's place, the same whole and streamed, and a finish of
// STOP then becomes tool_calls. An answer with neither text nor a call is
// empty. finishReason STOP is stop, MAX_TOKENS length, the safety family
// (SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_SAFETY)
// content_filter, anything else stop. Thoughts count as completion tokens
// and as ReasoningTokens. A streamed answer's usage is cumulative on every
// event: only the last is passed, on the chunk that carries the finish.
package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
	"github.com/tollfree/tollfree/secret"
)

// Flavor is the UpstreamError.Flavor of every error this package returns.
const Flavor = "gemini"

const (
	// maxBody caps a non-streamed answer; a larger one is malformed.
	maxBody = 32 << 20
	// maxEventLine caps one SSE line (one streamed GenerateContentResponse).
	maxEventLine = 8 << 20
)

// Options configures a Client. The zero value is not useful: BaseURL and
// APIKey are needed to reach Gemini.
type Options struct {
	// Name is the provider's name in tollfree's config ("gemini"); it is
	// UpstreamError.Provider.
	Name string
	// BaseURL is the API root, e.g.
	// https://generativelanguage.googleapis.com/v1beta. A trailing slash is
	// ignored.
	BaseURL string
	// APIKey is sent as the x-goog-api-key header (never in the URL, so it
	// cannot leak into an error string). Empty sends no key.
	APIKey string
	// Headers are extra request headers, set before the key.
	Headers map[string]string
	// Client's Transport sends the requests (http.DefaultTransport when it
	// has none). Default: a client of its own with a tuned transport
	// shared by all of this Client's calls. Each request goes to the
	// Transport as it is: the Client's Jar, CheckRedirect and Timeout are
	// not used (deadlines come from ctx), and a redirect is not followed,
	// since an API that answers a POST with 3xx has the wrong base URL
	// (failure.BadConfig says so).
	Client *http.Client
	// Fetch lets the adapter fetch images a request gives by URL, from
	// the hosts it allows; the zero value fetches none (media.go).
	Fetch Fetch
	// Secrets are scrubbed from every error body and transport error
	// before the UpstreamError leaves the Client, so that a key the
	// provider quotes back is never classified, stored or shown. Default:
	// APIKey alone (config.Plan.Secrets holds every configured secret).
	Secrets *secret.Set
}

// Client calls one Gemini account. It is safe for concurrent use.
type Client struct {
	name    string
	baseURL string
	apiKey  string
	headers map[string]string
	hc      *http.Client
	rt      http.RoundTripper // hc's Transport
	secrets *secret.Set
	fetch   *Fetch
}

// New returns a Client for o. It copies o.Headers.
func New(o Options) *Client {
	c := &Client{
		name:    o.Name,
		baseURL: strings.TrimRight(o.BaseURL, "/"),
		apiKey:  o.APIKey,
		headers: make(map[string]string, len(o.Headers)),
		hc:      o.Client,
		secrets: o.Secrets,
		fetch:   &o.Fetch,
	}
	if c.secrets == nil {
		c.secrets = secret.New(o.APIKey)
	}
	for k, v := range o.Headers {
		c.headers[k] = v
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: newTransport()}
	}
	c.rt = c.hc.Transport
	if c.rt == nil {
		c.rt = http.DefaultTransport
	}
	return c
}

// newTransport is http.DefaultTransport's settings with more idle
// connections per host: every call of a Client goes to one host, and a
// gateway under load would otherwise redial (and redo TLS) for most calls.
// There is no response-header timeout here: the router bounds each attempt
// with its ctx.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Chat asks for a whole answer: POST {BaseURL}/models/{model}:generateContent.
// Every error is a *failure.UpstreamError: Status 0 with Err set when no
// response came; the upstream's status, header and body (at most 64 KiB)
// for a non-2xx; Status 200 with Err failure.ErrRefused, ErrEmptyAnswer or
// ErrMalformed when a 200 carries no usable answer.
func (c *Client) Chat(ctx context.Context, call provider.Call) (*llm.Response, error) {
	resp, err := c.post(ctx, call, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, nil, fmt.Errorf("gemini: read response: %w", err))
	}
	if len(body) > maxBody {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, body[:failure.MaxBody],
			fmt.Errorf("gemini: response larger than %d bytes: %w", maxBody, failure.ErrMalformed))
	}
	r, err := decodeResponse(body)
	if err != nil {
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, capBody(body), err)
	}
	r.Header = resp.Header
	return r, nil
}

// Stream asks for a streamed answer:
// POST {BaseURL}/models/{model}:streamGenerateContent?alt=sse. It returns
// once the response headers are in; a non-2xx is returned as Chat returns
// it. The stream is bound to ctx: cancelling ctx breaks a blocked Next.
// The caller must Close the stream.
func (c *Client) Stream(ctx context.Context, call provider.Call) (llm.Stream, error) {
	resp, err := c.post(ctx, call, true)
	if err != nil {
		return nil, err
	}
	return newStream(c, call.Model, resp), nil
}

// post sends call and returns a 2xx response, or the error for anything else.
func (c *Client) post(ctx context.Context, call provider.Call, stream bool) (*http.Response, error) {
	var media map[string]*wireBlob
	if call.Request != nil {
		// The router skips a request this adapter cannot carry; a caller
		// that did not ask first gets the same answer, and no call.
		if why := c.Uncarried(call.Request); why != "" {
			return nil, c.fail(call.Model, 0, nil, nil, fmt.Errorf("%w: %s", failure.ErrCannotCarry, why))
		}
		if call.Request.Needs().Has(llm.NeedMediaURL) {
			var err error
			if media, err = c.fetch.fetchMedia(ctx, call.Request); err != nil {
				return nil, c.fail(call.Model, 0, nil, nil, fmt.Errorf("%w: %w", failure.ErrCannotCarry, err))
			}
		}
	}
	body, err := json.Marshal(buildRequestWith(call, media))
	if err != nil {
		// Only an invalid json.RawMessage (route Extra, response_format) gets here.
		return nil, c.fail(call.Model, 0, nil, nil, fmt.Errorf("gemini: encode request: %w", err))
	}
	u := c.baseURL + "/models/" + url.PathEscape(strings.TrimPrefix(call.Model, "models/"))
	if stream {
		u += ":streamGenerateContent?alt=sse"
	} else {
		u += ":generateContent"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, c.fail(call.Model, 0, nil, nil, fmt.Errorf("gemini: new request: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
		// A compressed event stream may be buffered on its way: ask for none.
		req.Header.Set("Accept-Encoding", "identity")
	} else {
		req.Header.Set("Accept", "application/json")
	}
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
	if resp.Body == nil { // a RoundTripper of a test's may leave it
		resp.Body = http.NoBody
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, failure.MaxBody))
		return nil, c.fail(call.Model, resp.StatusCode, resp.Header, b, nil)
	}
	return resp, nil
}

// fail builds the UpstreamError for one failed call, with every secret
// scrubbed from its body and error: this is where a provider's words enter
// tollfree.
func (c *Client) fail(model string, status int, h http.Header, body []byte, err error) error {
	body, err = c.secrets.ScrubBytes(body), c.secrets.Err(err)
	return &failure.UpstreamError{
		Provider: c.name,
		Flavor:   Flavor,
		Model:    model,
		Status:   status,
		Header:   h,
		Body:     body,
		Err:      err,
	}
}

// capBody returns at most failure.MaxBody bytes of b (the cap the
// classifier expects), copied.
func capBody(b []byte) []byte {
	if len(b) > failure.MaxBody {
		b = b[:failure.MaxBody]
	}
	return bytes.Clone(b)
}
