package gemini

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tollfree/tollfree/llm"
)

// Media (issue 33). Gemini's generateContent takes images, audio and files
// inline (inlineData: base64 and a MIME type), not by URL. A data: URL is
// carried as it is. An http(s) URL would have to be fetched by the gateway,
// a request to an address the caller chose, so it is fetched only when the
// operator allows its host (Options.Fetch), within a size and a time
// limit; otherwise the request is one this adapter cannot carry
// (Uncarried), and the router skips its routes for it.

// Fetch lets the adapter fetch media a request gives by URL. The zero
// value fetches nothing.
type Fetch struct {
	// Allows reports whether a URL's host may be fetched from; nil allows
	// none.
	Allows func(host string) bool
	// MaxBytes caps one file; Timeout caps one fetch. Defaults 5 MiB, 5s.
	MaxBytes int64
	Timeout  time.Duration
	// Client fetches; default a client of its own that follows no
	// redirect (a redirect could lead anywhere).
	Client *http.Client
}

// allowed reports whether raw, an http(s) URL, may be fetched.
func (f *Fetch) allowed(raw string) bool {
	if f == nil || f.Allows == nil {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.User != nil {
		return false
	}
	return f.Allows(u.Hostname())
}

// The MIME types Gemini takes inline (https://ai.google.dev/gemini-api/docs/image-understanding,
// audio, document-processing).
var inlineTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/webp": true, "image/heic": true, "image/heif": true,
	"audio/wav": true, "audio/mp3": true, "audio/mpeg": true, "audio/aiff": true, "audio/aac": true,
	"audio/ogg": true, "audio/flac": true,
	"application/pdf": true, "text/plain": true,
}

// dataURL reads a data: URL into inlineData; ok is false for anything else,
// or for a type Gemini does not take inline.
func dataURL(s string) (*wireBlob, bool) {
	rest, ok := cutPrefixFold(s, "data:")
	if !ok {
		return nil, false
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, false
	}
	isB64 := false
	if m, ok := strings.CutSuffix(meta, ";base64"); ok {
		meta, isB64 = m, true
	}
	mt, _, err := mime.ParseMediaType(meta)
	if err != nil || !inlineTypes[mt] {
		return nil, false
	}
	if !isB64 {
		raw, err := url.PathUnescape(data)
		if err != nil {
			return nil, false
		}
		data = base64.StdEncoding.EncodeToString([]byte(raw))
	}
	return &wireBlob{MimeType: mt, Data: data}, true
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// audioMIME is the MIME type of an OpenAI input_audio format.
func audioMIME(format string) (string, bool) {
	switch strings.ToLower(format) {
	case "wav":
		return "audio/wav", true
	case "mp3":
		return "audio/mp3", true
	case "aac", "ogg", "flac", "aiff":
		return "audio/" + strings.ToLower(format), true
	}
	return "", false
}

// errFetch is wrapped by a fetch that failed.
var errFetch = errors.New("media fetch failed")

// fetchMedia fetches the remote images of req that f allows, by URL. It is
// called only for a request Uncarried passed.
func (f *Fetch) fetchMedia(ctx context.Context, req *llm.Request) (map[string]*wireBlob, error) {
	var out map[string]*wireBlob
	for i := range req.Messages {
		if len(req.Messages[i].Parts) == 0 {
			continue
		}
		parts, err := llm.ParseParts(req.Messages[i].Parts)
		if err != nil {
			continue
		}
		for j, p := range parts {
			if p.Type != llm.PartImage || !p.Remote() || out[p.URL] != nil {
				continue
			}
			b, err := f.fetch(ctx, p.URL)
			if err != nil {
				return nil, fmt.Errorf("messages[%d].content[%d]: %w", i, j, err)
			}
			if out == nil {
				out = map[string]*wireBlob{}
			}
			out[p.URL] = b
		}
	}
	return out, nil
}

// fetch gets one file, within the size and time limits. Its errors name
// the status or the limit, never the URL (a caller's text).
func (f *Fetch) fetch(ctx context.Context, raw string) (*wireBlob, error) {
	timeout, limit := f.Timeout, f.MaxBytes
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if limit <= 0 {
		limit = 5 << 20
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: the URL does not parse", errFetch)
	}
	hc := f.Client
	if hc == nil {
		hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: no answer within %s", errFetch, timeout)
		}
		return nil, fmt.Errorf("%w: the host did not answer", errFetch)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: HTTP %d", errFetch, resp.StatusCode)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if !inlineTypes[mt] {
		return nil, fmt.Errorf("%w: type %q is not an image Gemini takes", errFetch, mt)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: %d bytes, over the limit of %d", errFetch, resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading it broke off", errFetch)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w: over the limit of %d bytes", errFetch, limit)
	}
	return &wireBlob{MimeType: mt, Data: base64.StdEncoding.EncodeToString(body)}, nil
}
